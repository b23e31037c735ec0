/**
 * planUpgrade: one reconcile round of the SidecarSet upgrade controller as a pure function, in the
 * steps of Processor.UpdateSidecarSet (pkg/controller/sidecarset/sidecarset_processor.go) and
 * GetNextUpgradePods (pkg/controller/sidecarset/sidecarset_strategy.go). Deterministic: the same
 * pods in any order give the same plan (docs/adr/0003-stable-upgrade-order.md).
 */
import { SidecarSetError } from '../errors.js';
import { scaleMaxUnavailable, scalePartition } from './intstr.js';
import { compareStrings } from '../json.js';
import type { Pod } from '../k8s-types.js';
import { podNamespace } from '../match.js';
import type { Labels } from '../selector.js';
import type { SidecarSet } from '../sidecarset-types.js';
import { upgradeCount } from './budget.js';
import { buildPodFlip, podUpgradeBuilder } from './change.js';
import type { SidecarSetContext } from './context.js';
import { sidecarSetContext } from './context.js';
import { needsFlip } from './hot-slots.js';
import { sortCandidates } from './order.js';
import {
  hasEverySidecar,
  isActivePod,
  isInjectedBy,
  isReady,
  isStateConsistent,
  isUpdated,
  isUpgradedInPlace,
  upgradability,
} from './pod-state.js';
import { rolloutGate } from '../health/rollout-gate.js';
import { scatterCandidates } from './scatter.js';
import { computeStatus } from './status.js';
import type {
  BudgetSummary,
  ExcludedPod,
  HeldPod,
  HoldReason,
  NotUpgradablePod,
  PlanOptions,
  PodRef,
  UpgradePlan,
} from './types.js';

/**
 * A matched pod and everything the round needs to know of it, read in step 1: over a large fleet,
 * reaching each pod's scattered objects is the cost, so the pod is read once for all the steps.
 */
interface MatchedPod {
  pod: Readonly<Pod>;
  /** Its position among the matched pods. */
  index: number;
  ref: PodRef;
  labels: Labels;
  /** It records the SidecarSet's hash. */
  updated: boolean;
  /** Running and Ready, hot-upgrade empty slots on the empty image. */
  ready: boolean;
  /** The kubelet runs what the spec says for the sidecars. */
  consistent: boolean;
  /** This SidecarSet has written a sidecar image in place, for this revision or an earlier one. */
  upgradedInPlace: boolean;
  /** For an outdated pod, when the strategy lets the round upgrade: what step 7 makes of it. */
  verdict: Verdict | undefined;
}

type Verdict = 'Candidate' | 'NotSelected' | 'NotUpgradable' | 'UpgradeInFlight';

const MESSAGES = {
  NotUpdate: 'updateStrategy.type is NotUpdate',
  Paused: 'updateStrategy.paused is true',
  UnhealthyPods: 'failed upgraded pods paused the rollout (condition RolloutPaused)',
  HotUpgradeFlip: 'this round puts finished hot upgrades back on the empty image first',
  NotSelected: 'updateStrategy.selector does not select the pod',
  UpgradeInFlight: 'a sidecar is still being updated in place by the kubelet',
  NotUpgradable:
    'a sidecar field other than image changed; the pod keeps its sidecar until recreated',
} as const;

export function podRef(pod: Readonly<Pod>): PodRef {
  const namespace = podNamespace(pod);
  const name = pod.metadata.name ?? '';
  const uid = pod.metadata.uid;
  return uid !== undefined && uid !== '' ? { namespace, name, uid } : { namespace, name };
}

export function podKey(ref: PodRef): string {
  return `${ref.namespace}/${ref.name}`;
}

function byRef(a: PodRef, b: PodRef): number {
  return compareStrings(a.namespace, b.namespace) || compareStrings(a.name, b.name);
}

function byName(a: MatchedPod, b: MatchedPod): number {
  return byRef(a.ref, b.ref);
}

