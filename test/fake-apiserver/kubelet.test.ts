import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isJsonObject } from './json.js';
import type { JsonObject, JsonValue } from './json.js';
import { FakeKubelet, fakeImageId } from './kubelet.js';
import type { Schedule } from './kubelet.js';
import { NAMESPACES, PODS } from './resources.js';
import { ObjectStore } from './store.js';
import { PATCH_TYPES } from './types.js';
import type { KubeObject } from './types.js';
import { waitForStore } from './wait.js';

/** A schedule that runs nothing until the test says so. */
function manualSchedule(): { schedule: Schedule; pending: () => number; flush: () => void } {
  const tasks = new Set<() => void>();
  return {
    schedule: (run) => {
      tasks.add(run);
      return () => tasks.delete(run);
    },
    pending: () => tasks.size,
    flush: () => {
      for (const run of [...tasks]) {
        tasks.delete(run);
        run();
      }
    },
  };
}

function newStore(): ObjectStore {
  const store = new ObjectStore();
  store.create(NAMESPACES, '', { metadata: { name: 'default' } });
  return store;
}

function pod(name: string, extraSpec: JsonObject = {}): KubeObject {
  return {
    metadata: { name },
    spec: {
      containers: [
        { name: 'nginx', image: 'nginx:1.25' },
        { name: 'logtail', image: 'logtail:0.16.16' },
      ],
      ...extraSpec,
    },
  };
}

function status(store: ObjectStore, name: string): JsonObject {
  const s = store.get(PODS, 'default', name)?.['status'];
  return isJsonObject(s) ? s : {};
}

function containerStatus(store: ObjectStore, pod: string, container: string): JsonObject {
  const list = status(store, pod)['containerStatuses'];
  const found = Array.isArray(list)
    ? list.find((c) => isJsonObject(c) && c['name'] === container)
    : undefined;
  return isJsonObject(found) ? found : {};
}

function conditionStatus(store: ObjectStore, pod: string, type: string): JsonValue | undefined {
  const list = status(store, pod)['conditions'];
  const found = Array.isArray(list)
    ? list.find((c) => isJsonObject(c) && c['type'] === type)
    : undefined;
  return isJsonObject(found) ? found['status'] : undefined;
}

function setImage(store: ObjectStore, name: string, index: number, image: string): void {
  store.patch(PODS, 'default', name, {
    type: PATCH_TYPES.json,
    body: [{ op: 'replace', path: `/spec/containers/${index}/image`, value: image }],
  });
}

