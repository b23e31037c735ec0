/**
 * End to end: the webhook injects through the API server's admission path, the controller
 * upgrades sidecars in place, and the fake kubelet reports the containers it restarts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { parse } from 'yaml';
import { readFile } from 'node:fs/promises';

import type { JsonObject, KubeObject } from '../fake-apiserver/index.js';
import type { TestCluster } from './cluster.js';
import {
  container,
  containerStatus,
  createPods,
  createSidecarSet,
  eventSent,
  nginxPod,
  pods,
  sidecarSet,
  status,
  updateSidecarSet,
  waitFor,
  withCluster,
} from './cluster.js';

const examples = new URL('../../examples/', import.meta.url).pathname;

function image(pod: KubeObject, name: string): unknown {
  return container(pod, name)?.['image'];
}

const logtailSpec = (extra: JsonObject = {}): JsonObject => ({
  selector: { matchLabels: { app: 'nginx' } },
  containers: [{ name: 'logtail', image: 'logtail:1' }],
  ...extra,
});

function upgradedCount(cluster: TestCluster, to: string): number {
  return pods(cluster).filter((p) => image(p, 'logtail') === to).length;
}

/** Per-pod events are off by default (docs/adr/0014-health-gated-rollouts.md). */
const withPodEvents = { flags: { podEvents: true } };

describe('upgrade controller', () => {
  it("runs the article's example: 1/1/1/1, then an in-place upgrade to 0.16.18", async () => {
    await withCluster(async (cluster) => {
      const set = parse(await readFile(`${examples}logtail-sidecarset.yaml`, 'utf8')) as JsonObject;
      await createSidecarSet(cluster, set);
      const pod = parse(await readFile(`${examples}nginx-pod.yaml`, 'utf8')) as JsonObject;
      await cluster.core.createNamespacedPod({ namespace: 'default', body: pod });
      const created = pods(cluster)[0];
      assert.ok(created);
      assert.deepEqual(
        (created['spec'] as { containers: { name: string }[] }).containers.map((c) => c.name),
        ['logtail', 'nginx'],
      );
      await waitFor(
        cluster,
        () => {
          const s = status(cluster, 'logtail-sidecarset');
          return (
            s?.['matchedPods'] === 1 &&
            s['updatedPods'] === 1 &&
            s['readyPods'] === 1 &&
            s['observedGeneration'] === 1
          );
        },
        'status 1/1/1/1',
      );
      const before = pods(cluster)[0] as KubeObject;
      const nginxRestarts = containerStatus(before, 'nginx')?.['restartCount'];

      await updateSidecarSet(cluster, 'logtail-sidecarset', (spec) => {
        const containers = spec['containers'] as { image: string }[];
        (containers[0] as { image: string }).image = 'log-service/logtail:0.16.18';
      });
      await waitFor(
        cluster,
        () => {
          const s = status(cluster, 'logtail-sidecarset');
          return (
            s?.['observedGeneration'] === 2 && s['updatedPods'] === 1 && s['updatedReadyPods'] === 1
          );
        },
        'the upgrade to finish',
      );
      // Written with the counts: kubectl wait --for=condition=Ready (src/core/status/status-conditions.ts).
      const conditions = status(cluster, 'logtail-sidecarset')?.['conditions'] as JsonObject[];
      const ready = conditions.find((c) => c['type'] === 'Ready');
      assert.deepEqual(
        [ready?.['status'], ready?.['reason'], ready?.['observedGeneration']],
        ['True', 'RolloutComplete', 2],
      );
      const after = pods(cluster)[0] as KubeObject;
      assert.equal(after.metadata.uid, before.metadata.uid, 'the same pod, not recreated');
      assert.equal(image(after, 'logtail'), 'log-service/logtail:0.16.18');
      assert.deepEqual(
        container(after, 'nginx'),
        container(before, 'nginx'),
        'the app container is untouched',
      );
      assert.equal(
        containerStatus(after, 'nginx')?.['restartCount'],
        nginxRestarts,
        'nginx was not restarted',
      );
      assert.equal(containerStatus(after, 'logtail')?.['image'], 'log-service/logtail:0.16.18');
      const recorded = JSON.parse(
        after.metadata.annotations?.['kruise.io/sidecarset-hash'] ?? '{}',
      ) as Record<string, { controllerRevision?: string }>;
      const latest = status(cluster, 'logtail-sidecarset')?.['latestRevision'];
      assert.ok(typeof latest === 'string' && latest !== '');
      assert.equal(
        recorded['logtail-sidecarset']?.controllerRevision,
        latest,
        'the upgraded pod records the revision it was upgraded to',
      );
      const events = cluster.api.control.requests(
        (r) => r.method === 'POST' && r.resource === 'events',
      );
      const reasons = events.map((e) => (e.body as { reason?: string } | undefined)?.reason);
      assert.ok(reasons.includes('SidecarUpgradeStarted'), JSON.stringify(reasons));
      await eventSent(cluster, 'SidecarUpgraded');
    }, withPodEvents);
  });

  it('upgrades 100 pods with maxUnavailable 10, never more than 10 unavailable at once', async () => {
    await withCluster(
      async (cluster) => {
        await createSidecarSet(
          cluster,
          sidecarSet('agent', logtailSpec({ updateStrategy: { maxUnavailable: 10 } })),
        );
        await createPods(cluster, 100, (i) => nginxPod(`web-${String(i).padStart(3, '0')}`));
        await waitFor(cluster, () => status(cluster, 'agent')?.['readyPods'] === 100, 'all ready');
        let worst = 0;
        const unsubscribe = cluster.api.store.subscribe(() => {
          const unavailable = pods(cluster).filter((p) => {
            if (image(p, 'logtail') !== 'logtail:2') return false;
            const ready = containerStatus(p, 'logtail');
            return ready?.['image'] !== 'logtail:2' || ready['ready'] !== true;
          }).length;
          worst = Math.max(worst, unavailable);
        });
        try {
          await updateSidecarSet(cluster, 'agent', (spec) => {
            ((spec['containers'] as { image: string }[])[0] as { image: string }).image =
              'logtail:2';
          });
          await waitFor(
            cluster,
            () =>
              upgradedCount(cluster, 'logtail:2') === 100 &&
              status(cluster, 'agent')?.['observedGeneration'] === 2 &&
              status(cluster, 'agent')?.['updatedReadyPods'] === 100,
            'all 100 upgraded',
            60_000,
          );
        } finally {
          unsubscribe();
        }
        assert.ok(worst <= 10, `at most 10 unavailable, saw ${worst}`);
        assert.ok(worst >= 2, `the budget was used (${worst})`);
      },
      { flags: { qps: 1000, burst: 1000 } },
    );
  });
});
