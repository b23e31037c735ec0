/**
 * Ready, Reconciling and Stalled (src/core/status/status-conditions.ts) from plain planner summaries.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { SidecarSet, SidecarSetCondition } from '../../../src/core/api/sidecarset-types.js';
import type { RolloutSummary } from '../../../src/core/status/status-conditions.js';
import { rolloutSummary } from '../../support/rollout-summary.js';
import {
  READY,
  RECONCILING,
  STALLED,
  nextStatusConditions,
  rolloutState,
} from '../../../src/core/status/status-conditions.js';

const T0 = new Date('2026-01-01T00:00:00Z');
const T1 = new Date('2026-01-01T00:05:00Z');

const sidecarSet = (generation = 2): SidecarSet => ({
  metadata: { name: 'logtail', generation },
  spec: { selector: {} },
});

const summary = rolloutSummary;

const done = { matchedPods: 4, updatedPods: 4, updatedReadyPods: 4 };

/** The conditions that are True, and the reason: "Ready RolloutComplete", "none Paused". */
function verdict(s: RolloutSummary): string {
  const state = rolloutState(s);
  const which = [
    state.ready ? READY : '',
    state.reconciling ? RECONCILING : '',
    state.stalled ? STALLED : '',
  ].filter((t) => t !== '');
  return `${which.join('+') || 'none'} ${state.reason}`;
}

describe('rolloutState', () => {
  it('is Ready when every matched pod is updated and ready, whatever else holds', () => {
    assert.equal(verdict(summary({ status: done, stopped: 'Complete' })), 'Ready RolloutComplete');
    assert.equal(verdict(summary({ status: done, stopped: 'Paused' })), 'Ready RolloutComplete');
    const none = { matchedPods: 0, updatedPods: 0, updatedReadyPods: 0 };
    assert.equal(rolloutState(summary({ status: none })).ready, true);
  });

  it('is Reconciling while pods are upgraded, flipped, in flight or not ready yet', () => {
    const pod = { namespace: 'default', name: 'a' };
    const moving: Partial<RolloutSummary>[] = [
      { upgrade: [pod] },
      { flip: [pod] },
      { budget: { unavailable: 1 } },
      { held: [{ reason: 'MaxUnavailable' }] },
      { held: [{ reason: 'UpgradeInFlight' }] },
      { held: [{ reason: 'HotUpgradeFlip' }] },
      { status: { matchedPods: 4, updatedPods: 4, updatedReadyPods: 3 }, stopped: 'Complete' },
      // Held on purpose, but an upgraded pod is not ready yet.
      {
        status: { matchedPods: 4, updatedPods: 2, updatedReadyPods: 1 },
        held: [{ reason: 'Partition' }, { reason: 'Partition' }],
      },
    ];
    for (const m of moving) {
      assert.equal(verdict(summary(m)), 'Reconciling Progressing', JSON.stringify(m));
    }
    assert.match(rolloutState(summary({ upgrade: [pod] })).message, /1 of 4 pods updated/);
  });

  it('is Ready once the partition or the canary selector keeps the rest back', () => {
    const partitioned = summary({ held: [{ reason: 'Partition' }, { reason: 'NotSelected' }] });
    assert.equal(verdict(partitioned), 'Ready PartitionComplete');
    assert.match(rolloutState(partitioned).message, /2 pod\(s\) kept on the old version/);
  });

  it('is Stalled when failed upgraded pods paused the rollout, even if a user paused it too', () => {
    const health = { pause: true, message: 'pod default/a: CrashLoopBackOff' };
    for (const stopped of ['UnhealthyPods', 'Paused'] as const) {
      assert.equal(verdict(summary({ stopped, health })), 'Stalled UnhealthyPods');
      assert.match(rolloutState(summary({ stopped, health })).message, /CrashLoopBackOff$/);
    }
    // A finished rollout with failing pods: RolloutPaused is not set then, neither is Stalled.
    const finished = summary({
      stopped: 'Complete',
      health,
      status: { matchedPods: 4, updatedPods: 4, updatedReadyPods: 3 },
    });
    assert.equal(rolloutState(finished).stalled, false);
  });

  it('is Stalled when only pods that cannot be upgraded are left', () => {
    const pod = { namespace: 'default', name: 'a' };
    assert.equal(verdict(summary({ notUpgradable: [pod, pod] })), 'Stalled NotUpgradablePods');
    const patchError = summary({
      held: [{ reason: 'PatchPodMetadataError' }, { reason: 'Partition' }],
    });
    assert.equal(verdict(patchError), 'Stalled PatchPodMetadataError');
    // Other pods still move: Reconciling, and the message says what will be left.
    const both = summary({ notUpgradable: [pod], upgrade: [pod] });
    assert.equal(verdict(both), 'Reconciling Progressing');
    assert.match(rolloutState(both).message, /1 pod\(s\) cannot be upgraded/);
  });

  it('is neither Ready, Reconciling nor Stalled when a user paused the rollout', () => {
    const held = [{ reason: 'Paused' as const }];
    assert.equal(verdict(summary({ stopped: 'Paused', held })), 'none Paused');
  });

  it('is Ready with updateStrategy.type NotUpdate: pods keep their version by design', () => {
    const held = [{ reason: 'NotUpdate' as const }];
    assert.equal(verdict(summary({ stopped: 'NotUpdate', held })), 'Ready NotUpdate');
  });

  it('says in progress, not done, for a state it does not know', () => {
    assert.equal(verdict(summary()), 'Reconciling Progressing');
  });
});

