/**
 * Ready for long enough to count as available (core/upgrade/availability.ts): a Deployment's
 * minReadySeconds in the update strategy, and a settling time after a sidecar restarted since its
 * upgrade, so that a sidecar without a readiness probe crashing in a loop does not free the budget.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Pod } from '../../../src/core/api/k8s-types.js';
import { UPGRADE_BASELINE } from '../../../src/core/pod-annotations/upgrade-baseline.js';
import { planUpgrade } from '../../../src/core/upgrade/plan.js';
import {
  NEW_HASH,
  SET,
  SIDECAR,
  names,
  upgradePod,
  upgradeSidecarSet,
} from '../../support/upgrade-pods.js';

/** Seconds after the fixtures' base time. */
const at = (seconds: number): Date => new Date(Date.parse('2026-01-01T00:00:00Z') + seconds * 1000);

/** pod-0 upgraded and running the new sidecar, Ready since `readySince`; pod-1, pod-2 on the old. */
function fleet(readySince: number, pod0: Partial<Parameters<typeof upgradePod>[1]> = {}): Pod[] {
  return [
    upgradePod(0, { done: true, readySince, ...pod0 }),
    upgradePod(1, { createdAt: 1 }),
    upgradePod(2, { createdAt: 2 }),
  ];
}

describe('availability', () => {
  it('minReadySeconds: a pod Ready for less counts against maxUnavailable until then', () => {
    const ss = upgradeSidecarSet({ maxUnavailable: 1, minReadySeconds: 30 });
    const settling = planUpgrade(ss, fleet(100), { now: at(110) });
    assert.deepEqual(names(settling.upgrade), []);
    assert.equal(settling.budget.unavailable, 1);
    assert.equal(settling.status.readyPods, 2);
    assert.deepEqual(settling.availableAt, at(130), 'plan again when it counts');
    const settled = planUpgrade(ss, fleet(100), { now: at(131) });
    assert.equal(names(settled.upgrade).length, 1);
    assert.equal(settled.availableAt, undefined);
    // Without minReadySeconds, Ready is enough.
    const plain = planUpgrade(upgradeSidecarSet({ maxUnavailable: 1 }), fleet(100), {
      now: at(110),
    });
    assert.equal(names(plain.upgrade).length, 1);
  });

  it('a sidecar restarted since its upgrade must stay Ready 10 s before it counts again', () => {
    const baseline = JSON.stringify({
      [SET]: {
        hash: NEW_HASH,
        upgradedAt: '2026-01-01T00:00:50Z',
        podReady: true,
        restarts: { [SIDECAR]: 0 },
      },
    });
    // restartCount 2: one to apply the new image, one crash since.
    const crashed = (pod: Pod): Pod => {
      pod.metadata.annotations = { ...pod.metadata.annotations, [UPGRADE_BASELINE]: baseline };
      const status = pod.status?.containerStatuses?.find((s) => s.name === SIDECAR);
      if (status !== undefined) status.restartCount = 2;
      return pod;
    };
    const ss = upgradeSidecarSet({ maxUnavailable: 1 });
    const pods = (): Pod[] => {
      const [first, ...rest] = fleet(100);
      return first === undefined ? rest : [crashed(first), ...rest];
    };
    const justUp = planUpgrade(ss, pods(), { now: at(103) });
    assert.deepEqual(names(justUp.upgrade), [], 'Ready again 3 s after a crash: not available');
    assert.deepEqual(justUp.availableAt, at(110));
    assert.equal(names(planUpgrade(ss, pods(), { now: at(111) }).upgrade).length, 1);
    // Only the restart that applied the image: available at once.
    const applied = (): Pod[] =>
      pods().map((p, i) => {
        const status = p.status?.containerStatuses?.find((s) => s.name === SIDECAR);
        if (i === 0 && status !== undefined) status.restartCount = 1;
        return p;
      });
    assert.equal(names(planUpgrade(ss, applied(), { now: at(103) }).upgrade).length, 1);
  });
});