export function planUpgrade(
  sidecarSet: SidecarSet,
  pods: readonly Readonly<Pod>[],
  options: PlanOptions,
): UpgradePlan {
  const ctx = sidecarSetContext(sidecarSet);
  // 1. Read the pods: those the SidecarSet does not count are excluded, with the reason.
  const { matched, excluded } = readPods(ctx, pods, !ctx.notUpdate && !ctx.paused);
  // 2. The status, as the controller computes it before the round.
  const status = computeStatus(sidecarSet, {
    matchedPods: matched.length,
    updatedPods: count(matched, (m) => m.updated),
    readyPods: count(matched, available),
    updatedReadyPods: count(matched, (m) => m.updated && available(m)),
  });
  const plan: UpgradePlan = {
    sidecarSet: ctx.name,
    hash: ctx.hash,
    upgrade: [],
    flip: [],
    notUpgradable: [],
    held: [],
    excluded,
    status,
    budget: budgetBefore(ctx, matched),
  };
  if (!ctx.notUpdate) {
    const upgraded = matched.filter((m) => m.updated).map((m) => m.pod);
    plan.health = rolloutGate(sidecarSet, ctx, upgraded, matched.length, options.now);
  }
  const outdated = (): MatchedPod[] => matched.filter((m) => !m.updated).sort(byName);
  // 3. and 4. A strategy that stops the rollout holds every outdated pod.
  if (ctx.notUpdate) {
    return { ...plan, held: holdAll(outdated(), 'NotUpdate'), stopped: 'NotUpdate' };
  }
  if (ctx.paused) return { ...plan, held: holdAll(outdated(), 'Paused'), stopped: 'Paused' };
  // 5. Finished hot upgrades are flipped first, and alone in their round.
  const flips = ctx.hot.length > 0 ? matched.filter((m) => needsFlip(ctx, m.pod)) : [];
  if (flips.length > 0) {
    const flip = flips.sort(byName).map((m) => buildPodFlip(ctx, m.pod, m.ref, options.now));
    return { ...plan, flip, held: holdAll(outdated(), 'HotUpgradeFlip') };
  }
  // 6. Every matched pod is updated: nothing to do.
  if (status.updatedPods === status.matchedPods) return { ...plan, stopped: 'Complete' };
  // 6b. Too many upgraded pods failed: no more until a new revision or a resume (ours, not OpenKruise's).
  if (plan.health?.pause === true) {
    return { ...plan, held: holdAll(outdated(), 'UnhealthyPods'), stopped: 'UnhealthyPods' };
  }
  // 7. Select the candidates (read in step 1): outdated, selected, only images changed, and no
  // in-place update still in flight.
  const candidates = matched.filter((m) => m.verdict === 'Candidate');
  const notUpgradable = matched.filter((m) => m.verdict === 'NotUpgradable').sort(byName);
  const waiting = matched
    .filter((m) => m.verdict === 'NotSelected' || m.verdict === 'UpgradeInFlight')
    .sort(byName);
  // 8. Order them: priorityStrategy, then the default order, ties by namespace/name.
  const sorted = sortCandidates(candidates, ctx.priority);
  // 9. Scatter them.
  const ordered =
    ctx.scatter.length > 0 ? scatterCandidates(ctx.scatter, sorted, matched, byName) : sorted;
  // 10. The budget: the partition keeps the last ones back, maxUnavailable bounds the rest.
  const outcome = upgradeCount({
    candidatesReady: ordered.map((m) => m.ready),
    partition: plan.budget.partition,
    maxUnavailable: plan.budget.maxUnavailable,
    unavailable: plan.budget.unavailable,
  });
  plan.budget = {
    ...plan.budget,
    candidates: ordered.length,
    eligible: outcome.eligible,
    unavailableAfter: outcome.unavailableAfter,
  };
  plan.notUpgradable = notUpgradable.map(notUpgradablePod);
  // 11. Build the upgrades; every other outdated pod is held, with its reason.
  const build = podUpgradeBuilder(ctx, sidecarSet.spec.patchPodMetadata ?? [], options.now);
  const budgetSpent = `${plan.budget.maxUnavailable} pods may be unavailable at once and the budget is spent`;
  const partitioned = `the partition keeps ${plan.budget.partition} candidates on the old version`;
  ordered.forEach(({ pod, ref }, k) => {
    if (k >= outcome.eligible) {
      plan.held.push({ pod: ref, reason: 'Partition', message: partitioned });
    } else if (k >= outcome.take) {
      plan.held.push({ pod: ref, reason: 'MaxUnavailable', message: budgetSpent });
    } else {
      try {
        plan.upgrade.push(build(pod, ref));
      } catch (err) {
        if (!(err instanceof SidecarSetError)) throw err;
        plan.held.push({ pod: ref, reason: 'PatchPodMetadataError', message: err.message });
      }
    }
  });
  for (const m of waiting) {
    plan.held.push(hold(m, m.verdict === 'NotSelected' ? 'NotSelected' : 'UpgradeInFlight'));
  }
  return plan;
}

