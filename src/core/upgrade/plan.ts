/**
 * planUpgrade: one reconcile round of the SidecarSet upgrade controller as a pure function
 * (reference upgrade §2.2 steps 5–11, §4, §5.1, §6). Deterministic: the same pods in any order
 * give the same plan.
 */
import { SidecarSetError } from '../errors.js';
import { compareStrings } from '../json.js';
import type { Pod } from '../k8s-types.js';
import { podNamespace } from '../match.js';
import type { Labels } from '../selector.js';
import type { SidecarSet } from '../sidecarset-types.js';
import { scaleMaxUnavailable, scalePartition } from '../intstr.js';
import { upgradeCount } from './budget.js';
import { buildPodUpgrade } from './change.js';
import type { SidecarSetContext } from './context.js';
import { sidecarSetContext } from './context.js';
import { candidateOrder } from './order.js';
import {
  hasEverySidecar,
  isActivePod,
  isInjectedBy,
  isReady,
  isStateConsistent,
  isUpdated,
  upgradability,
} from './pod-state.js';
import { scatterOrder } from './scatter.js';
import { computeStatus } from './status.js';
import type {
  BudgetSummary,
  ExcludedPod,
  HeldPod,
  HoldReason,
  PlanOptions,
  PodRef,
  PodUpgrade,
  UpgradePlan,
} from './types.js';

interface MatchedPod {
  pod: Readonly<Pod>;
  ref: PodRef;
  labels: Labels;
  updated: boolean;
  ready: boolean;
  consistent: boolean;
  /** Index in the matched pods (namespace/name order). */
  position: number;
}

export function podRef(pod: Readonly<Pod>): PodRef {
  const ref: PodRef = { namespace: podNamespace(pod), name: pod.metadata.name ?? '' };
  if (pod.metadata.uid !== undefined && pod.metadata.uid !== '') ref.uid = pod.metadata.uid;
  return ref;
}

export function podKey(ref: PodRef): string {
  return `${ref.namespace}/${ref.name}`;
}

function byRef(a: { ref: PodRef }, b: { ref: PodRef }): number {
  return compareStrings(a.ref.namespace, b.ref.namespace) || compareStrings(a.ref.name, b.ref.name);
}

export function planUpgrade(
  sidecarSet: SidecarSet,
  pods: readonly Readonly<Pod>[],
  options: PlanOptions,
): UpgradePlan {
  const ctx = sidecarSetContext(sidecarSet);
  const { matched, excluded } = selectMatched(ctx, pods);
  const status = computeStatus(
    sidecarSet,
    matched.map((m) => ({ updated: m.updated, consistentAndReady: m.consistent && m.ready })),
  );
  const plan: UpgradePlan = {
    sidecarSet: ctx.name,
    hash: ctx.hash,
    upgrade: [],
    notUpgradable: [],
    held: [],
    excluded,
    status,
    budget: budgetSummary(ctx, matched),
  };
  const outdated = matched.filter((m) => !m.updated);
  if (ctx.notUpdate)
    return stopped(plan, 'NotUpdate', outdated, 'updateStrategy.type is NotUpdate');
  if (ctx.paused) return stopped(plan, 'Paused', outdated, 'updateStrategy.paused is true');
  if (outdated.length === 0) return { ...plan, stopped: 'Complete' };
  if (ctx.hot.length > 0) {
    plan.held = outdated.map((m) =>
      hold(m, 'HotUpgradeUnsupported', 'the SidecarSet has a HotUpgrade container'),
    );
    return plan;
  }
  return planRound(sidecarSet, ctx, matched, plan, options.now);
}

function selectMatched(
  ctx: SidecarSetContext,
  pods: readonly Readonly<Pod>[],
): { matched: MatchedPod[]; excluded: ExcludedPod[] } {
  const matched: MatchedPod[] = [];
  const excluded: ExcludedPod[] = [];
  for (const pod of pods) {
    const ref = podRef(pod);
    if (!isActivePod(pod)) {
      excluded.push({
        pod: ref,
        reason: 'Inactive',
        message: 'the pod has finished or is being deleted',
      });
    } else if (!isInjectedBy(ctx, pod)) {
      excluded.push({
        pod: ref,
        reason: 'NotInjected',
        message: `kruise.io/sidecarset-injected-list does not name ${ctx.name}`,
      });
    } else if (!hasEverySidecar(ctx, pod)) {
      excluded.push({
        pod: ref,
        reason: 'MissingSidecar',
        message: 'the pod lacks one of the sidecar containers',
      });
    } else {
      matched.push({
        pod,
        ref,
        labels: pod.metadata.labels ?? {},
        updated: isUpdated(ctx, pod),
        ready: isReady(ctx, pod),
        consistent: isStateConsistent(ctx, pod),
        position: 0,
      });
    }
  }
  matched.sort(byRef);
  matched.forEach((m, i) => (m.position = i));
  excluded.sort((a, b) => byRef({ ref: a.pod }, { ref: b.pod }));
  return { matched, excluded };
}

