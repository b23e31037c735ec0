/**
 * pods/eviction over HTTP, held to kubernetes pkg/registry/core/pod/storage/eviction.go: the
 * pod's PodDisruptionBudget decides, unless the pod has caused its disruption already.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withServer } from './harness.js';
import { getPath, isJsonObject } from './json.js';
import type { JsonObject, JsonValue } from './json.js';
import { PODDISRUPTIONBUDGETS, PODS } from './resources.js';
import type { FakeApiServer } from './server.js';
import type { KubeObject } from './types.js';

interface Budget {
  readonly disruptionsAllowed: number;
  readonly desiredHealthy?: number;
  readonly currentHealthy?: number;
  /** Default: the budget's generation (processed). */
  readonly observedGeneration?: number;
}

/** A pod as a kubelet on node-1 runs it: Running, and Ready unless told otherwise. */
function runningPod(
  server: FakeApiServer,
  name: string,
  { ready = true, labels = { app: 'web' } } = {},
): KubeObject {
  server.store.create(PODS, 'default', {
    metadata: { name, labels },
    spec: { nodeName: 'node-1', containers: [{ name: 'app', image: 'app:1' }] },
  });
  return server.store.mutate(PODS, 'default', name, (pod) => {
    const status = ready ? 'True' : 'False';
    pod['status'] = { phase: 'Running', conditions: [{ type: 'Ready', status }] };
  });
}

function budget(server: FakeApiServer, name: string, status?: Budget): KubeObject {
  server.store.create(PODDISRUPTIONBUDGETS, 'default', {
    metadata: { name },
    spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
  });
  if (status === undefined)
    return server.store.get(PODDISRUPTIONBUDGETS, 'default', name) ?? { metadata: {} };
  return server.store.mutate(PODDISRUPTIONBUDGETS, 'default', name, (pdb) => {
    pdb['status'] = {
      observedGeneration: pdb.metadata.generation ?? 0,
      desiredHealthy: 2,
      currentHealthy: 3,
      expectedPods: 3,
      ...status,
    };
  });
}

async function evict(
  server: FakeApiServer,
  name: string,
  extra: JsonObject = {},
): Promise<{ code: number; body: JsonObject }> {
  const response = await fetch(`${server.url}/api/v1/namespaces/default/pods/${name}/eviction`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name, namespace: 'default' },
      ...extra,
    }),
  });
  const body = (await response.json()) as JsonValue;
  assert.ok(isJsonObject(body));
  return { code: response.status, body };
}

function pdbStatus(server: FakeApiServer, name: string): JsonValue | undefined {
  return server.store.get(PODDISRUPTIONBUDGETS, 'default', name)?.['status'];
}

const VIOLATES = "Cannot evict pod as it would violate the pod's disruption budget.";

