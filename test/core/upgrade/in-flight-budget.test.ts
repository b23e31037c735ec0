/**
 * maxUnavailable across back-to-back revisions (issue 20). Pods this controller upgraded in place
 * to an earlier revision and that are still restarting carry an older hash once the SidecarSet
 * changes again: they are not "updated", but they are unavailable because of our write, so they
 * count toward maxUnavailable (OpenKruise does not count them: docs/adr/0018-in-flight-upgrades-use-budget.md).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Pod } from '../../../src/core/api/k8s-types.js';
import type { SidecarSet } from '../../../src/core/api/sidecarset-types.js';
import { applyPodUpgrade } from '../../../src/core/rollout/simulate.js';
import { planUpgrade } from '../../../src/core/upgrade/plan.js';
import type { UpgradePlan } from '../../../src/core/upgrade/types.js';
import {
  SIDECAR,
  applied,
  names,
  podFleet,
  runsSpecReady,
  upgradePod,
  upgradeSidecarSet,
} from '../../support/upgrade-pods.js';

const now = new Date('2026-07-02T10:00:00Z');

/** The SidecarSet at v2 (hash NEW_HASH, as upgradeSidecarSet) or at v3, maxUnavailable 2. */
function sidecarSet(version: 2 | 3): SidecarSet {
  const ss = upgradeSidecarSet({ maxUnavailable: 2 });
  if (version === 3) {
    ss.metadata.annotations = { ...ss.metadata.annotations, 'kruise.io/sidecarset-hash': 'ccc' };
    ss.spec.containers = [{ name: SIDECAR, image: 'test-sidecar:v3' }];
  }
  return ss;
}

/** The pods after the plan's writes (the kubelet has not reacted yet). */
function written(pods: readonly Pod[], plan: UpgradePlan): Pod[] {
  const byName = new Map(plan.upgrade.map((u) => [u.pod.name, u]));
  return pods.map((pod) => {
    const u = byName.get(pod.metadata.name ?? '');
    return u === undefined ? pod : applyPodUpgrade(pod, u);
  });
}

/** The pods not Running and Ready on their spec images, by name. */
function unavailable(pods: readonly Pod[]): string[] {
  return pods.filter((pod) => !runsSpecReady(pod)).map((pod) => pod.metadata.name ?? '');
}

/** The kubelet restarted the sidecar on its new image; its readiness probe does not pass yet. */
function restartedNotReady(pod: Pod): Pod {
  const next = applied(pod);
  for (const s of next.status?.containerStatuses ?? []) if (s.name === SIDECAR) s.ready = false;
  for (const c of next.status?.conditions ?? []) if (c.type === 'Ready') c.status = 'False';
  return next;
}

/** Round 1 of v2 on 6 ready pods: two pods written, as the kubelet has not seen them yet. */
function firstRound(): { pods: Pod[]; inFlight: string[] } {
  const pods = podFleet(6);
  const plan = planUpgrade(sidecarSet(2), pods, { now });
  assert.equal(plan.upgrade.length, 2);
  return { pods: written(pods, plan), inFlight: names(plan.upgrade) };
}

describe('planUpgrade: maxUnavailable across back-to-back revisions (issue 20)', () => {
  it('v2 written to 2 pods, not yet restarted; v3 takes no ready pod while they are in flight', () => {
    const { pods, inFlight } = firstRound();
    assert.deepEqual(unavailable(pods), [...inFlight].sort());
    const plan = planUpgrade(sidecarSet(3), pods, { now });
    const after = unavailable(written(pods, plan));
    assert.ok(after.length <= 2, `unavailable after the round: ${after.join()}`);
    assert.equal(plan.budget.unavailable, 2, 'the two pods restarting for v2 count');
    assert.deepEqual(names(plan.upgrade), []);
  });

  it('v2 restarted on 2 pods but not ready yet; v3 takes those two (free) and no ready pod', () => {
    const first = firstRound();
    const pods = first.pods.map((p) =>
      first.inFlight.includes(p.metadata.name ?? '') ? restartedNotReady(p) : p,
    );
    const plan = planUpgrade(sidecarSet(3), pods, { now });
    const after = unavailable(written(pods, plan));
    assert.deepEqual(after, [...first.inFlight].sort(), 'unavailable after the round');
    assert.equal(plan.budget.unavailable, 2);
    assert.deepEqual(names(plan.upgrade).sort(), after);
    assert.equal(plan.budget.unavailableAfter, 2);
  });

  it('a pod upgraded in place earlier that runs its image ready again does not count', () => {
    const { pods, inFlight } = firstRound();
    const settled = pods.map((p) => (inFlight.includes(p.metadata.name ?? '') ? applied(p) : p));
    const plan = planUpgrade(sidecarSet(3), settled, { now });
    assert.equal(plan.budget.unavailable, 0);
    assert.equal(plan.upgrade.length, 2);
  });

  it('a pod never upgraded in place that is not ready still counts for nothing (as OpenKruise)', () => {
    const pods = [upgradePod(0, { ready: false }), ...podFleet(5).slice(1)];
    const plan = planUpgrade(sidecarSet(3), pods, { now });
    assert.equal(plan.budget.unavailable, 0);
    assert.equal(plan.upgrade.length, 3, 'the not-ready pod, free, and two ready ones');
  });

  it('an in-place-update state that does not parse, or records no container, counts for nothing', () => {
    const pods = ['{not json', '{"test-sidecarset":{"revision":"aaa"}}'].map((state, i) => {
      const pod = upgradePod(i, { ready: false });
      pod.metadata.annotations = {
        ...pod.metadata.annotations,
        'kruise.io/sidecarset-inplace-update-state': state,
      };
      return pod;
    });
    const plan = planUpgrade(sidecarSet(3), [...pods, ...podFleet(6).slice(2)], { now });
    assert.equal(plan.budget.unavailable, 0);
  });
});
