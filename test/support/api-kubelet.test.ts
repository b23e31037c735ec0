import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { isIP } from 'node:net';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { PODS, fakeImageId, startFakeApiServer, waitForStore } from '../fake-apiserver/index.js';
import type { FakeApiServer, JsonObject, JsonValue, RequestInfo } from '../fake-apiserver/index.js';
import { isJsonObject } from '../fake-apiserver/json.js';
import { ApiKubelet } from './api-kubelet.js';
import { eventually } from './eventually.js';
import type { ApiKubeletOptions } from './api-kubelet.js';

interface Harness {
  readonly server: FakeApiServer;
  readonly core: CoreV1Api;
  readonly kubelet: ApiKubelet;
}

/** A fake API server and an ApiKubelet on it; stops the kubelet, then closes the server. */
async function withKubelet(
  body: (h: Harness) => Promise<void>,
  options: ApiKubeletOptions = {},
  before?: (server: FakeApiServer) => void | Promise<void>,
): Promise<void> {
  const server = await startFakeApiServer();
  const errors: Error[] = [];
  let kubelet: ApiKubelet | undefined;
  try {
    await before?.(server);
    kubelet = new ApiKubelet(server.kubeConfig(), {
      delayMs: 1,
      onError: (e) => errors.push(e),
      ...options,
    });
    await body({ server, core: server.kubeConfig().makeApiClient(CoreV1Api), kubelet });
    assert.deepEqual(
      errors.map((e) => e.message),
      [],
      'no list, watch or write failed',
    );
  } finally {
    await kubelet?.stop();
    await server.close();
  }
}

function podBody(name: string, extraSpec: Partial<NonNullable<V1Pod['spec']>> = {}): V1Pod {
  return {
    metadata: { name, labels: { app: 'web' }, annotations: { note: 'kept' } },
    spec: {
      containers: [
        { name: 'nginx', image: 'nginx:1.25' },
        { name: 'logtail', image: 'logtail:0.16.16' },
      ],
      ...extraSpec,
    },
  };
}

function status(server: FakeApiServer, name: string, namespace = 'default'): JsonObject {
  const s = server.store.get(PODS, namespace, name)?.['status'];
  return isJsonObject(s) ? s : {};
}

function containerStatus(server: FakeApiServer, pod: string, container: string): JsonObject {
  const list = status(server, pod)['containerStatuses'];
  const found = Array.isArray(list)
    ? list.find((c) => isJsonObject(c) && c['name'] === container)
    : undefined;
  return isJsonObject(found) ? found : {};
}

function conditionOf(server: FakeApiServer, pod: string, type: string): JsonObject | undefined {
  const list = status(server, pod)['conditions'];
  const found = Array.isArray(list)
    ? list.find((c) => isJsonObject(c) && c['type'] === type)
    : undefined;
  return isJsonObject(found) ? found : undefined;
}

function conditionStatus(server: FakeApiServer, pod: string, type: string): JsonValue | undefined {
  return conditionOf(server, pod, type)?.['status'];
}

