/**
 * The SidecarSet status conditions Ready, Reconciling and Stalled, in the kstatus convention
 * (sigs.k8s.io/cli-utils/pkg/kstatus), so that `kubectl wait --for=condition=Ready`, Flux's health
 * checks and the Argo CD health check (docs/argocd/health.lua) read a rollout's progress
 * (docs/gitops.md). Pure: computed from the planner's result for the SidecarSet's current spec.
 *
 * Each condition carries the metadata.generation it was computed for; the controller computes them
 * only for the spec it has just read, so "the generation is not observed yet" is what a reader
 * sees when status.observedGeneration (and the conditions' observedGeneration) lag
 * metadata.generation, as kstatus, kubectl wait and the Argo CD check all read it.
 */
import { formatTimestamp } from '../pod-annotations/pod-hash-annotation.js';
import type { SidecarSet, SidecarSetCondition } from '../api/sidecarset-types.js';
import type { BudgetSummary, HoldReason, UpgradePlan, UpgradeStatus } from '../upgrade/types.js';

export const READY = 'Ready';
export const RECONCILING = 'Reconciling';
export const STALLED = 'Stalled';
const KSTATUS_CONDITIONS = [READY, RECONCILING, STALLED] as const;

/** The reason all three conditions carry: where the rollout stands. */
const ROLLOUT_STATE_REASONS = {
  /** Ready: every matched pod runs the current version and is ready. */
  complete: 'RolloutComplete',
  /** Ready: done up to updateStrategy.partition or updateStrategy.selector, which keep the rest. */
  partitionComplete: 'PartitionComplete',
  /** Ready: updateStrategy.type is NotUpdate, pods keep the version they were injected with. */
  notUpdate: 'NotUpdate',
  /** Reconciling: pods are being upgraded, or upgraded and not ready yet. */
  progressing: 'Progressing',
  /** Neither: updateStrategy.paused, a user's deliberate pause (Ready is False). */
  paused: 'Paused',
  /** Stalled: failed upgraded pods paused the rollout (condition RolloutPaused). */
  unhealthy: 'UnhealthyPods',
  /** Stalled: what is left cannot be upgraded in place (a change beyond images and resources). */
  notUpgradable: 'NotUpgradablePods',
  /** Stalled: what is left cannot take spec.patchPodMetadata. */
  patchPodMetadata: 'PatchPodMetadataError',
} as const;

type RolloutStateReason = (typeof ROLLOUT_STATE_REASONS)[keyof typeof ROLLOUT_STATE_REASONS];

/** What the conditions are computed from: the planner's result (an UpgradePlan is one). */
export interface RolloutSummary {
  status: Pick<UpgradeStatus, 'matchedPods' | 'updatedPods' | 'updatedReadyPods'>;
  stopped?: UpgradePlan['stopped'];
  upgrade: readonly unknown[];
  /** Pods to evict and recreate; `refused` says why the last eviction was refused. */
  recreate: readonly { refused?: string | undefined }[];
  flip: readonly unknown[];
  notUpgradable: readonly unknown[];
  held: readonly { reason: HoldReason }[];
  budget: Pick<BudgetSummary, 'unavailable'>;
  /** The health gate's verdict on the upgraded pods. */
  health?: { pause: boolean; message: string } | undefined;
}

export interface RolloutState {
  ready: boolean;
  reconciling: boolean;
  stalled: boolean;
  reason: RolloutStateReason;
  message: string;
}

/** Pods held on purpose by the strategy: with only these left, the rollout is as done as asked. */
const KEPT: ReadonlySet<HoldReason> = new Set(['Partition', 'NotSelected']);
/** Pods that wait for something under way: the rollout moves on by itself. */
const WAITING: ReadonlySet<HoldReason> = new Set([
  'MaxUnavailable',
  'UpgradeInFlight',
  'HotUpgradeFlip',
]);

