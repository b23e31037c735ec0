import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { SidecarSetUpdateStrategy } from '../../../src/core/api/sidecarset-types.js';
import { simulateRollout } from '../../../src/core/rollout/simulate.js';
import { podFleet, upgradePod, upgradeSidecarSet } from '../../support/upgrade-pods.js';

const now = new Date('2026-07-02T10:00:00Z');

function simulate(strategy: SidecarSetUpdateStrategy, pods = podFleet(1000)) {
  return simulateRollout(upgradeSidecarSet(strategy), pods, { now });
}

describe('simulateRollout', () => {
  it('partition 980, maxUnavailable 10%: one wave of 20, then the partition holds', () => {
    const sim = simulate({ partition: 980, maxUnavailable: '10%' });
    assert.deepEqual(
      sim.waves.map((w) => [w.pods.length, w.unavailable]),
      [[20, 20]],
    );
    assert.equal(sim.end, 'Partition');
    assert.equal(sim.final.updatedPods, 20);
    assert.equal(sim.final.updatedReadyPods, 20);
  });

  it('no partition, maxUnavailable 10%: ten waves of 100', () => {
    const sim = simulate({ maxUnavailable: '10%' });
    assert.equal(sim.waves.length, 10);
    assert.ok(sim.waves.every((w) => w.pods.length === 100 && w.unavailable <= 100));
    assert.equal(sim.end, 'Complete');
    assert.equal(sim.final.updatedReadyPods, 1000);
  });

  it('100 pods, partition 50, maxUnavailable 10: 50 upgraded, never more than 10 at once', () => {
    const sim = simulate({ partition: 50, maxUnavailable: 10 }, podFleet(100));
    assert.equal(
      sim.waves.reduce((n, w) => n + w.pods.length, 0),
      50,
    );
    assert.ok(sim.waves.every((w) => w.unavailable <= 10));
    assert.equal(sim.end, 'Partition');
  });

  it('100 pods, partition 80, maxUnavailable 30: 20 at once', () => {
    const sim = simulate({ partition: 80, maxUnavailable: 30 }, podFleet(100));
    assert.deepEqual(
      sim.waves.map((w) => w.pods.length),
      [20],
    );
  });

  it('not-ready pods are counted; the end reasons', () => {
    const pods = [upgradePod(0, { ready: false }), upgradePod(1, { withoutImage: 'x' })];
    const sim = simulate({}, pods);
    assert.equal(sim.waves[0]?.notReadyTaken, 1);
    assert.equal(sim.end, 'NotUpgradable');
    assert.equal(simulate({ paused: true }, pods).end, 'Paused');
    assert.equal(simulate({ type: 'NotUpdate' }, pods).end, 'NotUpdate');
    const canary = simulate({ selector: { matchLabels: { canary: 'true' } } }, pods);
    assert.equal(canary.end, 'Held');
    assert.match(canary.message, /NotSelected/);
    const limited = simulateRollout(upgradeSidecarSet({}), podFleet(3), { now, maxWaves: 1 });
    assert.equal(limited.end, 'WaveLimit');
  });

  it('a pod without container statuses gets them when it settles', () => {
    const pod = upgradePod(0, { phase: 'Pending', ready: false });
    delete pod.status?.containerStatuses;
    const sim = simulate({}, [pod]);
    assert.equal(sim.end, 'Complete');
    assert.equal(sim.final.readyPods, 1);
  });

  it('a failing image on 20 pods, maxUnavailable 50%: one wave of 10, then UnhealthyPods', () => {
    const sim = simulateRollout(upgradeSidecarSet({ maxUnavailable: '50%' }), podFleet(20), {
      now,
      failImages: ['test-sidecar:v2'],
    });
    assert.deepEqual(
      sim.waves.map((w) => w.pods.length),
      [10],
    );
    assert.equal(sim.touched, 10);
    assert.equal(sim.end, 'UnhealthyPods');
    assert.equal(sim.last.held.length, 10);
    assert.ok(sim.last.held.every((h) => h.reason === 'UnhealthyPods'));
    const healthy = simulateRollout(upgradeSidecarSet({ maxUnavailable: '50%' }), podFleet(20), {
      now,
      failImages: ['another:1'],
    });
    assert.equal(healthy.end, 'Complete');
    assert.equal(healthy.touched, 20);
  });
});