function text(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

function until(server: FakeApiServer, check: () => boolean, what: string): Promise<true> {
  return waitForStore(server.store, () => (check() ? true : undefined), { what });
}

/** For what only the kubelet's own state shows (no store event to wake on): a bounded poll. */
function pollKubelet(check: () => boolean, what: string): Promise<void> {
  return eventually(check, what, 5000, 2);
}

function isStatusWrite(r: RequestInfo, name?: string): boolean {
  return (
    r.verb === 'update' &&
    r.resource === 'pods' &&
    r.subresource === 'status' &&
    (name === undefined || r.name === name)
  );
}

async function setImage(core: CoreV1Api, name: string, index: number, image: string) {
  await core.patchNamespacedPod(
    {
      name,
      namespace: 'default',
      body: [{ op: 'replace', path: `/spec/containers/${index}/image`, value: image }],
    },
    setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
  );
}

describe('ApiKubelet', () => {
  it('starts a new pod: Running, Ready, a status for every container, by PUT pods/status', async () => {
    await withKubelet(async ({ server, core, kubelet }) => {
      const created = await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
      await until(server, () => conditionStatus(server, 'a', 'Ready') === 'True', 'Ready');
      await kubelet.whenIdle();
      const s = status(server, 'a');
      assert.equal(s['phase'], 'Running');
      assert.equal(conditionStatus(server, 'a', 'ContainersReady'), 'True');
      assert.equal(conditionStatus(server, 'a', 'PodScheduled'), 'True');
      assert.equal(conditionOf(server, 'a', 'Ready')?.['lastProbeTime'], null);
      assert.equal(isIP(text(s['podIP'])), 4, 'podIP is an IP');
      assert.equal(isIP(text(s['hostIP'])), 4, 'hostIP is an IP');
      assert.match(text(s['startTime']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const statuses = s['containerStatuses'];
      assert.ok(Array.isArray(statuses));
      assert.deepEqual(
        statuses.map((c) => (isJsonObject(c) ? c['name'] : undefined)),
        ['nginx', 'logtail'],
        'one status per spec container, named as they are',
      );
      const logtail = containerStatus(server, 'a', 'logtail');
      assert.equal(logtail['image'], 'logtail:0.16.16');
      assert.equal(logtail['imageID'], fakeImageId('logtail:0.16.16'));
      assert.equal(logtail['ready'], true);
      assert.equal(logtail['restartCount'], 0);
      const pod = server.store.get(PODS, 'default', 'a');
      assert.ok(pod !== undefined);
      assert.deepEqual(pod.metadata.labels, { app: 'web' }, 'metadata is sent back unchanged');
      assert.deepEqual(pod.metadata.annotations, { note: 'kept' });
      const writes = server.control.requests((r) => isStatusWrite(r, 'a'));
      assert.equal(writes.length, 1, 'one write; its own watch event does not trigger another');
      const sent = writes[0]?.body;
      assert.ok(isJsonObject(sent) && isJsonObject(sent['metadata']));
      assert.equal(
        sent['metadata']['resourceVersion'],
        created.metadata?.resourceVersion,
        'the write carries the resourceVersion it read',
      );
      assert.equal(kubelet.pendingPods(), 0);
    });
  });

  it('reports pods that existed before it started, in every namespace by default', async () => {
    await withKubelet(
      async ({ server, kubelet }) => {
        await kubelet.whenIdle();
        assert.equal(status(server, 'a')['phase'], 'Running');
        assert.equal(status(server, 'b', 'kube-system')['phase'], 'Running');
      },
      {},
      async (server) => {
        const core = server.kubeConfig().makeApiClient(CoreV1Api);
        await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
        await core.createNamespacedPod({ namespace: 'kube-system', body: podBody('b') });
      },
    );
  });

  it('watches only its namespace when given one', async () => {
    await withKubelet(
      async ({ server, core, kubelet }) => {
        await server.control.waitForWatch();
        assert.deepEqual(
          server.control.watches().map((w) => w.namespace),
          ['kube-system'],
        );
        await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
        await core.createNamespacedPod({ namespace: 'kube-system', body: podBody('b') });
        await until(server, () => status(server, 'b', 'kube-system')['phase'] === 'Running', 'b');
        await kubelet.whenIdle();
        assert.deepEqual(status(server, 'a'), { phase: 'Pending' });
      },
      { namespace: 'kube-system' },
    );
  });

  it('runs a changed image in a restarted container and leaves the other containers alone', async () => {
    await withKubelet(async ({ server, core }) => {
      await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
      await until(server, () => conditionStatus(server, 'a', 'Ready') === 'True', 'Ready');
      const nginxBefore = containerStatus(server, 'a', 'nginx');
      const readySince = conditionOf(server, 'a', 'Ready')?.['lastTransitionTime'];
      await setImage(core, 'a', 1, 'logtail:0.16.18');
      await until(
        server,
        () => containerStatus(server, 'a', 'logtail')['image'] === 'logtail:0.16.18',
        'the new image',
      );
      const logtail = containerStatus(server, 'a', 'logtail');
      assert.equal(logtail['imageID'], fakeImageId('logtail:0.16.18'));
      assert.equal(logtail['restartCount'], 1);
      assert.equal(logtail['ready'], true);
      assert.deepEqual(containerStatus(server, 'a', 'nginx'), nginxBefore);
      assert.equal(conditionStatus(server, 'a', 'Ready'), 'True');
      assert.equal(
        conditionOf(server, 'a', 'Ready')?.['lastTransitionTime'],
        readySince,
        'Ready did not flip',
      );
    });
  });

  it('keeps a container with a failing image not ready (ImagePullBackOff) until healed', async () => {
    await withKubelet(async ({ server, core, kubelet }) => {
      await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
      await until(server, () => conditionStatus(server, 'a', 'Ready') === 'True', 'Ready');
      kubelet.failImage('logtail:broken');
      await setImage(core, 'a', 1, 'logtail:broken');
      await until(server, () => conditionStatus(server, 'a', 'Ready') === 'False', 'not Ready');
      const failing = containerStatus(server, 'a', 'logtail');
      assert.equal(failing['ready'], false);
      assert.equal(failing['restartCount'], 0);
      assert.deepEqual(failing['state'], {
        waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "logtail:broken"' },
      });
      assert.equal(conditionStatus(server, 'a', 'ContainersReady'), 'False');
      assert.equal(status(server, 'a')['phase'], 'Running');
      assert.equal(containerStatus(server, 'a', 'nginx')['ready'], true);
      kubelet.healImage('logtail:broken');
      await until(server, () => conditionStatus(server, 'a', 'Ready') === 'True', 'Ready again');
      assert.equal(containerStatus(server, 'a', 'logtail')['ready'], true);
    });
  });

  it('re-evaluates running pods when an image is made to fail (CrashLoopBackOff)', async () => {
    await withKubelet(async ({ server, core, kubelet }) => {
      await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
      await until(server, () => conditionStatus(server, 'a', 'Ready') === 'True', 'Ready');
      kubelet.failImage('logtail:0.16.16', 'CrashLoopBackOff');
      await until(server, () => conditionStatus(server, 'a', 'Ready') === 'False', 'not Ready');
      const crashing = containerStatus(server, 'a', 'logtail');
      assert.ok(Number(crashing['restartCount']) >= 1);
      assert.equal(crashing['ready'], false);
    });
  });

  it('a crash-looping container keeps restarting, as FakeKubelet has it; idle meanwhile', async () => {
    await withKubelet(
      async ({ server, core, kubelet }) => {
        await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
        await until(server, () => conditionStatus(server, 'a', 'Ready') === 'True', 'Ready');
        kubelet.failImage('logtail:0.16.16', 'CrashLoopBackOff');
        await until(
          server,
          () => Number(containerStatus(server, 'a', 'logtail')['restartCount']) >= 3,
          'three crashes',
        );
        const crashing = containerStatus(server, 'a', 'logtail');
        assert.equal(crashing['ready'], false);
        assert.deepEqual(crashing['state'], {
          waiting: {
            reason: 'CrashLoopBackOff',
            message: 'back-off restarting failed container logtail',
          },
        });
        const last = crashing['lastState'];
        const terminated = isJsonObject(last) ? last['terminated'] : undefined;
        assert.ok(isJsonObject(terminated), 'lastState.terminated');
        assert.equal(terminated['reason'], 'Error');
        assert.equal(terminated['exitCode'], 1);
        assert.equal(containerStatus(server, 'a', 'nginx')['restartCount'], 0);
        await kubelet.whenIdle();
        kubelet.healImage('logtail:0.16.16');
        await until(server, () => conditionStatus(server, 'a', 'Ready') === 'True', 'healed');
        const healed = Number(containerStatus(server, 'a', 'logtail')['restartCount']);
        await new Promise((resolve) => setTimeout(resolve, 1500));
        assert.equal(containerStatus(server, 'a', 'logtail')['restartCount'], healed, 'no more');
      },
      { crashLoopBackoffSeconds: 1 },
    );
  });

  it('holds Ready at False until every readiness gate condition is True', async () => {
    await withKubelet(async ({ server, core }) => {
      await core.createNamespacedPod({
        namespace: 'default',
        body: podBody('a', { readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] }),
      });
      await until(
        server,
        () => conditionStatus(server, 'a', 'ContainersReady') === 'True',
        'ContainersReady',
      );
      assert.equal(conditionStatus(server, 'a', 'Ready'), 'False');
      await core.patchNamespacedPodStatus(
        {
          name: 'a',
          namespace: 'default',
          body: { status: { conditions: [{ type: 'InPlaceUpdateReady', status: 'True' }] } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
      await until(server, () => conditionStatus(server, 'a', 'Ready') === 'True', 'Ready');
      assert.equal(
        conditionStatus(server, 'a', 'InPlaceUpdateReady'),
        'True',
        'other conditions kept',
      );
    });
  });

  it('retries a status write that gets 409 Conflict from a fresh GET', async () => {
    await withKubelet(async ({ server, core, kubelet }) => {
      const fault = server.control.failNext({
        match: (r) => r.verb === 'update' && r.resource === 'pods' && r.subresource === 'status',
        status: 409,
      });
      await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
      await until(server, () => conditionStatus(server, 'a', 'Ready') === 'True', 'Ready');
      await kubelet.whenIdle();
      assert.equal(fault.hits(), 1);
      const log = server.control.requests(
        (r) => r.resource === 'pods' && r.name === 'a' && r.verb !== undefined,
      );
      const conflict = log.findIndex((r) => isStatusWrite(r) && r.status === 409);
      assert.ok(conflict >= 0, 'the first write got 409');
      const after = log.slice(conflict + 1).map((r) => `${r.verb ?? ''} ${r.status}`);
      assert.deepEqual(after, ['get 200', 'update 200'], 'a fresh GET, then the write again');
    });
  });

  it('retries a real conflict: the pod changed between its read and its write', async () => {
    await withKubelet(async ({ server, core, kubelet }) => {
      await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
      await until(server, () => conditionStatus(server, 'a', 'Ready') === 'True', 'Ready');
      await kubelet.whenIdle();
      // When the next status write arrives, change the pod first: the write's version is stale.
      let changed = false;
      const trap = server.control.failNext({
        match: (r) => {
          if (!changed && isStatusWrite(r, 'a')) {
            changed = true;
            server.store.mutate(PODS, 'default', 'a', (p) => {
              const spec = p['spec'];
              const containers = isJsonObject(spec) ? spec['containers'] : undefined;
              const logtail = Array.isArray(containers) ? containers[1] : undefined;
              if (isJsonObject(logtail)) logtail['image'] = 'logtail:0.16.18';
            });
          }
          return false;
        },
        status: 500,
      });
      kubelet.failImage('nginx:1.25');
      await until(
        server,
        () =>
          containerStatus(server, 'a', 'logtail')['image'] === 'logtail:0.16.18' &&
          containerStatus(server, 'a', 'nginx')['ready'] === false,
        'both changes reported',
      );
      await kubelet.whenIdle();
      trap.cancel();
      const conflicts = server.control.requests((r) => isStatusWrite(r, 'a') && r.status === 409);
      assert.equal(conflicts.length, 1, 'the store answered 409');
      assert.equal(conflicts[0]?.injected, false);
      assert.equal(containerStatus(server, 'a', 'logtail')['restartCount'], 1);
    });
  });

  it('leaves pods that are being deleted alone', async () => {
    await withKubelet(
      async ({ server, kubelet }) => {
        await kubelet.whenIdle();
        assert.deepEqual(status(server, 'a'), { phase: 'Pending' });
        assert.equal(server.control.requests((r) => isStatusWrite(r)).length, 0);
      },
      {},
      (server) => {
        server.store.create(PODS, 'default', {
          metadata: { name: 'a' },
          spec: { containers: [{ name: 'app', image: 'app:1' }] },
        });
        server.store.mutate(PODS, 'default', 'a', (p) => {
          p.metadata['deletionTimestamp'] = '2026-01-01T00:00:00Z';
        });
      },
    );
  });

  it('leaves new pods Pending when told not to start them', async () => {
    await withKubelet(
      async ({ server, core, kubelet }) => {
        await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
        // z, started before, still gets reports; its change comes after a's creation.
        await setImage(core, 'z', 1, 'logtail:0.16.18');
        await until(
          server,
          () => containerStatus(server, 'z', 'logtail')['image'] === 'logtail:0.16.18',
          'z reported',
        );
        await kubelet.whenIdle();
        assert.deepEqual(status(server, 'a'), { phase: 'Pending' });
        assert.equal(server.control.requests((r) => isStatusWrite(r, 'a')).length, 0);
      },
      { startPods: false },
      (server) => {
        server.store.create(PODS, 'default', {
          metadata: { name: 'z' },
          spec: {
            containers: [
              { name: 'nginx', image: 'nginx:1.25' },
              { name: 'logtail', image: 'logtail:0.16.16' },
            ],
          },
        });
        server.store.mutate(PODS, 'default', 'z', (p) => {
          p['status'] = {
            phase: 'Running',
            containerStatuses: ['nginx:1.25', 'logtail:0.16.16'].map((image) => ({
              name: image.split(':')[0] ?? '',
              image,
              imageID: fakeImageId(image),
              ready: true,
              restartCount: 0,
              state: { running: { startedAt: '2026-01-01T00:00:00Z' } },
            })),
          };
        });
      },
    );
  });

  it('lists again after its watch ends or expires (410), and keeps reporting', async () => {
    await withKubelet(async ({ server, core, kubelet }) => {
      await server.control.waitForWatch();
      const lists = (): number => server.control.requests((r) => r.verb === 'list').length;
      assert.equal(lists(), 1);
      await kubelet.whenIdle();
      server.control.closeWatches();
      await server.control.waitForWatches((open) => open.length === 0);
      await server.control.waitForWatch();
      assert.equal(lists(), 2, 'a closed stream: list, then watch');
      server.control.failNext({ match: (r) => r.verb === 'watch', status: 410 });
      server.control.closeWatches();
      await server.control.waitForRequest((r) => r.verb === 'watch' && r.injected);
      await server.control.waitForWatch();
      assert.equal(lists(), 4, '410 (after the list that followed the close): list again');
      await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
      await until(server, () => conditionStatus(server, 'a', 'Ready') === 'True', 'Ready');
      await kubelet.whenIdle();
    });
  });

  it('stops its timers and requests when the pod is deleted or it is stopped', async () => {
    await withKubelet(
      async ({ server, core, kubelet }) => {
        await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
        await pollKubelet(() => kubelet.pendingPods() === 1, 'a report scheduled');
        await core.deleteNamespacedPod({ name: 'a', namespace: 'default' });
        await kubelet.whenIdle();
        assert.equal(kubelet.pendingPods(), 0);
        await core.createNamespacedPod({ namespace: 'default', body: podBody('b') });
        await pollKubelet(() => kubelet.pendingPods() === 1, 'a report scheduled');
        await kubelet.stop();
        assert.equal(kubelet.pendingPods(), 0);
        await server.control.waitForWatches((open) => open.length === 0);
        assert.equal(await kubelet.whenIdle(), true);
        assert.equal(server.control.requests((r) => isStatusWrite(r)).length, 0);
      },
      { delayMs: 60_000 },
    );
  });

  it('leaves no open handles after stop(): the process exits by itself', async () => {
    const server = await startFakeApiServer();
    try {
      const core = server.kubeConfig().makeApiClient(CoreV1Api);
      await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
      const result = await runChild(server.url);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout.trim(), 'idle');
      assert.equal(conditionStatus(server, 'a', 'Ready'), 'True', 'the child reported the pod');
      await server.control.waitForWatches((open) => open.length === 0);
    } finally {
      await server.close();
    }
  });
});

const CHILD = `
import { KubeConfig } from '@kubernetes/client-node';
const [url, modulePath] = process.argv.slice(1);
const { ApiKubelet } = await import(modulePath);
const kc = new KubeConfig();
kc.loadFromOptions({
  clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
  users: [{ name: 'u' }],
  contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
  currentContext: 'x',
});
const kubelet = new ApiKubelet(kc, { delayMs: 1 });
await kubelet.whenIdle();
void kubelet.stop(); // not awaited: nothing may keep the process alive after it
console.log('idle');
`;

/** Runs an ApiKubelet in a child process until idle, then stops it; the child must then exit. */
function runChild(url: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const modulePath = new URL('./api-kubelet.ts', import.meta.url).href;
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '--eval', CHILD, url, modulePath],
      { cwd: fileURLToPath(new URL('../..', import.meta.url)), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the child did not exit within 20 s after stop(); stderr: ${stderr}`));
    }, 20_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