/** Where the rollout stands, as Ready / Reconciling / Stalled (docs/gitops.md has the table). */
export function rolloutState(summary: RolloutSummary): RolloutState {
  const { matchedPods, updatedPods, updatedReadyPods } = summary.status;
  const counts = `${updatedPods} of ${matchedPods} pods updated, ${updatedReadyPods} updated and ready`;
  const ready = (reason: RolloutStateReason, message: string): RolloutState => ({
    ready: true,
    reconciling: false,
    stalled: false,
    reason,
    message,
  });
  const stalled = (reason: RolloutStateReason, message: string): RolloutState => ({
    ready: false,
    reconciling: false,
    stalled: true,
    reason,
    message,
  });
  if (updatedPods === matchedPods && updatedReadyPods === matchedPods) {
    return ready(ROLLOUT_STATE_REASONS.complete, `rollout complete: ${counts}`);
  }
  if (summary.stopped === 'NotUpdate') {
    return ready(
      ROLLOUT_STATE_REASONS.notUpdate,
      `updateStrategy.type is NotUpdate, pods keep the version they were injected with: ${counts}`,
    );
  }
  if (summary.stopped !== 'Complete' && summary.health?.pause === true) {
    return stalled(
      ROLLOUT_STATE_REASONS.unhealthy,
      `failed upgraded pods paused the rollout (condition RolloutPaused; ` +
        `sidecarset rollout resume lifts it): ${counts}. ${summary.health.message}`.trimEnd(),
    );
  }
  if (summary.stopped === 'Paused') {
    return {
      ready: false,
      reconciling: false,
      stalled: false,
      reason: ROLLOUT_STATE_REASONS.paused,
      message: `updateStrategy.paused is true: ${counts}`,
    };
  }
  const notUpgradable = summary.notUpgradable.length;
  const patchErrors = summary.held.filter((h) => h.reason === 'PatchPodMetadataError').length;
  const blocked = notUpgradable + patchErrors;
  const moving =
    summary.upgrade.length > 0 ||
    summary.recreate.length > 0 ||
    summary.flip.length > 0 ||
    summary.budget.unavailable > 0 ||
    updatedReadyPods < updatedPods ||
    summary.held.some((h) => WAITING.has(h.reason));
  const progressing = (note: string): RolloutState => ({
    ready: false,
    reconciling: true,
    stalled: false,
    reason: ROLLOUT_STATE_REASONS.progressing,
    message: `rollout in progress: ${counts}${note}`,
  });
  if (moving) {
    const refused = summary.recreate.filter((r) => r.refused !== undefined);
    const notes = [
      blocked === 0 ? '' : `; ${blocked} pod(s) cannot be upgraded`,
      refused.length === 0
        ? ''
        : `; ${refused.length} pod(s) cannot be evicted now: ${refused[0]?.refused ?? ''}`,
    ];
    return progressing(notes.join(''));
  }
  if (notUpgradable > 0) {
    return stalled(
      ROLLOUT_STATE_REASONS.notUpgradable,
      `${notUpgradable} pod(s) cannot be upgraded in place (a change beyond images and ` +
        `resources; recreate them): ${counts}`,
    );
  }
  if (patchErrors > 0) {
    return stalled(
      ROLLOUT_STATE_REASONS.patchPodMetadata,
      `spec.patchPodMetadata cannot be applied to ${patchErrors} pod(s): ${counts}`,
    );
  }
  const kept = summary.held.length;
  // Nothing moves and nothing is held on purpose, yet not every pod is updated and ready: a
  // planner state this does not know; in progress rather than done.
  if (kept === 0 || !summary.held.every((h) => KEPT.has(h.reason))) return progressing('');
  return ready(
    ROLLOUT_STATE_REASONS.partitionComplete,
    `rollout complete as far as updateStrategy.partition and selector allow, ${kept} pod(s) ` +
      `kept on the old version: ${counts}`,
  );
}

/**
 * The conditions with Ready, Reconciling and Stalled as they should be now, or undefined when they
 * need no change. Other conditions (RolloutPaused) stay where they are; a condition whose status
 * does not change keeps its lastTransitionTime.
 */
export function nextStatusConditions(
  conditions: readonly SidecarSetCondition[] | undefined,
  sidecarSet: SidecarSet,
  summary: RolloutSummary,
  now: Date,
): SidecarSetCondition[] | undefined {
  const state = rolloutState(summary);
  const generation = sidecarSet.metadata.generation;
  const statuses = {
    [READY]: state.ready,
    [RECONCILING]: state.reconciling,
    [STALLED]: state.stalled,
  };
  const list = [...(conditions ?? [])];
  let changed = false;
  for (const type of KSTATUS_CONDITIONS) {
    const status = statuses[type] ? 'True' : 'False';
    const index = list.findIndex((c) => c.type === type);
    const previous = index < 0 ? undefined : list[index];
    if (
      previous !== undefined &&
      previous.status === status &&
      previous.reason === state.reason &&
      previous.message === state.message &&
      previous.observedGeneration === generation
    ) {
      continue;
    }
    const next: SidecarSetCondition = {
      type,
      status,
      reason: state.reason,
      message: state.message,
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      lastTransitionTime:
        previous?.status === status && previous.lastTransitionTime !== undefined
          ? previous.lastTransitionTime
          : formatTimestamp(now),
    };
    if (index < 0) list.push(next);
    else list[index] = next;
    changed = true;
  }
  return changed ? list : undefined;
}
