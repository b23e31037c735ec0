/** Two controller replicas with leader election: the leader dies mid-rollout, the other finishes. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { pino } from 'pino';

import { Controller } from '../../src/controller/controller.js';
import {
  container,
  containerStatus,
  pods,
  quickLeaderElection,
  setUpAgent,
  startTestCluster,
  status,
  updateSidecarSet,
  waitFor,
} from './cluster.js';

describe('leader election', () => {
  it('hands the rollout over when the leader dies: no pod upgraded twice, the budget held', async () => {
    const cluster = await startTestCluster({ controller: false, kubeletDelayMs: 40 });
    const replica = (identity: string): Controller =>
      new Controller({
        kubeConfig: cluster.api.kubeConfig(),
        logger: pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' }),
        qps: 1000,
        burst: 1000,
        leaderElection: quickLeaderElection(identity),
      });
    const a = replica('replica-a');
    const b = replica('replica-b');
    try {
      await Promise.all([a.start(), b.start()]);
      await setUpAgent(cluster, 30, { maxUnavailable: 3 });
      await waitFor(cluster, () => a.leading() !== b.leading(), 'one leader');

      let worst = 0;
      const unsubscribe = cluster.api.store.subscribe(() => {
        const unavailable = pods(cluster).filter(
          (p) =>
            container(p, 'agent')?.['image'] === 'agent:2' &&
            (containerStatus(p, 'agent')?.['image'] !== 'agent:2' ||
              containerStatus(p, 'agent')?.['ready'] !== true),
        ).length;
        worst = Math.max(worst, unavailable);
      });
      const onNew = (): number =>
        pods(cluster).filter((p) => container(p, 'agent')?.['image'] === 'agent:2').length;
      await updateSidecarSet(cluster, 'agent', (spec) => {
        ((spec['containers'] as { image: string }[])[0] as { image: string }).image = 'agent:2';
      });
      await waitFor(cluster, () => onNew() >= 6, 'the rollout under way');
      const [leader, follower] = a.leading() ? [a, b] : [b, a];
      await leader.stop({ release: false }); // a crash: the Lease is left to expire
      assert.equal(follower.leading(), false, 'the follower waits for the lease to expire');
      await waitFor(
        cluster,
        () => onNew() === 30 && status(cluster, 'agent')?.['updatedReadyPods'] === 30,
        'the rollout to finish',
        30_000,
      );
      unsubscribe();
      assert.equal(follower.leading(), true);
      assert.ok(worst <= 3, `never more than maxUnavailable (3) unavailable; saw ${worst}`);

      const imageWrites = new Map<string, number>();
      for (const r of cluster.api.control.requests(
        (r) =>
          r.method === 'PATCH' &&
          r.resource === 'pods' &&
          r.subresource === undefined &&
          r.status === 200,
      )) {
        const body = r.body as { spec?: { containers?: { image?: string }[] } } | undefined;
        if (body?.spec?.containers?.some((c) => c.image === 'agent:2') !== true) continue;
        imageWrites.set(r.path, (imageWrites.get(r.path) ?? 0) + 1);
      }
      assert.equal(imageWrites.size, 30);
      assert.deepEqual(
        [...new Set(imageWrites.values())],
        [1],
        'each pod was upgraded exactly once',
      );
    } finally {
      await a.stop();
      await b.stop();
      await cluster.close();
    }
  });
});
