/**
 * planUpgrade: one reconcile round of the SidecarSet upgrade controller as a pure function, in the
 * steps of Processor.UpdateSidecarSet (pkg/controller/sidecarset/sidecarset_processor.go) and
 * GetNextUpgradePods (pkg/controller/sidecarset/sidecarset_strategy.go). Deterministic: the same
 * pods in any order give the same plan (docs/adr/0003-stable-upgrade-order.md).
 */
import { rolloutGate } from './rollout-health.js';
import { SidecarSetError } from '../errors.js';
import type { Pod } from '../api/k8s-types.js';
import { validSelectorMatches } from '../matching/selector.js';
import type { SidecarSet } from '../api/sidecarset-types.js';
import { buildPodFlip, buildPodUpgrade } from './change.js';
import type { SidecarSetContext } from './context.js';
import { sidecarSetContext } from './context.js';
import { needsFlip } from './hot-slots.js';
import { scaleMaxUnavailable, scalePartition } from '../encoding/intstr.js';
import { sortCandidates } from './order.js';
import {
  hasEverySidecar,
  isInjectedBy,
  isReady,
  isStateConsistent,
  isUpdated,
  isUpgradedInPlace,
  isUpgradeInFlight,
  whyNotUpgradable,
} from './pod-state.js';
import { compareByName, podRef } from '../api/pod-ref.js';
import { hasContainersReady, isActivePod, isRunning, isTerminating } from '../api/pod-status.js';
import { podController, whyNotRecreated } from './recreation.js';
import { isGateClosedBy } from './readiness-gate.js';
import { availableFrom } from './availability.js';
import { EVICTION_REFUSED, RESIZE_REFUSED, recordedRefusal } from '../pod-annotations/refusals.js';
import { scatterCandidates } from './scatter.js';
import type {
  ExcludeReason,
  HoldReason,
  PlanOptions,
  PodRecreate,
  SkippedPod,
  UpgradePlan,
  UpgradeStatus,
} from './types.js';
import type { PodRef } from '../api/pod-ref.js';

/** A matched pod, read once, in the order given (only what the plan reports is sorted by name). */
interface MatchedPod {
  pod: Readonly<Pod>;
  ref: PodRef;
  labels: Readonly<Record<string, string>>;
  /** It records the SidecarSet's hash (IsPodSidecarUpdated). */
  updated: boolean;
  /**
   * IsPodReady and IsPodStateConsistent: ready in the status's sense; and not behind a gate this
   * SidecarSet closed (the kubelet reports the pod not Ready a moment after the gate closes).
   */
  available: boolean;
  /**
   * Taking it down costs the budget: it is ready (isReady), or every container is ready
   * (ContainersReady) and only a readiness gate keeps it out, such as one just opened again that
   * the kubelet has not seen open yet. A candidate whose containers are not ready needs no budget
   * (calculateUpgradeCount).
   */
  needsBudget: boolean;
  /**
   * Unavailable because of us: updated, upgraded in place to an earlier revision (OpenKruise
   * counts updated pods only: docs/adr/0018-in-flight-upgrades-use-budget.md), or behind a
   * readiness gate this SidecarSet closed, and not available. A pod we never touched counts for
   * nothing when it is not ready, as in OpenKruise.
   */
  takenDown: boolean;
  /** The API server refused to resize the pod to this version (core/pod-annotations/refusals.ts). */
  resizeRefused: boolean;
  /** Not upgradable in place, recreated instead: why (core/upgrade/recreation.ts). */
  recreate?: string;
  /** Ready, but not yet for long enough to count as available: from when it will (availability.ts). */
  availableAt?: Date;
}

/** The messages of the hold reasons that say the same for every pod. */
const MESSAGES = {
  NotUpdate: 'updateStrategy.type is NotUpdate',
  Paused: 'updateStrategy.paused is true',
  UnhealthyPods: 'failed upgraded pods paused the rollout (condition RolloutPaused)',
  HotUpgradeFlip: 'this round puts finished hot upgrades back on the empty image first',
  NotSelected: 'updateStrategy.selector does not select the pod',
  UpgradeInFlight: 'a sidecar is still being updated in place by the kubelet',
} as const satisfies Partial<Record<HoldReason, string>>;