/** Every given pod once: excluded (in namespace/name order), or matched (verdicts if `plans`). */
function readPods(
  ctx: SidecarSetContext,
  pods: readonly Readonly<Pod>[],
  plans: boolean,
): { matched: MatchedPod[]; excluded: ExcludedPod[] } {
  const matched: MatchedPod[] = [];
  const excluded: ExcludedPod[] = [];
  for (const pod of pods) {
    const reason = exclusion(ctx, pod);
    if (reason !== undefined) {
      excluded.push({ pod: podRef(pod), ...reason });
      continue;
    }
    const labels = pod.metadata.labels ?? {};
    const updated = isUpdated(ctx, pod);
    const consistent = isStateConsistent(ctx, pod);
    matched.push({
      pod,
      index: matched.length,
      ref: podRef(pod),
      labels,
      updated,
      ready: isReady(ctx, pod),
      consistent,
      upgradedInPlace: isUpgradedInPlace(ctx, pod),
      verdict: plans && !updated ? verdict(ctx, pod, labels, consistent) : undefined,
    });
  }
  excluded.sort((a, b) => byRef(a.pod, b.pod));
  return { matched, excluded };
}

function exclusion(
  ctx: SidecarSetContext,
  pod: Readonly<Pod>,
): { reason: ExcludedPod['reason']; message: string } | undefined {
  if (!isActivePod(pod)) {
    return { reason: 'Inactive', message: 'the pod has finished or is being deleted' };
  }
  if (!isInjectedBy(ctx, pod)) {
    return {
      reason: 'NotInjected',
      message: `kruise.io/sidecarset-injected-list does not name ${ctx.name}`,
    };
  }
  if (!hasEverySidecar(ctx, pod)) {
    return { reason: 'MissingSidecar', message: 'the pod lacks one of the sidecar containers' };
  }
  return undefined;
}

/** Ready in the status's sense: ready and consistent. */
function available(m: MatchedPod): boolean {
  return m.ready && m.consistent;
}

function count(matched: readonly MatchedPod[], test: (m: MatchedPod) => boolean): number {
  let n = 0;
  for (const m of matched) if (test(m)) n++;
  return n;
}

/**
 * Unavailable because of this controller: updated, or upgraded in place to an earlier revision,
 * and not ready and consistent (restarting, or failed). OpenKruise counts updated pods only, so a
 * revision published while the last one's pods restart took maxUnavailable more ready pods
 * (docs/adr/0018-in-flight-upgrades-use-budget.md). Pods that are not ready although we never
 * wrote them still count for nothing, as in OpenKruise.
 */
function unavailableByUs(m: MatchedPod): boolean {
  return (m.updated || m.upgradedInPlace) && !available(m);
}

function budgetBefore(ctx: SidecarSetContext, matched: readonly MatchedPod[]): BudgetSummary {
  const unavailable = count(matched, unavailableByUs);
  return {
    partition: scalePartition(ctx.partition, matched.length),
    maxUnavailable: scaleMaxUnavailable(ctx.maxUnavailable, matched.length),
    unavailable,
    unavailableAfter: unavailable,
    candidates: 0,
    eligible: 0,
  };
}

/** Whether an outdated pod can be upgraded in place now, or why not (GetNextUpgradePods). */
function verdict(
  ctx: SidecarSetContext,
  pod: Readonly<Pod>,
  labels: Labels,
  consistent: boolean,
): Verdict {
  if (!ctx.isSelected(labels)) return 'NotSelected';
  const upgradable = upgradability(ctx, pod, consistent);
  if (upgradable === 'notUpgradable') return 'NotUpgradable';
  return upgradable === 'inFlight' ? 'UpgradeInFlight' : 'Candidate';
}

function notUpgradablePod(m: MatchedPod): NotUpgradablePod {
  return { pod: m.ref, reason: 'UpdateImmutableField', message: MESSAGES.NotUpgradable };
}

function hold(
  m: MatchedPod,
  reason: Exclude<HoldReason, 'Partition' | 'MaxUnavailable' | 'PatchPodMetadataError'>,
): HeldPod {
  return { pod: m.ref, reason, message: MESSAGES[reason] };
}

function holdAll(
  pods: readonly MatchedPod[],
  reason: 'NotUpdate' | 'Paused' | 'HotUpgradeFlip' | 'UnhealthyPods',
): HeldPod[] {
  return pods.map((m) => hold(m, reason));
}