describe('nextStatusConditions', () => {
  /** The conditions by type; a missing one fails the test. */
  const byType =
    (conditions: readonly SidecarSetCondition[] | undefined) =>
    (type: string): SidecarSetCondition => {
      const found = conditions?.find((c) => c.type === type);
      assert.ok(found !== undefined, `no condition ${type}`);
      return found;
    };

  it('adds the three conditions with the generation, keeping the others in place', () => {
    const paused: SidecarSetCondition = {
      type: 'RolloutPaused',
      status: 'False',
      reason: 'Resumed',
    };
    const next = nextStatusConditions([paused], sidecarSet(3), summary({ upgrade: [{}] }), T0);
    assert.ok(next !== undefined);
    assert.deepEqual(
      next.map((c) => c.type),
      ['RolloutPaused', READY, RECONCILING, STALLED],
    );
    assert.equal(next[0], paused);
    for (const c of next.slice(1)) {
      assert.equal(c.observedGeneration, 3);
      assert.equal(c.lastTransitionTime, '2026-01-01T00:00:00Z');
      assert.equal(c.reason, 'Progressing');
    }
    assert.deepEqual(
      next.slice(1).map((c) => c.status),
      ['False', 'True', 'False'],
    );
  });

  it('returns undefined when nothing changes, and keeps lastTransitionTime while a status holds', () => {
    const first = nextStatusConditions(undefined, sidecarSet(), summary({ upgrade: [{}] }), T0);
    assert.equal(
      nextStatusConditions(first, sidecarSet(), summary({ upgrade: [{}] }), T1),
      undefined,
    );
    // The counts move: messages change, statuses and their times do not.
    const later = summary({
      upgrade: [{}],
      status: { matchedPods: 4, updatedPods: 3, updatedReadyPods: 2 },
    });
    const moved = byType(nextStatusConditions(first, sidecarSet(), later, T1));
    assert.match(moved(READY).message ?? '', /3 of 4 pods updated/);
    for (const type of [READY, RECONCILING, STALLED]) {
      assert.equal(moved(type).lastTransitionTime, '2026-01-01T00:00:00Z', type);
    }
    // Done: Ready and Reconciling flip (new time), Stalled stays False (old time).
    const finished = byType(
      nextStatusConditions(
        [READY, RECONCILING, STALLED].map(moved),
        sidecarSet(),
        summary({ status: done }),
        T1,
      ),
    );
    assert.equal(finished(READY).status, 'True');
    assert.equal(finished(READY).lastTransitionTime, '2026-01-01T00:05:00Z');
    assert.equal(finished(RECONCILING).status, 'False');
    assert.equal(finished(RECONCILING).lastTransitionTime, '2026-01-01T00:05:00Z');
    assert.equal(finished(STALLED).lastTransitionTime, '2026-01-01T00:00:00Z');
  });

  it('rewrites the conditions for a new generation even when the state is the same', () => {
    const first = nextStatusConditions(undefined, sidecarSet(2), summary({ status: done }), T0);
    const next = byType(nextStatusConditions(first, sidecarSet(3), summary({ status: done }), T1));
    assert.equal(next(READY).observedGeneration, 3);
    assert.equal(next(READY).lastTransitionTime, '2026-01-01T00:00:00Z');
  });

  it('leaves observedGeneration out when the SidecarSet has no generation', () => {
    const ss: SidecarSet = { metadata: { name: 'x' }, spec: { selector: {} } };
    const next = nextStatusConditions([], ss, summary({ status: done }), T0);
    assert.ok(next?.every((c) => !('observedGeneration' in c)));
  });
});
