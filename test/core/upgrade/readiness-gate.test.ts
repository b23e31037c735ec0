/**
 * The readiness gate from the pod's state (src/core/upgrade/readiness-gate.ts): who closed it,
 * when it may open, and the budget its closed gates take (src/core/upgrade/plan.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Pod } from '../../../src/core/api/k8s-types.js';
import { sidecarSetContext } from '../../../src/core/upgrade/context.js';
import { planUpgrade } from '../../../src/core/upgrade/plan.js';
import {
  closedGate,
  gateCondition,
  gatesToOpen,
  isGateClosedBy,
} from '../../../src/core/upgrade/readiness-gate.js';
import { SET, applied, names, upgradePod, upgradeSidecarSet } from '../../support/upgrade-pods.js';

const now = new Date('2026-07-02T10:00:00Z');
const ctx = sidecarSetContext(upgradeSidecarSet({ maxUnavailable: 1 }));

/** The pod with the gate declared and its condition as given (not Ready when it is False). */
function gated(pod: Pod, gate: ReturnType<typeof gateCondition>): Pod {
  pod.spec.readinessGates = [{ conditionType: 'InPlaceUpdateReady' }];
  const conditions = (pod.status?.conditions ?? []).filter((c) => c.type !== 'Ready');
  const ready = { type: 'Ready', status: gate.status, lastTransitionTime: '2026-01-01T00:00:00Z' };
  pod.status = { ...pod.status, conditions: [...conditions, ready, gate] };
  return pod;
}

const closedByUs = (pod: Pod): Pod => gated(pod, closedGate(SET, now));

describe('who closed the gate', () => {
  it('the SidecarSet its message names', () => {
    assert.equal(isGateClosedBy(SET, closedByUs(upgradePod(0))), true);
    assert.equal(isGateClosedBy('other', closedByUs(upgradePod(0))), false);
  });

  it('an open gate, or one closed for another reason, is nobody’s', () => {
    const open = gated(upgradePod(0), gateCondition('True', 'InPlaceUpdateFinished', '', now));
    assert.equal(isGateClosedBy(SET, open), false);
    const other = gated(upgradePod(0), gateCondition('False', 'SomethingElse', '', now));
    assert.equal(isGateClosedBy(SET, other), false);
  });

  it('without a message: version 0.1’s, so ours, unless a CloneSet manages the pod', () => {
    const legacy = gateCondition('False', 'StartInPlaceUpdate', '', now);
    assert.equal(isGateClosedBy(SET, gated(upgradePod(0), legacy)), true);
    const cloneSetPod = upgradePod(1);
    cloneSetPod.metadata.ownerReferences = [
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        name: 'web',
        uid: 'u',
        controller: true,
      },
    ];
    assert.equal(isGateClosedBy(SET, gated(cloneSetPod, legacy)), false);
  });
});

describe('gatesToOpen', () => {
  it('opens a finished upgrade whose sidecar is ready, and a pod whose write never happened', () => {
    const finished = closedByUs(applied(upgradePod(0, { upgraded: true })));
    const neverWritten = closedByUs(upgradePod(1));
    assert.deepEqual(
      gatesToOpen(ctx, [finished, neverWritten]).map((p) => p.metadata.name),
      ['pod-0', 'pod-1'],
    );
  });

  it('keeps closed an upgrade the kubelet has not applied, or whose new sidecar is not ready', () => {
    const restarting = closedByUs(upgradePod(0, { upgraded: true }));
    const notReady = closedByUs(applied(upgradePod(1, { upgraded: true })));
    for (const s of notReady.status?.containerStatuses ?? []) s.ready = false;
    assert.deepEqual(gatesToOpen(ctx, [restarting, notReady]), []);
  });

  it('opens an upgrade a newer revision overtook once the kubelet applied it, ready or not', () => {
    const overtaken = closedByUs(applied(upgradePod(0, { upgraded: true, previous: true })));
    for (const s of overtaken.status?.containerStatuses ?? []) s.ready = false;
    assert.deepEqual(
      gatesToOpen(ctx, [overtaken]).map((p) => p.metadata.name),
      ['pod-0'],
    );
  });

  it('leaves the gates other SidecarSets closed', () => {
    assert.deepEqual(gatesToOpen(ctx, [gated(upgradePod(0), closedGate('other', now))]), []);
  });
});

describe('closed gates use the budget', () => {
  it('a pod behind a gate this SidecarSet closed counts as unavailable', () => {
    const ss = upgradeSidecarSet({ maxUnavailable: 1 });
    const fleet = [closedByUs(upgradePod(0)), upgradePod(1), upgradePod(2)];
    const plan = planUpgrade(ss, fleet, { now });
    assert.equal(plan.budget.unavailable, 1);
    // Only the gated pod, which needs no more budget: the ready ones wait.
    assert.deepEqual(names(plan.upgrade), ['pod-0']);
    assert.deepEqual(
      plan.held.map((h) => h.reason),
      ['MaxUnavailable', 'MaxUnavailable'],
    );
  });

  it('counts a closed gate the kubelet has not seen yet (the pod still Ready)', () => {
    const ss = upgradeSidecarSet({ maxUnavailable: 1 });
    const lagging = gated(upgradePod(0), closedGate(SET, now));
    for (const c of lagging.status?.conditions ?? []) if (c.type === 'Ready') c.status = 'True';
    const plan = planUpgrade(ss, [lagging, upgradePod(1)], { now });
    assert.equal(plan.budget.unavailable, 1);
    assert.deepEqual(names(plan.upgrade), []);
  });

  it('a pod kept out only by a gate opened again costs budget: its containers are ready', () => {
    const ss = upgradeSidecarSet({ maxUnavailable: 1 });
    const reopened = gated(upgradePod(0), gateCondition('True', 'InPlaceUpdateFailed', '', now));
    reopened.status?.conditions?.push({ type: 'ContainersReady', status: 'True' });
    for (const c of reopened.status?.conditions ?? []) if (c.type === 'Ready') c.status = 'False';
    const plan = planUpgrade(ss, [reopened, upgradePod(1)], { now });
    assert.equal(plan.upgrade.length, 1, 'one pod taken down, not two');
  });

  it('a gate another SidecarSet closed does not', () => {
    const ss = upgradeSidecarSet({ maxUnavailable: 1 });
    const fleet = [gated(upgradePod(0), closedGate('other', now)), upgradePod(1), upgradePod(2)];
    assert.equal(planUpgrade(ss, fleet, { now }).budget.unavailable, 0);
  });
});
