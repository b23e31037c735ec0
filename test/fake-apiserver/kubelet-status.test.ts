import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import { describe, it } from 'node:test';
import { isJsonObject, jsonEqual } from './json.js';
import type { JsonObject } from './json.js';
import { desiredStatus, fakeImageId, kubeTime, podIp } from './kubelet-status.js';
import type { ImageFailure, StatusContext } from './kubelet-status.js';
import type { KubeObject } from './types.js';

const T0 = new Date('2026-01-01T00:00:00.123Z');
const T1 = new Date('2026-01-01T00:05:00.000Z');

function context(overrides: Partial<StatusContext> = {}): StatusContext {
  return {
    failures: new Map<string, ImageFailure>(),
    startPods: true,
    now: () => T0,
    ipIndex: 1,
    ...overrides,
  };
}

function pod(status: JsonObject | undefined, extraSpec: JsonObject = {}): KubeObject {
  return {
    metadata: { name: 'a', namespace: 'default' },
    spec: {
      containers: [
        { name: 'nginx', image: 'nginx:1.25' },
        { name: 'logtail', image: 'logtail:0.16.16' },
      ],
      ...extraSpec,
    },
    ...(status === undefined ? {} : { status }),
  };
}

function started(extraSpec: JsonObject = {}): KubeObject {
  const first = desiredStatus(pod({ phase: 'Pending' }, extraSpec), context());
  assert.ok(first !== undefined);
  return pod(first.status, extraSpec);
}

function conditionOf(status: JsonObject, type: string): JsonObject | undefined {
  const list = status['conditions'];
  const found = Array.isArray(list)
    ? list.find((c) => isJsonObject(c) && c['type'] === type)
    : undefined;
  return isJsonObject(found) ? found : undefined;
}