export function planUpgrade(
  sidecarSet: SidecarSet,
  pods: readonly Readonly<Pod>[],
  options: PlanOptions,
): UpgradePlan {
  const ctx = sidecarSetContext(sidecarSet);
  const strategy = ctx.strategy;
  // 1. The matched pods; the others are excluded, with the reason.
  const { matched, excluded } = readPods(ctx, pods, options.now);
  // 2. The status, as calculateStatus computes it before the round.
  const status = statusOf(sidecarSet, matched);
  const recreating =
    excluded.filter((e) => e.reason === 'Recreating').length + (options.awaitingReplacement ?? 0);
  const unavailable = matched.filter((m) => m.takenDown).length + recreating;
  const settling = matched.flatMap((m) => (m.availableAt === undefined ? [] : [m.availableAt]));
  const plan: UpgradePlan = {
    sidecarSet: ctx.name,
    hash: ctx.hash,
    upgrade: [],
    recreate: [],
    flip: [],
    notUpgradable: [],
    held: [],
    excluded,
    status,
    budget: {
      partition: scalePartition(strategy.partition, matched.length),
      maxUnavailable: scaleMaxUnavailable(strategy.maxUnavailable, matched.length),
      unavailable,
      unavailableAfter: unavailable,
      candidates: 0,
      eligible: 0,
    },
    ...(settling.length === 0
      ? {}
      : { availableAt: new Date(Math.min(...settling.map((d) => d.getTime()))) }),
  };
  const outdated = matched.filter((m) => !m.updated);
  const holdAll = (reason: keyof typeof MESSAGES): SkippedPod<HoldReason>[] =>
    byName(outdated.map((m) => hold(m, reason)));
  // 3. NotUpdate: pods keep the version they were injected with.
  if (strategy.type === 'NotUpdate') {
    return { ...plan, held: holdAll('NotUpdate'), stopped: 'NotUpdate' };
  }
  // Upgraded pods, and those whose resize to this version the API server refused.
  const upgraded = matched.filter((m) => m.updated || m.resizeRefused).map((m) => m.pod);
  plan.health = rolloutGate(sidecarSet, ctx, upgraded, matched.length, options.now);
  // 4. Paused.
  if (strategy.paused === true) return { ...plan, held: holdAll('Paused'), stopped: 'Paused' };
  // 5. Finished hot upgrades are flipped first, and alone in their round.
  const flips = ctx.hot.length > 0 ? matched.filter((m) => needsFlip(ctx, m.pod)) : [];
  if (flips.length > 0) {
    const flip = byName(flips.map((m) => buildPodFlip(ctx, m.pod, options.now)));
    return { ...plan, flip, held: holdAll('HotUpgradeFlip') };
  }
  // 6. Every matched pod is updated: nothing to do.
  if (outdated.length === 0) return { ...plan, stopped: 'Complete' };
  // 6b. Too many upgraded pods failed: no more until a new revision or a resume (ours).
  if (plan.health.pause) {
    return { ...plan, held: holdAll('UnhealthyPods'), stopped: 'UnhealthyPods' };
  }
  // 7. The candidates: outdated, selected, only images (or resources) changed, no in-place update
  // in flight; with recreation on, also pods that cannot change in place and have a controller.
  const candidates: MatchedPod[] = [];
  /** Outdated pods that wait for something other than their turn. */
  const waiting: SkippedPod<HoldReason>[] = [];
  const { selector } = strategy;
  for (const m of outdated) {
    if (m.resizeRefused) {
      const message = 'the API server refused to resize the pod to this version';
      plan.notUpgradable.push({ pod: m.ref, reason: 'UpdateImmutableField', message });
      continue;
    }
    if (selector !== undefined && !validSelectorMatches(selector, m.labels)) {
      waiting.push(hold(m, 'NotSelected'));
      continue;
    }
    const notInPlace = whyNotUpgradable(ctx, m.pod, options);
    if (notInPlace === undefined) {
      if (isUpgradeInFlight(ctx, m.pod)) waiting.push(hold(m, 'UpgradeInFlight'));
      else candidates.push(m);
      continue;
    }
    let message = notInPlace;
    if (ctx.recreatePods) {
      const notRecreated = whyNotRecreated(m.pod);
      if (notRecreated === undefined) {
        candidates.push({ ...m, recreate: notInPlace });
        continue;
      }
      message += `; ${notRecreated}`;
    }
    plan.notUpgradable.push({ pod: m.ref, reason: 'UpdateImmutableField', message });
  }
  // 8. Ordered: priorityStrategy, then the default order, ties by namespace/name.
  let ordered = sortCandidates(candidates, strategy.priorityStrategy);
  // 9. Scattered.
  const scatter = strategy.scatterStrategy ?? [];
  if (scatter.length > 0) ordered = scatterCandidates(scatter, ordered, matched);
  // 10. calculateUpgradeCount: the partition keeps the last ones back, maxUnavailable bounds the rest.
  const { budget } = plan;
  budget.candidates = ordered.length;
  budget.eligible = Math.max(ordered.length - budget.partition, 0);
  let take = 0;
  for (; take < budget.eligible; take++) {
    if (ordered[take]?.needsBudget !== true) continue;
    if (budget.unavailableAfter >= budget.maxUnavailable) break;
    budget.unavailableAfter++;
  }
  // 11. The upgrades; every other candidate is held, with its reason, then the waiting pods.
  const partitioned = `the partition keeps ${budget.partition} candidates on the old version`;
  const spent = `${budget.maxUnavailable} pods may be unavailable at once and the budget is spent`;
  ordered.forEach((m, k) => {
    if (k >= budget.eligible) {
      plan.held.push({ pod: m.ref, reason: 'Partition', message: partitioned });
    } else if (k >= take) {
      plan.held.push({ pod: m.ref, reason: 'MaxUnavailable', message: spent });
    } else if (m.recreate !== undefined) {
      plan.recreate.push(recreation(ctx, m, m.recreate));
    } else {
      try {
        plan.upgrade.push(
          buildPodUpgrade(ctx, m.pod, sidecarSet.spec.patchPodMetadata ?? [], options.now),
        );
      } catch (err) {
        if (!(err instanceof SidecarSetError)) throw err;
        plan.held.push({ pod: m.ref, reason: 'PatchPodMetadataError', message: err.message });
      }
    }
  });
  // Not push(...waiting): a fleet's worth of arguments overflows the call stack.
  for (const h of byName(waiting)) plan.held.push(h);
  plan.notUpgradable = byName(plan.notUpgradable);
  return plan;
}

