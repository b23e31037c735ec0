/**
 * Recreation through evictions (docs/adr/0024-recreation-through-evictions.md) against the fake
 * API server's pods/eviction: the test plays the ReplicaSet (a replacement for every pod being
 * deleted) and the disruption controller (the PodDisruptionBudget's status).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { JsonObject, KubeObject } from '../fake-apiserver/index.js';
import { EVENTS, PODDISRUPTIONBUDGETS, PODS } from '../fake-apiserver/index.js';
import type { TestCluster } from './cluster.js';
import {
  container,
  createPods,
  createSidecarSet,
  isReady,
  nginxPod,
  pods,
  sidecarSet,
  status,
  updateSidecarSet,
  waitFor,
  withCluster,
} from './cluster.js';

const OWNER = {
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  name: 'web-5d8f',
  uid: '0b7c6a4e-0000-4000-8000-000000000001',
  controller: true,
};

/** An nginx pod on node-1 (so an eviction deletes it gracefully), owned by the ReplicaSet. */
function replicaPod(name: string): JsonObject {
  const pod = nginxPod(name);
  const metadata = pod['metadata'] as JsonObject;
  metadata['ownerReferences'] = [OWNER];
  (pod['spec'] as JsonObject)['nodeName'] = 'node-1';
  return pod;
}

function mode(pod: KubeObject): unknown {
  const env = container(pod, 'agent')?.['env'];
  return Array.isArray(env)
    ? (env as JsonObject[]).find((e) => e['name'] === 'MODE')?.['value']
    : undefined;
}

function isTerminating(pod: KubeObject): boolean {
  return pod.metadata['deletionTimestamp'] !== undefined;
}

function isOwned(pod: KubeObject): boolean {
  return Array.isArray(pod.metadata['ownerReferences']);
}

async function setUp(cluster: TestCluster, count: number): Promise<void> {
  await createSidecarSet(cluster, {
    ...sidecarSet('agent', {
      selector: { matchLabels: { app: 'nginx' } },
      updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1 },
      containers: [{ name: 'agent', image: 'agent:1', env: [{ name: 'MODE', value: 'a' }] }],
    }),
    metadata: { name: 'agent', annotations: { 'sidecarset.dev/recreate-pods': 'true' } },
  });
  await createPods(cluster, count, (i) => replicaPod(`web-${i}`));
  await waitFor(cluster, () => status(cluster, 'agent')?.['readyPods'] === count, 'pods ready');
}

/**
 * Plays the ReplicaSet: a pod of it being deleted gets a replacement with a new name, created
 * through the API (so the webhook injects it); then, as its kubelet would once the containers
 * stopped, the old pod is removed. Returns a stop function.
 */
function playReplicaSet(cluster: TestCluster): () => void {
  const replaced = new Set<string>();
  let next = 0;
  return cluster.api.store.subscribe((event) => {
    const pod = event.object;
    const uid = pod.metadata.uid ?? '';
    if (event.type !== 'MODIFIED' || !isOwned(pod) || !isTerminating(pod) || replaced.has(uid)) {
      return;
    }
    replaced.add(uid);
    void (async () => {
      await cluster.core.createNamespacedPod({
        namespace: 'default',
        body: replicaPod(`web-r${next++}`),
      });
      cluster.api.store.delete(PODS, 'default', pod.metadata.name ?? '');
    })();
  });
}

function envChange(to: string): (spec: Record<string, unknown>) => void {
  return (spec) => {
    const [agent] = spec['containers'] as Record<string, unknown>[];
    if (agent) agent['env'] = [{ name: 'MODE', value: to }];
  };
}

function evictions(cluster: TestCluster): number {
  return cluster.api.control.requests((r) => r.subresource === 'eviction').length;
}

function reconcilingMessage(cluster: TestCluster): string {
  const conditions = status(cluster, 'agent')?.['conditions'];
  const reconciling = Array.isArray(conditions)
    ? (conditions as JsonObject[]).find((c) => c['type'] === 'Reconciling')
    : undefined;
  return typeof reconciling?.['message'] === 'string' ? reconciling['message'] : '';
}