describe('kubelet-status', () => {
  it('starts a pod with IPs, times in the API server form and a status per container', () => {
    const result = desiredStatus(pod({ phase: 'Pending' }), context({ ipIndex: 258 }));
    assert.ok(result !== undefined);
    assert.equal(result.usedIp, true);
    const { status } = result;
    assert.equal(status['podIP'], '10.0.1.2');
    assert.equal(isIP(podIp(65_535)), 4);
    assert.equal(status['startTime'], '2026-01-01T00:00:00Z');
    assert.equal(kubeTime(T1), '2026-01-01T00:05:00Z');
    assert.equal(status['phase'], 'Running');
    assert.deepEqual(conditionOf(status, 'Ready'), {
      type: 'Ready',
      status: 'True',
      lastProbeTime: null,
      lastTransitionTime: '2026-01-01T00:00:00Z',
    });
  });

  it('is a fixed point: the status it computed comes back unchanged, with no IP taken', () => {
    const running = started({ initContainers: [{ name: 'init', image: 'init:1' }] });
    let calls = 0;
    const again = desiredStatus(
      running,
      context({
        now: () => {
          calls++;
          return T1;
        },
        ipIndex: 7,
      }),
    );
    assert.ok(again !== undefined);
    assert.equal(again.usedIp, false);
    assert.ok(jsonEqual(again.status, running['status'] ?? null), 'nothing to write');
    assert.equal(calls, 1, 'the clock is read once');
  });

  it('reports nothing for a pod not started when told not to start pods (clock unread)', () => {
    const result = desiredStatus(
      pod({ phase: 'Pending' }),
      context({
        startPods: false,
        now: () => assert.fail('no clock needed'),
      }),
    );
    assert.equal(result, undefined);
  });

  it('keeps a condition transition time while its status holds, and moves it on a flip', () => {
    const running = started();
    const failures = new Map<string, ImageFailure>([['logtail:0.16.16', 'ImagePullBackOff']]);
    const result = desiredStatus(running, context({ failures, now: () => T1 }));
    assert.ok(result !== undefined);
    assert.equal(conditionOf(result.status, 'Ready')?.['lastTransitionTime'], kubeTime(T1));
    assert.equal(
      conditionOf(result.status, 'PodScheduled')?.['lastTransitionTime'],
      kubeTime(T0),
      'unchanged condition keeps its time',
    );
    const list = result.status['containerStatuses'];
    const logtail = Array.isArray(list) ? list[1] : undefined;
    assert.ok(isJsonObject(logtail));
    // A failed pull makes no new container: the status still names the one that ran.
    assert.equal(logtail['imageID'], fakeImageId('logtail:0.16.16'));
    assert.equal(logtail['ready'], false);
  });

  it('keeps foreign conditions after its own and needs readiness gates True for Ready', () => {
    const gated = started({ readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] });
    assert.ok(isJsonObject(gated['status']));
    assert.equal(conditionOf(gated['status'], 'Ready')?.['status'], 'False');
    const conditions = gated['status']['conditions'];
    assert.ok(Array.isArray(conditions));
    const withGate = {
      ...gated,
      status: {
        ...gated['status'],
        conditions: [...conditions, { type: 'InPlaceUpdateReady', status: 'True' }],
      },
    };
    const result = desiredStatus(withGate, context({ now: () => T1 }));
    assert.ok(result !== undefined);
    assert.equal(conditionOf(result.status, 'Ready')?.['status'], 'True');
    const types = result.status['conditions'];
    assert.ok(Array.isArray(types));
    assert.deepEqual(
      types.map((c) => (isJsonObject(c) ? c['type'] : undefined)),
      ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready', 'InPlaceUpdateReady'],
    );
  });

  /** The statuses in `list` (containerStatuses or initContainerStatuses), by name. */
  function statuses(status: JsonObject, list: string): Map<string, JsonObject> {
    const items = status[list];
    return new Map(
      (Array.isArray(items) ? items.filter(isJsonObject) : []).map((c) => [
        typeof c['name'] === 'string' ? c['name'] : '',
        c,
      ]),
    );
  }

  it('runs native sidecars beside the containers and restarts them in place, as the real kubelet', () => {
    const native = { name: 'proxy', image: 'proxy:1', restartPolicy: 'Always' };
    const classic = { name: 'setup', image: 'setup:1' };
    const first = started({ initContainers: [classic, native] });
    assert.ok(isJsonObject(first['status']));
    const before = statuses(first['status'], 'initContainerStatuses');
    assert.deepEqual([...before.keys()], ['setup', 'proxy']);
    assert.ok(isJsonObject(before.get('setup')?.['state']));
    assert.ok('terminated' in (before.get('setup')?.['state'] as JsonObject));
    assert.equal(before.get('proxy')?.['ready'], true);
    assert.ok('running' in (before.get('proxy')?.['state'] as JsonObject));

    const changed = pod(first['status'], {
      initContainers: [classic, { ...native, image: 'proxy:2' }],
    });
    const result = desiredStatus(changed, context({ now: () => T1 }));
    assert.ok(result !== undefined);
    const after = statuses(result.status, 'initContainerStatuses');
    assert.deepEqual(
      after.get('setup'),
      before.get('setup'),
      'a completed init container stays so',
    );
    const proxy = after.get('proxy');
    assert.equal(proxy?.['image'], 'proxy:2');
    assert.equal(proxy['restartCount'], 1);
    assert.notEqual(proxy['containerID'], before.get('proxy')?.['containerID']);
    assert.deepEqual(proxy['lastState'], {
      terminated: {
        exitCode: 0,
        reason: 'Completed',
        startedAt: kubeTime(T0),
        finishedAt: kubeTime(T1),
        containerID: before.get('proxy')?.['containerID'],
      },
    });
    const app = statuses(result.status, 'containerStatuses').get('nginx');
    assert.equal(app?.['restartCount'], 0, 'the containers are untouched');
  });

  it('holds Ready back while a native sidecar is not ready', () => {
    const native = { name: 'proxy', image: 'proxy:broken', restartPolicy: 'Always' };
    const failures = new Map<string, ImageFailure>([['proxy:broken', 'ImagePullBackOff']]);
    const result = desiredStatus(
      pod({ phase: 'Pending' }, { initContainers: [native] }),
      context({ failures }),
    );
    assert.ok(result !== undefined);
    assert.equal(conditionOf(result.status, 'Ready')?.['status'], 'False');
  });

  it('a failed pull on an image change keeps naming the container that ran', () => {
    const running = started();
    const failures = new Map<string, ImageFailure>([['logtail:missing', 'ImagePullBackOff']]);
    const changed = pod(running['status'] as JsonObject, {
      containers: [
        { name: 'nginx', image: 'nginx:1.25' },
        { name: 'logtail', image: 'logtail:missing' },
      ],
    });
    const result = desiredStatus(changed, context({ failures, now: () => T1 }));
    assert.ok(result !== undefined);
    const logtail = statuses(result.status, 'containerStatuses').get('logtail');
    assert.equal(logtail?.['image'], 'logtail:0.16.16');
    assert.equal(logtail['imageID'], fakeImageId('logtail:0.16.16'));
    assert.deepEqual(logtail['state'], {
      waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "logtail:missing"' },
    });
  });

  it('says which spec generation its status describes, in the status and each condition', () => {
    const running = started();
    const changed = { ...running, metadata: { ...running.metadata, generation: 3 } };
    const result = desiredStatus(changed, context({ now: () => T1 }));
    assert.ok(result !== undefined);
    assert.equal(result.status['observedGeneration'], 3);
    assert.equal(conditionOf(result.status, 'Ready')?.['observedGeneration'], 3);
  });

  it('gives every image its own imageID', () => {
    assert.notEqual(fakeImageId('logtail:0.16.16'), fakeImageId('logtail:0.16.18'));
    assert.match(
      fakeImageId('logtail:0.16.16'),
      /^docker-pullable:\/\/logtail@sha256:[0-9a-f]{64}$/,
    );
  });
});