/**
 * Every given pod once: matched (in the order given) or excluded, with the reason. Recreating
 * pods (evicted, most likely, and not yet replaced) use the budget.
 */
function readPods(
  ctx: SidecarSetContext,
  pods: readonly Readonly<Pod>[],
  now: Date,
): { matched: MatchedPod[]; excluded: SkippedPod<ExcludeReason>[] } {
  const matched: MatchedPod[] = [];
  const excluded: SkippedPod<ExcludeReason>[] = [];
  for (const pod of pods) {
    const ref = podRef(pod);
    if (ctx.recreatePods && isTerminating(pod) && isInjectedBy(ctx, pod) && !isUpdated(ctx, pod)) {
      const message = 'being deleted on an older version: its controller recreates it';
      excluded.push({ pod: ref, reason: 'Recreating', message });
    } else if (!isActivePod(pod)) {
      const message = 'the pod has finished or is being deleted';
      excluded.push({ pod: ref, reason: 'Inactive', message });
    } else if (!isInjectedBy(ctx, pod)) {
      const message = `kruise.io/sidecarset-injected-list does not name ${ctx.name}`;
      excluded.push({ pod: ref, reason: 'NotInjected', message });
    } else if (!hasEverySidecar(ctx, pod)) {
      const message = 'the pod lacks one of the sidecar containers';
      excluded.push({ pod: ref, reason: 'MissingSidecar', message });
    } else {
      const ready = isReady(ctx, pod);
      const updated = isUpdated(ctx, pod);
      const gateClosed = isGateClosedBy(ctx.name, pod);
      const from = ready ? availableFrom(ctx, pod) : undefined;
      const settling = from !== undefined && from > now;
      const available = ready && !settling && isStateConsistent(ctx, pod) && !gateClosed;
      matched.push({
        ...(settling ? { availableAt: from } : {}),
        pod,
        ref,
        labels: pod.metadata.labels ?? {},
        updated,
        needsBudget: needsBudget(ctx, pod),
        available,
        takenDown: !available && (updated || isUpgradedInPlace(ctx, pod) || gateClosed),
        resizeRefused: recordedRefusal(pod, RESIZE_REFUSED, ctx.name, ctx.hash) !== undefined,
      });
    }
  }
  return { matched, excluded: byName(excluded) };
}

/** Whether taking the pod down costs the budget (MatchedPod.needsBudget). */
export function needsBudget(ctx: SidecarSetContext, pod: Readonly<Pod>): boolean {
  return isReady(ctx, pod) || (isRunning(pod) && hasContainersReady(pod));
}

function recreation(ctx: SidecarSetContext, m: MatchedPod, message: string): PodRecreate {
  const recreate: PodRecreate = { pod: m.ref, message, controller: podController(m.pod) ?? '' };
  const refused = recordedRefusal(m.pod, EVICTION_REFUSED, ctx.name, ctx.hash);
  if (refused !== undefined) recreate.refused = refused.message;
  return recreate;
}

/** Sorted in place into namespace/name order, the order the plan reports pods in. */
function byName<T extends { pod: PodRef }>(items: T[]): T[] {
  return items.sort((a, b) => compareByName(a.pod, b.pod));
}

/** calculateStatus: of the matched pods, updated, ready (ready and consistent), and both. */
function statusOf(sidecarSet: SidecarSet, matched: readonly MatchedPod[]): UpgradeStatus {
  const status: UpgradeStatus = {
    matchedPods: matched.length,
    updatedPods: matched.filter((m) => m.updated).length,
    readyPods: matched.filter((m) => m.available).length,
    updatedReadyPods: matched.filter((m) => m.updated && m.available).length,
  };
  const { generation } = sidecarSet.metadata;
  if (generation !== undefined) status.observedGeneration = generation;
  // Revisions are the controller's business (src/controller/revisions.ts): reported as given.
  const previous = sidecarSet.status;
  if (previous?.latestRevision !== undefined) status.latestRevision = previous.latestRevision;
  if (previous?.collisionCount !== undefined) status.collisionCount = previous.collisionCount;
  return status;
}

function hold(m: MatchedPod, reason: keyof typeof MESSAGES): SkippedPod<HoldReason> {
  return { pod: m.ref, reason, message: MESSAGES[reason] };
}
