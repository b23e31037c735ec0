/**
 * Two controller replicas, each with its own metrics registry wired as `serve` wires it: only the
 * replica that leads exports the per-SidecarSet series (docs/monitoring.md). One that loses the
 * Lease while it keeps running, or stops, exports none of them, not its last values; a deleted
 * SidecarSet's series go too.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { pino } from 'pino';
import { Registry } from 'prom-client';

import { Controller } from '../../src/controller/controller.js';
import { createControllerMetrics } from '../../src/server/controller-metrics.js';
import { LEASES } from '../fake-apiserver/index.js';
import type { TestCluster } from './cluster.js';
import {
  createSidecarSet,
  eventually,
  quickLeaderElection,
  setUpAgent,
  sidecarSet,
  startTestCluster,
} from './cluster.js';

/** The series only the leader exports (with their sidecarset label). */
const LEADER_ONLY = ['sidecarset_pods', 'sidecarset_rollout_paused', 'sidecarset_missed_pods'];

interface Replica {
  identity: string;
  controller: Controller;
  registry: Registry;
}

function replica(cluster: TestCluster, identity: string): Replica {
  const registry = new Registry();
  const hooks = createControllerMetrics(registry, () => ({
    leading: controller.leading(),
    cachedPods: controller.cachedPods(),
  }));
  const controller = new Controller({
    kubeConfig: cluster.api.kubeConfig(),
    logger: pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' }),
    qps: 1000,
    burst: 1000,
    missedPodsResyncMs: 200,
    leaderElection: quickLeaderElection(identity),
    ...hooks,
  });
  return { identity, controller, registry };
}

/** `name{labels}` of every leader-only series the replica exports, sorted. */
async function leaderSeries(r: Replica): Promise<string[]> {
  const text = await r.registry.metrics();
  return text
    .split('\n')
    .filter((line) => LEADER_ONLY.some((name) => line.startsWith(`${name}{`)))
    .map((line) => line.slice(0, line.lastIndexOf(' ')))
    .sort();
}

async function leaderGauge(r: Replica): Promise<number | undefined> {
  const metric = await r.registry.getSingleMetric('sidecarset_controller_leader')?.get();
  return metric?.values[0]?.value;
}

/** Every leader-only series for each SidecarSet in `names` (values not compared). */
function allSeriesOf(names: readonly string[]): string[] {
  return names
    .flatMap((ss) => [
      ...['matched', 'ready', 'updated', 'updated_ready'].map(
        (state) => `sidecarset_pods{sidecarset="${ss}",state="${state}"}`,
      ),
      `sidecarset_rollout_paused{sidecarset="${ss}"}`,
      `sidecarset_missed_pods{sidecarset="${ss}"}`,
    ])
    .sort();
}

describe('leader-only metrics', () => {
  it('leave with leadership: lease taken, stop, and a deleted SidecarSet', async () => {
    const cluster = await startTestCluster({ controller: false });
    const a = replica(cluster, 'replica-a');
    const b = replica(cluster, 'replica-b');
    const replicas = [a, b];
    try {
      await a.controller.start();
      await eventually(() => Promise.resolve(a.controller.leading()), 'a leads');
      await b.controller.start();
      await setUpAgent(cluster, 2, { maxUnavailable: 1 });
      await createSidecarSet(
        cluster,
        sidecarSet('extra', {
          selector: { matchLabels: { app: 'none' } },
          containers: [{ name: 'extra', image: 'extra:1' }],
        }),
      );
      const both = allSeriesOf(['agent', 'extra']);
      await eventually(
        async () => JSON.stringify(await leaderSeries(a)) === JSON.stringify(both),
        'the leader exports every series of both SidecarSets',
      );
      assert.deepEqual(await leaderSeries(b), [], 'the follower exports none');
      assert.equal(await leaderGauge(a), 1);
      assert.equal(await leaderGauge(b), 0);

      // b takes the Lease while a keeps running (a partition healed, say): a learns at its next
      // renewal that it no longer leads.
      cluster.api.store.mutate(LEASES, 'default', 'sidecarset-controller', (lease) => {
        (lease['spec'] as Record<string, unknown>)['holderIdentity'] = b.identity;
      });
      await eventually(
        () => Promise.resolve(b.controller.leading() && !a.controller.leading()),
        'b leads, a does not',
      );
      assert.deepEqual(await leaderSeries(a), [], 'a no longer exports them');
      await eventually(
        async () => JSON.stringify(await leaderSeries(b)) === JSON.stringify(both),
        'b exports them',
      );
      assert.equal(await leaderGauge(a), 0);
      assert.equal(await leaderGauge(b), 1);
      // Rounds of a cut short by the end of leadership are not errors.
      const errors = await a.registry
        .getSingleMetric('sidecarset_controller_reconciles_total')
        ?.get();
      assert.equal(
        errors?.values.find((v) => v.labels['result'] === 'error'),
        undefined,
      );

      await cluster.custom.deleteClusterCustomObject({
        group: 'apps.kruise.io',
        version: 'v1beta1',
        plural: 'sidecarsets',
        name: 'extra',
      });
      const agentOnly = allSeriesOf(['agent']);
      await eventually(
        async () => JSON.stringify(await leaderSeries(b)) === JSON.stringify(agentOnly),
        "the deleted SidecarSet's series gone from the leader",
      );

      // b stops (the process would go on serving the webhook): a leads again and sets them.
      await b.controller.stop();
      assert.deepEqual(await leaderSeries(b), [], 'b, stopped, exports none');
      assert.equal(await leaderGauge(b), 0);
      await eventually(
        async () => JSON.stringify(await leaderSeries(a)) === JSON.stringify(agentOnly),
        'a, leading again, exports them',
      );
    } finally {
      await Promise.all(replicas.map((r) => r.controller.stop()));
      await cluster.close();
    }
  });
});
