/**
 * A leader whose process was frozen past its renew deadline (SIGSTOP, a very long pause) learns it
 * before its next round writes anything: the round asks the election, which reads the clock and
 * steps down, even though the election's own deadline timer has not run yet
 * (docs/adr/0016-leader-only-metrics.md). The freeze is played with the controller's clock,
 * which the election shares, jumped past the deadline; the Lease renewals fail from then on so
 * that only the clock can end the leadership within the test.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';

import { pino } from 'pino';

import { Controller } from '../../src/controller/controller.js';
import { LEASES } from '../fake-apiserver/index.js';
import {
  container,
  eventually,
  pods,
  setUpAgent,
  startTestCluster,
  status,
  updateSidecarSet,
} from './cluster.js';

describe('a leader frozen past its renew deadline', () => {
  it('steps down at its next round and writes nothing in it', async () => {
    const cluster = await startTestCluster({ controller: false });
    let frozenForMs = 0;
    const controller = new Controller({
      kubeConfig: cluster.api.kubeConfig(),
      logger: pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' }),
      qps: 1000,
      burst: 1000,
      now: () => new Date(Date.now() + frozenForMs),
      leaderElection: {
        namespace: 'default',
        name: 'sidecarset-controller',
        identity: 'frozen',
        leaseDurationMs: 60_000,
        renewDeadlineMs: 40_000,
        retryPeriodMs: 10_000,
      },
    });
    try {
      await controller.start();
      await eventually(() => Promise.resolve(controller.leading()), 'leading');
      await setUpAgent(cluster, 2, { maxUnavailable: 2 });
      await eventually(
        () => Promise.resolve(status(cluster, 'agent')?.['matchedPods'] === 2),
        'the first round done',
      );

      cluster.api.control.failNext({
        match: (r) => r.resource === LEASES.resource && r.verb !== 'get',
        status: 500,
        times: 1000,
      });
      frozenForMs = 120_000;
      await updateSidecarSet(cluster, 'agent', (spec) => {
        ((spec['containers'] as { image: string }[])[0] as { image: string }).image = 'agent:2';
      });
      // Time for a round that had not stepped down to patch the pods.
      await sleep(1_500);
      assert.deepEqual(
        pods(cluster).map((p) => container(p, 'agent')?.['image']),
        ['agent:1', 'agent:1'],
        'no pod upgraded by the frozen leader',
      );
      assert.equal(controller.leading(), false, 'stepped down');
    } finally {
      await controller.stop();
      await cluster.close();
    }
  });
});