function unavailableCount(matched: readonly MatchedPod[]): number {
  let n = 0;
  for (const m of matched) if (m.updated && !(m.consistent && m.ready)) n++;
  return n;
}

function budgetSummary(ctx: SidecarSetContext, matched: readonly MatchedPod[]): BudgetSummary {
  const unavailable = unavailableCount(matched);
  return {
    partition: scalePartition(ctx.partition, matched.length),
    maxUnavailable: scaleMaxUnavailable(ctx.maxUnavailable, matched.length),
    unavailable,
    unavailableAfter: unavailable,
    candidates: 0,
    eligible: 0,
  };
}

function hold(m: MatchedPod, reason: HoldReason, message: string): HeldPod {
  return { pod: m.ref, reason, message };
}

function stopped(
  plan: UpgradePlan,
  reason: 'NotUpdate' | 'Paused',
  outdated: readonly MatchedPod[],
  message: string,
): UpgradePlan {
  return { ...plan, held: outdated.map((m) => hold(m, reason, message)), stopped: reason };
}

function planRound(
  sidecarSet: SidecarSet,
  ctx: SidecarSetContext,
  matched: readonly MatchedPod[],
  plan: UpgradePlan,
  now: Date,
): UpgradePlan {
  const candidates: MatchedPod[] = [];
  const otherHolds: HeldPod[] = [];
  for (const m of matched) {
    if (m.updated) continue;
    if (!ctx.isSelected(m.labels)) {
      otherHolds.push(hold(m, 'NotSelected', 'updateStrategy.selector does not select the pod'));
      continue;
    }
    const verdict = upgradability(ctx, m.pod);
    if (verdict === 'notUpgradable') {
      plan.notUpgradable.push({
        pod: m.ref,
        reason: 'UpdateImmutableField',
        message:
          'a sidecar field other than image changed; the pod keeps its sidecar until recreated',
      });
    } else if (verdict === 'inFlight') {
      otherHolds.push(
        hold(m, 'UpgradeInFlight', 'a sidecar is still being updated in place by the kubelet'),
      );
    } else {
      candidates.push(m);
    }
  }
  const ordered = orderCandidates(ctx, matched, candidates);
  const outcome = upgradeCount({
    candidatesReady: ordered.map((c) => c.ready),
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
  const budgetMessage = `${plan.budget.maxUnavailable} pods may be unavailable at once and the budget is spent`;
  const partitionMessage = `the partition keeps ${plan.budget.partition} candidates on the old version`;
  const candidateHolds: HeldPod[] = [];
  for (let i = 0; i < ordered.length; i++) {
    const m = ordered[i] as MatchedPod;
    if (i < outcome.take) {
      const upgrade = tryUpgrade(sidecarSet, ctx, m, now);
      if ('reason' in upgrade) candidateHolds.push(upgrade);
      else plan.upgrade.push(upgrade);
    } else if (i < outcome.eligible) {
      candidateHolds.push(hold(m, 'MaxUnavailable', budgetMessage));
    } else {
      candidateHolds.push(hold(m, 'Partition', partitionMessage));
    }
  }
  plan.held = candidateHolds.concat(otherHolds);
  return plan;
}

/** `candidates` are in namespace/name order, as candidateOrder requires. */
function orderCandidates(
  ctx: SidecarSetContext,
  matched: readonly MatchedPod[],
  candidates: readonly MatchedPod[],
): MatchedPod[] {
  const sorted = candidateOrder(
    candidates.map((c) => c.pod),
    ctx.priority,
  ).map((i) => candidates[i] as MatchedPod);
  if (ctx.scatter.length === 0) return sorted;
  const positions = Int32Array.from(sorted, (c) => c.position);
  return scatterOrder(sorted, matched, ctx.scatter, positions).map((i) => sorted[i] as MatchedPod);
}

function tryUpgrade(
  sidecarSet: SidecarSet,
  ctx: SidecarSetContext,
  m: MatchedPod,
  now: Date,
): PodUpgrade | HeldPod {
  try {
    return buildPodUpgrade(ctx, m.pod, m.ref, sidecarSet.spec.patchPodMetadata ?? [], now);
  } catch (err) {
    if (!(err instanceof SidecarSetError)) throw err;
    return hold(m, 'PatchPodMetadataError', err.message);
  }
}