describe('recreation through evictions', () => {
  it('evicts one pod at a time; the replacements run the new sidecar', async () => {
    await withCluster(async (cluster) => {
      await setUp(cluster, 3);
      await createPods(cluster, 1, () => nginxPod('lonely'));
      await waitFor(cluster, () => status(cluster, 'agent')?.['readyPods'] === 4, '4 ready');
      const lonely = cluster.api.store.get(PODS, 'default', 'lonely');

      // Pods of the ReplicaSet that are up: not being deleted, and Ready.
      let fewestUp = Infinity;
      let mostTerminating = 0;
      const watchInvariant = cluster.api.store.subscribe(() => {
        const owned = pods(cluster).filter(isOwned);
        fewestUp = Math.min(fewestUp, owned.filter((p) => !isTerminating(p) && isReady(p)).length);
        mostTerminating = Math.max(mostTerminating, owned.filter(isTerminating).length);
      });
      const stopReplicaSet = playReplicaSet(cluster);
      try {
        await updateSidecarSet(cluster, 'agent', envChange('b'));
        await waitFor(
          cluster,
          () => {
            const owned = pods(cluster).filter(isOwned);
            return (
              owned.length === 3 &&
              owned.every((p) => !isTerminating(p) && mode(p) === 'b' && isReady(p)) &&
              status(cluster, 'agent')?.['updatedPods'] === 3
            );
          },
          'every pod of the ReplicaSet recreated with MODE=b',
        );
      } finally {
        watchInvariant();
        stopReplicaSet();
      }
      assert.equal(fewestUp, 2, 'never more than one pod down (maxUnavailable 1)');
      assert.equal(mostTerminating, 1, 'one eviction at a time');
      assert.equal(evictions(cluster), 3);
      assert.ok(
        pods(cluster)
          .filter(isOwned)
          .every((p) => /^web-r\d$/.test(p.metadata.name ?? '')),
        'every pod is a replacement',
      );

      // The pod no controller would recreate is left alone, on the old sidecar.
      const kept = cluster.api.store.get(PODS, 'default', 'lonely');
      assert.equal(kept?.metadata.uid, lonely?.metadata.uid);
      assert.equal(kept === undefined ? undefined : mode(kept), 'a');
      assert.equal(
        cluster.api.control.requests((r) => r.subresource === 'eviction' && r.name === 'lonely')
          .length,
        0,
      );
      assert.ok(
        cluster.api.store.list(EVENTS, {}).items.some((e) => {
          const message = typeof e['message'] === 'string' ? e['message'] : '';
          return (
            e['reason'] === 'NotUpgradablePods' &&
            message.includes('no controller recreates the pod')
          );
        }),
        'a NotUpgradablePods event says why',
      );
    });
  });

  it('a PodDisruptionBudget that allows no disruption holds the eviction until it does', async () => {
    await withCluster(async (cluster) => {
      await setUp(cluster, 3);
      cluster.api.store.create(PODDISRUPTIONBUDGETS, 'default', {
        metadata: { name: 'web' },
        spec: { minAvailable: 3, selector: { matchLabels: { app: 'nginx' } } },
      });
      cluster.api.store.mutate(PODDISRUPTIONBUDGETS, 'default', 'web', (pdb) => {
        pdb['status'] = {
          observedGeneration: 1,
          disruptionsAllowed: 0,
          desiredHealthy: 3,
          currentHealthy: 3,
          expectedPods: 3,
        };
      });
      const stopReplicaSet = playReplicaSet(cluster);
      try {
        await updateSidecarSet(cluster, 'agent', envChange('b'));
        const refusal =
          "Cannot evict pod as it would violate the pod's disruption budget. " +
          '(The disruption budget web needs 3 healthy pods and has 3 currently)';
        await waitFor(
          cluster,
          () => reconcilingMessage(cluster).includes('cannot be evicted now'),
          'the Reconciling condition names the refusal',
        );
        const refused = pods(cluster).filter(
          (p) => p.metadata.annotations?.['sidecarset.dev/eviction-refused'] !== undefined,
        );
        assert.equal(refused.length, 1, 'one pod tried (maxUnavailable 1)');
        const [pod] = refused;
        assert.match(
          pod?.metadata.annotations?.['sidecarset.dev/eviction-refused'] ?? '',
          /needs 3 healthy pods and has 3 currently/,
        );
        assert.ok(reconcilingMessage(cluster).includes(refusal), reconcilingMessage(cluster));
        const warning = cluster.api.store
          .list(EVENTS, {})
          .items.find((e) => e['reason'] === 'EvictionRefused');
        assert.ok(warning, 'an EvictionRefused event');
        assert.equal(warning['type'], 'Warning');
        assert.equal((warning['involvedObject'] as JsonObject)['name'], pod?.metadata.name);
        const message = warning['message'];
        assert.ok(
          typeof message === 'string' && message.endsWith(refusal),
          JSON.stringify(message),
        );
        assert.ok(
          pods(cluster).every((p) => !isTerminating(p) && mode(p) === 'a'),
          'none evicted',
        );

        // The disruption controller allows one disruption at a time.
        const allowOne = cluster.api.store.subscribe(() => {
          const pdb = cluster.api.store.get(PODDISRUPTIONBUDGETS, 'default', 'web');
          const up = pods(cluster).filter((p) => !isTerminating(p) && isReady(p)).length;
          const allowed = up === 3 ? 1 : 0;
          if ((pdb?.['status'] as JsonObject | undefined)?.['disruptionsAllowed'] === allowed)
            return;
          queueMicrotask(() => {
            cluster.api.store.mutate(PODDISRUPTIONBUDGETS, 'default', 'web', (p) => {
              p['status'] = {
                ...(p['status'] as JsonObject),
                disruptionsAllowed: allowed,
                currentHealthy: up,
              };
            });
          });
        });
        try {
          cluster.api.store.mutate(PODDISRUPTIONBUDGETS, 'default', 'web', (p) => {
            p['status'] = { ...(p['status'] as JsonObject), disruptionsAllowed: 1 };
          });
          await waitFor(
            cluster,
            () =>
              pods(cluster).length === 3 &&
              pods(cluster).every((p) => !isTerminating(p) && mode(p) === 'b' && isReady(p)) &&
              status(cluster, 'agent')?.['updatedPods'] === 3,
            'every pod recreated once the budget allows it',
          );
        } finally {
          allowOne();
        }
      } finally {
        stopReplicaSet();
      }
    });
  });

  it('a StatefulSet: one pod down at a time, also while a pod is gone and not yet recreated', async () => {
    await withCluster(async (cluster) => {
      await setUp(cluster, 0);
      const statefulPod = (name: string): JsonObject => {
        const pod = replicaPod(name);
        (pod['metadata'] as JsonObject)['ownerReferences'] = [
          {
            ...OWNER,
            kind: 'StatefulSet',
            name: 'db',
            uid: '0b7c6a4e-0000-4000-8000-000000000002',
          },
        ];
        return pod;
      };
      await createPods(cluster, 3, (i) => statefulPod(`db-${i}`));
      await waitFor(cluster, () => status(cluster, 'agent')?.['readyPods'] === 3, '3 ready');
      // Pods up: there, not being deleted, and Ready; gone pods count as down.
      let fewestUp = Infinity;
      const watchInvariant = cluster.api.store.subscribe(() => {
        const up = pods(cluster).filter((p) => !isTerminating(p) && isReady(p)).length;
        fewestUp = Math.min(fewestUp, up);
      });
      // Plays the StatefulSet: a pod being deleted goes, and only then, a while later, a pod of
      // the same name is created (its ordinal is free only once the old pod is gone).
      const recreated = new Set<string>();
      const stopStatefulSet = cluster.api.store.subscribe((event) => {
        const pod = event.object;
        const uid = pod.metadata.uid ?? '';
        if (event.type !== 'MODIFIED' || !isTerminating(pod) || recreated.has(uid)) return;
        recreated.add(uid);
        const name = pod.metadata.name ?? '';
        void (async () => {
          cluster.api.store.delete(PODS, 'default', name);
          await new Promise((resolve) => setTimeout(resolve, 1500));
          await cluster.core.createNamespacedPod({ namespace: 'default', body: statefulPod(name) });
        })();
      });
      try {
        await updateSidecarSet(cluster, 'agent', envChange('b'));
        await waitFor(
          cluster,
          () =>
            pods(cluster).length === 3 &&
            pods(cluster).every((p) => !isTerminating(p) && mode(p) === 'b' && isReady(p)),
          'every pod of the StatefulSet recreated with MODE=b',
        );
      } finally {
        watchInvariant();
        stopStatefulSet();
      }
      assert.equal(fewestUp, 2, 'never more than one pod down (maxUnavailable 1)');
      assert.equal(evictions(cluster), 3);
    });
  });
});