describe('FakeKubelet', () => {
  it('starts a new pod after the delay: Running, Ready, a status for every container', () => {
    const store = newStore();
    const clock = manualSchedule();
    const kubelet = new FakeKubelet(store, { schedule: clock.schedule });
    store.create(PODS, 'default', pod('a'));
    assert.equal(status(store, 'a')['phase'], 'Pending', 'nothing before the delay');
    assert.equal(kubelet.pendingPods(), 1);
    clock.flush();
    assert.equal(status(store, 'a')['phase'], 'Running');
    assert.equal(conditionStatus(store, 'a', 'Ready'), 'True');
    assert.equal(conditionStatus(store, 'a', 'ContainersReady'), 'True');
    const logtail = containerStatus(store, 'a', 'logtail');
    assert.equal(logtail['image'], 'logtail:0.16.16');
    assert.equal(logtail['imageID'], fakeImageId('logtail:0.16.16'));
    assert.equal(logtail['ready'], true);
    assert.equal(logtail['restartCount'], 0);
    assert.equal(clock.pending(), 0, 'its own write schedules nothing');
    kubelet.stop();
  });

  it('runs a changed image in a restarted container and leaves the other containers alone', () => {
    const store = newStore();
    const clock = manualSchedule();
    const kubelet = new FakeKubelet(store, { schedule: clock.schedule });
    store.create(PODS, 'default', pod('a'));
    clock.flush();
    const nginxBefore = containerStatus(store, 'a', 'nginx');
    setImage(store, 'a', 1, 'logtail:0.16.18');
    assert.equal(
      containerStatus(store, 'a', 'logtail')['image'],
      'logtail:0.16.16',
      'old image until the kubelet reports',
    );
    clock.flush();
    const logtail = containerStatus(store, 'a', 'logtail');
    assert.equal(logtail['image'], 'logtail:0.16.18');
    assert.equal(logtail['imageID'], fakeImageId('logtail:0.16.18'));
    assert.notEqual(logtail['imageID'], fakeImageId('logtail:0.16.16'));
    assert.equal(logtail['restartCount'], 1);
    assert.equal(logtail['ready'], true);
    assert.deepEqual(containerStatus(store, 'a', 'nginx'), nginxBefore);
    assert.equal(conditionStatus(store, 'a', 'Ready'), 'True');
    kubelet.stop();
  });

  it('keeps a container with a failing image not ready (ImagePullBackOff) until healed', () => {
    const store = newStore();
    const clock = manualSchedule();
    const kubelet = new FakeKubelet(store, { schedule: clock.schedule });
    store.create(PODS, 'default', pod('a'));
    clock.flush();
    kubelet.failImage('logtail:broken');
    setImage(store, 'a', 1, 'logtail:broken');
    clock.flush();
    const failing = containerStatus(store, 'a', 'logtail');
    assert.equal(failing['ready'], false);
    assert.equal(failing['restartCount'], 0);
    assert.deepEqual(failing['state'], {
      waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "logtail:broken"' },
    });
    assert.equal(conditionStatus(store, 'a', 'Ready'), 'False');
    assert.equal(conditionStatus(store, 'a', 'ContainersReady'), 'False');
    assert.equal(status(store, 'a')['phase'], 'Running');
    assert.equal(containerStatus(store, 'a', 'nginx')['ready'], true);
    kubelet.healImage('logtail:broken');
    clock.flush();
    assert.equal(containerStatus(store, 'a', 'logtail')['ready'], true);
    assert.equal(conditionStatus(store, 'a', 'Ready'), 'True');
    kubelet.stop();
  });

  it('counts a restart for an image that crashes (CrashLoopBackOff)', () => {
    const store = newStore();
    const clock = manualSchedule();
    const kubelet = new FakeKubelet(store, { schedule: clock.schedule });
    kubelet.failImage('logtail:crash', 'CrashLoopBackOff');
    store.create(PODS, 'default', pod('a'));
    clock.flush();
    setImage(store, 'a', 1, 'logtail:crash');
    clock.flush();
    const crashing = containerStatus(store, 'a', 'logtail');
    assert.equal(crashing['ready'], false);
    assert.equal(crashing['restartCount'], 1);
    assert.equal(crashing['imageID'], fakeImageId('logtail:crash'));
    assert.equal(conditionStatus(store, 'a', 'Ready'), 'False');
    kubelet.stop();
  });

  it('keeps a crash-looping container restarting, one back-off after its last crash', () => {
    const store = newStore();
    const clock = manualSchedule();
    let now = new Date('2026-07-02T10:00:00Z');
    const kubelet = new FakeKubelet(store, {
      schedule: clock.schedule,
      now: () => now,
      crashLoopBackoffSeconds: 10,
    });
    kubelet.failImage('logtail:crash', 'CrashLoopBackOff');
    store.create(PODS, 'default', pod('a'));
    clock.flush();
    setImage(store, 'a', 1, 'logtail:crash');
    clock.flush();
    const first = containerStatus(store, 'a', 'logtail');
    assert.equal(first['restartCount'], 1);
    assert.deepEqual(first['state'], {
      waiting: {
        reason: 'CrashLoopBackOff',
        message: 'back-off restarting failed container logtail',
      },
    });
    assert.deepEqual(first['lastState'], {
      terminated: {
        exitCode: 1,
        reason: 'Error',
        startedAt: '2026-07-02T10:00:00Z',
        finishedAt: '2026-07-02T10:00:00Z',
      },
    });
    assert.equal(kubelet.pendingPods(), 0, 'the next crash is not a report it is behind on');
    assert.equal(clock.pending(), 1, 'the next crash is scheduled');
    // The crash timer fires, then the report it queues.
    const tick = (): void => {
      clock.flush();
      clock.flush();
    };
    now = new Date('2026-07-02T10:00:09Z');
    tick();
    assert.equal(containerStatus(store, 'a', 'logtail')['restartCount'], 1, 'within the back-off');
    now = new Date('2026-07-02T10:00:10Z');
    tick();
    assert.equal(containerStatus(store, 'a', 'logtail')['restartCount'], 2);
    now = new Date('2026-07-02T10:00:20Z');
    tick();
    const third = containerStatus(store, 'a', 'logtail');
    assert.equal(third['restartCount'], 3);
    assert.equal(third['ready'], false);
    assert.deepEqual(third['lastState'], {
      terminated: {
        exitCode: 1,
        reason: 'Error',
        startedAt: '2026-07-02T10:00:20Z',
        finishedAt: '2026-07-02T10:00:20Z',
      },
    });
    assert.equal(conditionStatus(store, 'a', 'Ready'), 'False');
    assert.equal(containerStatus(store, 'a', 'nginx')['restartCount'], 0, 'the app keeps running');
    setImage(store, 'a', 1, 'logtail:fixed');
    tick();
    const fixed = containerStatus(store, 'a', 'logtail');
    assert.equal(fixed['restartCount'], 4);
    assert.equal(fixed['ready'], true);
    assert.equal(conditionStatus(store, 'a', 'Ready'), 'True');
    now = new Date('2026-07-02T10:01:00Z');
    tick();
    assert.equal(containerStatus(store, 'a', 'logtail')['restartCount'], 4, 'no more crashes');
    assert.equal(clock.pending(), 0);
    kubelet.stop();
  });

  it('holds Ready at False until every readiness gate condition is True', () => {
    const store = newStore();
    const clock = manualSchedule();
    const kubelet = new FakeKubelet(store, { schedule: clock.schedule });
    store.create(
      PODS,
      'default',
      pod('a', { readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] }),
    );
    clock.flush();
    assert.equal(conditionStatus(store, 'a', 'ContainersReady'), 'True');
    assert.equal(conditionStatus(store, 'a', 'Ready'), 'False');
    store.patch(
      PODS,
      'default',
      'a',
      {
        type: PATCH_TYPES.strategic,
        body: { status: { conditions: [{ type: 'InPlaceUpdateReady', status: 'True' }] } },
      },
      { subresource: 'status' },
    );
    clock.flush();
    assert.equal(conditionStatus(store, 'a', 'Ready'), 'True');
    assert.equal(
      conditionStatus(store, 'a', 'InPlaceUpdateReady'),
      'True',
      'other conditions are kept',
    );
    kubelet.stop();
  });

  it('leaves new pods Pending when told not to start them', () => {
    const store = newStore();
    const clock = manualSchedule();
    const kubelet = new FakeKubelet(store, { schedule: clock.schedule, startPods: false });
    store.create(PODS, 'default', pod('a'));
    clock.flush();
    assert.deepEqual(status(store, 'a'), { phase: 'Pending' });
    kubelet.stop();
    assert.equal(clock.pending(), 0);
  });

  it('works on real timers with the default delay', async () => {
    const store = newStore();
    const kubelet = new FakeKubelet(store, { delayMs: 1 });
    try {
      store.create(PODS, 'default', pod('a'));
      await waitForStore(store, () =>
        conditionStatus(store, 'a', 'Ready') === 'True' ? true : undefined,
      );
      setImage(store, 'a', 1, 'logtail:0.16.18');
      await waitForStore(store, () =>
        containerStatus(store, 'a', 'logtail')['image'] === 'logtail:0.16.18' ? true : undefined,
      );
      await kubelet.whenIdle();
    } finally {
      kubelet.stop();
    }
  });
});
