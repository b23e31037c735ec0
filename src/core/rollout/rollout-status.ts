/**
 * `sidecarset rollout status`: where a SidecarSet's in-place rollout stands, computed from the
 * SidecarSet and the pods as they are now with the planner the controller runs (plan.ts), so that
 * the held pods come with the controller's own reasons. Like `kubectl rollout status`, it says
 * whether the rollout is done; unlike it, it also says what holds the rest back.
 */
import type { RolloutPause } from '../status/rollout-paused-condition.js';
import { rolloutPause } from '../status/rollout-paused-condition.js';
import { podUpdateFailure } from '../status/update-failure-condition.js';
import { revisionHistoryFailure } from '../status/revision-failure-condition.js';
import type { Pod } from '../api/k8s-types.js';
import type { NamespaceLabels } from '../matching/match.js';
import { withHashes } from '../api/hash.js';
import type { SidecarSet } from '../api/sidecarset-types.js';
import { planUpgrade } from '../upgrade/plan.js';
import { selectsForUpgrade } from '../matching/upgrade-selection.js';
import type { HoldReason, UpgradePlan } from '../upgrade/types.js';
import type { PodRef } from '../api/pod-ref.js';

type RolloutPhase =
  /** Every matched pod runs the SidecarSet's version and is ready. */
  | 'Complete'
  /** Every pod the partition lets go is updated and ready; the partition keeps the rest. */
  | 'PartitionComplete'
  | 'Paused'
  /** updateStrategy.type is NotUpdate: pods keep the version they were injected with. */
  | 'NotUpdate'
  | 'Progressing';

interface HeldGroup {
  reason: HoldReason;
  message: string;
  pods: PodRef[];
}

export interface RolloutStatus {
  sidecarSet: string;
  phase: RolloutPhase;
  /** Whether `rollout status -w` may stop: nothing is left for the rollout to do. */
  done: boolean;
  /** One line for people, as kubectl rollout status prints. */
  summary: string;
  /** A user's pause (spec.updateStrategy.paused) or the controller's (RolloutPaused, UnhealthyPods). */
  pause: RolloutPause;
  /** The controller has not yet seen the latest spec (status.observedGeneration is behind). */
  specNotObserved: boolean;
  /** Why the API server refuses the controller's pod updates (condition PodUpdateFailure). */
  updateFailure?: string;
  /** Why the controller cannot record ControllerRevisions (condition RevisionHistoryFailure). */
  revisionFailure?: string;
  plan: UpgradePlan;
  /** The held pods by reason, in the order the planner gave them. */
  held: HeldGroup[];
}

export function rolloutStatus(
  sidecarSet: SidecarSet,
  pods: readonly Readonly<Pod>[],
  namespaces: NamespaceLabels,
  now: Date,
): RolloutStatus {
  const ss = withHashes(sidecarSet);
  const matched = pods.filter((pod) => selectsForUpgrade(ss, pod, namespaces));
  const plan = planUpgrade(ss, matched, { now });
  const pause = rolloutPause(sidecarSet);
  const phase = phaseOf(plan, pause);
  const generation = sidecarSet.metadata.generation;
  const observed = sidecarSet.status?.observedGeneration;
  const updateFailure = podUpdateFailure(sidecarSet.status?.conditions);
  const revisionFailure = revisionHistoryFailure(sidecarSet.status?.conditions);
  return {
    sidecarSet: plan.sidecarSet,
    phase,
    done: phase === 'Complete' || phase === 'PartitionComplete',
    summary: summaryOf(plan, phase, pause),
    pause,
    specNotObserved: generation !== undefined && (observed === undefined || observed < generation),
    ...(updateFailure === undefined ? {} : { updateFailure }),
    ...(revisionFailure === undefined ? {} : { revisionFailure }),
    plan,
    held: groupHeld(plan),
  };
}

function phaseOf(plan: UpgradePlan, pause: RolloutPause): RolloutPhase {
  const { matchedPods, updatedPods, updatedReadyPods } = plan.status;
  if (updatedPods === matchedPods && updatedReadyPods === matchedPods) return 'Complete';
  if (plan.stopped === 'NotUpdate') return 'NotUpdate';
  if (pause.paused || plan.stopped === 'Paused' || plan.stopped === 'UnhealthyPods')
    return 'Paused';
  const waiting = plan.upgrade.length + plan.flip.length + plan.budget.unavailable;
  const partitioned = plan.held.length > 0 && plan.held.every((h) => h.reason === 'Partition');
  if (waiting === 0 && partitioned && updatedReadyPods === updatedPods) return 'PartitionComplete';
  return 'Progressing';
}

function summaryOf(plan: UpgradePlan, phase: RolloutPhase, pause: RolloutPause): string {
  const { matchedPods, updatedPods, updatedReadyPods } = plan.status;
  const name = plan.sidecarSet;
  const counts = `${updatedPods} of ${matchedPods} pods updated, ${updatedReadyPods} updated and ready`;
  switch (phase) {
    case 'Complete':
      return `SidecarSet "${name}" successfully rolled out: ${counts}`;
    case 'PartitionComplete':
      return `partitioned roll out complete: ${counts}; the partition keeps ${plan.held.length} on the old version`;
    case 'NotUpdate':
      return `SidecarSet "${name}" does not update pods (updateStrategy.type is NotUpdate): ${counts}`;
    case 'Paused':
      return `SidecarSet "${name}" rollout is paused ${pausedBy(pause)}: ${counts}`;
    case 'Progressing':
      return `Waiting for SidecarSet "${name}" rollout to finish: ${counts}`;
  }
}

function pausedBy(pause: RolloutPause): string {
  if (!pause.paused) return 'by the controller: failed upgraded pods';
  return pause.by === 'user'
    ? 'by spec.updateStrategy.paused (sidecarset rollout resume lifts it)'
    : 'by the controller: failed upgraded pods (sidecarset rollout resume lifts it)';
}

function groupHeld(plan: UpgradePlan): HeldGroup[] {
  const groups = new Map<string, HeldGroup>();
  for (const h of plan.held) {
    const key = `${h.reason}\u0000${h.message}`;
    const group = groups.get(key);
    if (group === undefined)
      groups.set(key, { reason: h.reason, message: h.message, pods: [h.pod] });
    else group.pods.push(h.pod);
  }
  return [...groups.values()];
}