describe('fake API server: pods/eviction', () => {
  it('is listed in discovery, with poddisruptionbudgets and their status', async () => {
    await withServer(async (server) => {
      const core = (await (await fetch(`${server.url}/api/v1`)).json()) as JsonObject;
      const resources = core['resources'] as JsonObject[];
      const eviction = resources.find((r) => r['name'] === 'pods/eviction');
      assert.deepEqual(
        { kind: eviction?.['kind'], group: eviction?.['group'], verbs: eviction?.['verbs'] },
        { kind: 'Eviction', group: 'policy', verbs: ['create'] },
      );
      const policy = (await (await fetch(`${server.url}/apis/policy/v1`)).json()) as JsonObject;
      const names = (policy['resources'] as JsonObject[]).map((r) => r['name']);
      assert.deepEqual(names, ['poddisruptionbudgets', 'poddisruptionbudgets/status']);
    });
  });

  it('spends a disruption of the budget, records the pod and deletes it gracefully', async () => {
    await withServer(async (server) => {
      runningPod(server, 'a');
      budget(server, 'web', { disruptionsAllowed: 1 });
      const { code, body } = await evict(server, 'a');
      assert.equal(code, 201);
      assert.equal(body['kind'], 'Status');
      assert.equal(body['status'], 'Success');
      assert.equal(getPath(pdbStatus(server, 'web') ?? null, ['disruptionsAllowed']), 0);
      const disrupted = getPath(pdbStatus(server, 'web') ?? null, ['disruptedPods']);
      assert.deepEqual(Object.keys(isJsonObject(disrupted) ? disrupted : {}), ['a']);
      // On a node, the pod is marked for its kubelet: deletionTimestamp and the default 30 s.
      const pod = server.store.get(PODS, 'default', 'a');
      assert.ok(pod?.metadata['deletionTimestamp']);
      assert.equal(pod.metadata['deletionGracePeriodSeconds'], 30);
    });
  });

  it('refuses with 429 while the budget allows no disruption', async () => {
    await withServer(async (server) => {
      runningPod(server, 'a');
      budget(server, 'web', { disruptionsAllowed: 0, desiredHealthy: 3, currentHealthy: 3 });
      const { code, body } = await evict(server, 'a');
      assert.equal(code, 429);
      assert.equal(body['reason'], 'TooManyRequests');
      assert.equal(body['message'], VIOLATES);
      assert.deepEqual(getPath(body, ['details', 'causes']), [
        {
          reason: 'DisruptionBudget',
          message: 'The disruption budget web needs 3 healthy pods and has 3 currently',
        },
      ]);
      assert.ok(server.store.get(PODS, 'default', 'a'), 'the pod stays');
      assert.equal(
        server.store.get(PODS, 'default', 'a')?.metadata['deletionTimestamp'],
        undefined,
      );
    });
  });

  it('refuses with 429 while the budget is not processed (no status, or an older generation)', async () => {
    await withServer(async (server) => {
      runningPod(server, 'a');
      budget(server, 'web');
      const cause = 'The disruption budget web is still being processed by the server.';
      for (const attempt of ['no status', 'older generation']) {
        const { code, body } = await evict(server, 'a');
        assert.equal(code, 429, attempt);
        assert.equal(body['message'], VIOLATES);
        assert.deepEqual(getPath(body, ['details', 'causes']), [
          { reason: 'DisruptionBudget', message: cause },
        ]);
        assert.equal(getPath(body, ['details', 'retryAfterSeconds']), 10);
        server.store.mutate(PODDISRUPTIONBUDGETS, 'default', 'web', (pdb) => {
          pdb['status'] = { observedGeneration: 0, disruptionsAllowed: 5 };
        });
      }
    });
  });

  it('answers 500 when more than one budget selects the pod', async () => {
    await withServer(async (server) => {
      runningPod(server, 'a');
      budget(server, 'web', { disruptionsAllowed: 1 });
      budget(server, 'web-too', { disruptionsAllowed: 1 });
      const { code, body } = await evict(server, 'a');
      assert.equal(code, 500);
      assert.equal(body['status'], 'Failure');
      assert.equal(
        body['message'],
        'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
      );
      assert.ok(server.store.get(PODS, 'default', 'a'));
    });
  });

  it('ignores budgets that do not select the pod, and deletes it', async () => {
    await withServer(async (server) => {
      runningPod(server, 'a', { labels: { app: 'other' } });
      budget(server, 'web', { disruptionsAllowed: 0 });
      assert.equal((await evict(server, 'a')).code, 201);
      assert.ok(server.store.get(PODS, 'default', 'a')?.metadata['deletionTimestamp']);
    });
  });

  it('deletes pending, finished and terminating pods without looking at budgets', async () => {
    await withServer(async (server) => {
      budget(server, 'web', { disruptionsAllowed: 0 });
      server.store.create(PODS, 'default', {
        metadata: { name: 'pending', labels: { app: 'web' } },
        spec: { containers: [{ name: 'app', image: 'app:1' }] },
      });
      for (const phase of ['Succeeded', 'Failed']) {
        runningPod(server, phase.toLowerCase());
        server.store.mutate(PODS, 'default', phase.toLowerCase(), (pod) => {
          pod['status'] = { phase };
        });
      }
      runningPod(server, 'terminating');
      server.store.mutate(PODS, 'default', 'terminating', (pod) => {
        pod.metadata['deletionTimestamp'] = '2026-01-01T00:00:00Z';
        pod.metadata['deletionGracePeriodSeconds'] = 30;
      });
      for (const name of ['pending', 'succeeded', 'failed', 'terminating']) {
        assert.equal((await evict(server, name)).code, 201, name);
      }
      for (const name of ['pending', 'succeeded', 'failed']) {
        assert.equal(server.store.get(PODS, 'default', name), undefined, `${name} is gone`);
      }
      assert.ok(server.store.get(PODS, 'default', 'terminating'), 'still terminating');
      assert.equal(getPath(pdbStatus(server, 'web') ?? null, ['disruptionsAllowed']), 0);
    });
  });

  it('lets an unready pod go without spending a disruption while the budget is healthy', async () => {
    await withServer(async (server) => {
      runningPod(server, 'a', { ready: false });
      budget(server, 'web', { disruptionsAllowed: 0, desiredHealthy: 2, currentHealthy: 2 });
      assert.equal((await evict(server, 'a')).code, 201);
      assert.ok(server.store.get(PODS, 'default', 'a')?.metadata['deletionTimestamp']);
      assert.equal(getPath(pdbStatus(server, 'web') ?? null, ['disruptedPods']), undefined);
    });
  });

  it('answers 404 for a missing pod and 409 when the uid precondition fails', async () => {
    await withServer(async (server) => {
      const missing = await evict(server, 'nope');
      assert.equal(missing.code, 404);
      assert.equal(missing.body['message'], 'pods "nope" not found');
      const pod = runningPod(server, 'a');
      const stale = await evict(server, 'a', {
        deleteOptions: { preconditions: { uid: 'another-uid' } },
      });
      assert.equal(stale.code, 409);
      assert.equal(stale.body['reason'], 'Conflict');
      assert.match(
        JSON.stringify(stale.body['message']),
        /Precondition failed: UID in precondition/,
      );
      assert.equal(
        server.store.get(PODS, 'default', 'a')?.metadata['deletionTimestamp'],
        undefined,
      );
      const right = await evict(server, 'a', {
        deleteOptions: { preconditions: { uid: pod.metadata.uid ?? '' } },
      });
      assert.equal(right.code, 201);
    });
  });

  it('checks without writing on a dry run', async () => {
    await withServer(async (server) => {
      runningPod(server, 'a');
      budget(server, 'web', { disruptionsAllowed: 1 });
      const { code } = await evict(server, 'a', { deleteOptions: { dryRun: ['All'] } });
      assert.equal(code, 201);
      assert.equal(getPath(pdbStatus(server, 'web') ?? null, ['disruptionsAllowed']), 1);
      assert.equal(
        server.store.get(PODS, 'default', 'a')?.metadata['deletionTimestamp'],
        undefined,
      );
    });
  });

  it('the kubelet removes a gracefully deleted pod when its grace period ends', async () => {
    await withServer(async (server) => {
      const timers: (() => void)[] = [];
      server.startKubelet({
        startPods: false,
        schedule: (run) => {
          timers.push(run);
          return () => undefined;
        },
      });
      server.store.create(PODS, 'default', {
        metadata: { name: 'a' },
        spec: {
          nodeName: 'node-1',
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'app', image: 'app:1' }],
        },
      });
      server.store.mutate(PODS, 'default', 'a', (pod) => {
        pod['status'] = { phase: 'Running' };
      });
      assert.equal((await evict(server, 'a')).code, 201);
      assert.ok(server.store.get(PODS, 'default', 'a'), 'terminating until the grace period ends');
      for (const run of timers.splice(0)) run();
      assert.equal(server.store.get(PODS, 'default', 'a'), undefined);
    });
  });
});
