/**
 * planUpgrade: one reconcile round of the SidecarSet upgrade controller as a pure function
 * (reference upgrade §2.2 steps 5–11, §4, §5.1, §6). Deterministic: the same pods in any order
 * give the same plan.
 */
import { SidecarSetError } from '../../src/core/errors.js';
import { compareStrings } from '../../src/core/json.js';
import type { Pod } from '../../src/core/k8s-types.js';
import { podNamespace } from '../../src/core/match.js';
import type { SidecarSet } from '../../src/core/sidecarset-types.js';
import { scaleMaxUnavailable, scalePartition } from '../../src/core/upgrade/intstr.js';
import { upgradeCount } from './budget.js';
import { buildPodFlip, podUpgradeBuilder } from './change.js';
import type { SidecarSetContext } from './context.js';
import { sidecarSetContext } from './context.js';
import { needsFlip } from './hot-slots.js';
import { CandidateKeys } from './order.js';
import {
  hasEverySidecar,
  isActivePod,
  isInjectedBy,
  isReady,
  isStateConsistent,
  isUpdated,
  upgradability,
} from './pod-state.js';
import { LabelCodes, scatterCodedPods, scatterKeys } from './scatter.js';
import type { StatusCounts } from './status.js';
import { computeStatus } from './status.js';
import type {
  BudgetSummary,
  ExcludedPod,
  HeldPod,
  HoldReason,
  PlanOptions,
  PodFlip,
  PodRef,
  PodUpgrade,
  UpgradePlan,
} from './types.js';

/** A matched pod's state, as bits (reference §3.2, §3.5, §3.6). */
const UPDATED = 1;
const READY = 2;
const CONSISTENT = 4;

/** What the round does with an outdated pod, decided when the pod is read. */
const CANDIDATE = 1;
const NOT_SELECTED = 2;
const NOT_UPGRADABLE = 3;
const IN_FLIGHT = 4;

/**
 * The matched pods, read once each: every per-pod fact the plan needs is gathered in that one
 * pass into flat arrays (over a large fleet, reaching each pod's scattered objects is the cost),
 * and the pod objects are read again only for the pods named in the plan.
 */
interface MatchedPods {
  /** In the order they were given. */
  pods: Readonly<Pod>[];
  flags: Uint8Array;
  /** CANDIDATE, NOT_SELECTED, ... for outdated pods when the round plans (else 0). */
  verdicts: Uint8Array;
  /** Their namespaces and names, read with the rest of the pod. */
  namespaces: string[];
  names: string[];
  /**
   * The outdated pods' refs (undefined for updated pods, which the plan never names), made while
   * each pod's metadata is at hand rather than in a second pass over the scattered pods.
   */
  refs: (PodRef | undefined)[];
  /** The candidates (indexes into `pods`, in the order read; `keys.size` of them) and their sort fields. */
  candidates: Int32Array;
  keys: CandidateKeys;
  /** Scatter label codes of every matched pod, when the round plans with scatter. */
  scatter: LabelCodes | undefined;
}

export function podRef(pod: Readonly<Pod>): PodRef {
  return makeRef(podNamespace(pod), pod.metadata.name ?? '', pod.metadata.uid);
}

function makeRef(namespace: string, name: string, uid: string | undefined): PodRef {
  // Each shape made whole by one literal: adding uid afterwards costs a shape change per pod.
  return uid !== undefined && uid !== '' ? { namespace, name, uid } : { namespace, name };
}

export function podKey(ref: PodRef): string {
  return `${ref.namespace}/${ref.name}`;
}

function byRef(a: PodRef, b: PodRef): number {
  return compareStrings(a.namespace, b.namespace) || compareStrings(a.name, b.name);
}

export function planUpgrade(
  sidecarSet: SidecarSet,
  pods: readonly Readonly<Pod>[],
  options: PlanOptions,
): UpgradePlan {
  const ctx = sidecarSetContext(sidecarSet);
  // Only a round that may upgrade needs each pod's verdict, sort fields and labels.
  const plans = !ctx.notUpdate && !ctx.paused;
  const { matched, excluded } = readPods(ctx, pods, plans);
  const plan: UpgradePlan = {
    sidecarSet: ctx.name,
    hash: ctx.hash,
    upgrade: [],
    flip: [],
    notUpgradable: [],
    held: [],
    excluded,
    status: computeStatus(sidecarSet, statusCounts(matched.flags)),
    budget: budgetSummary(ctx, matched.flags),
  };
  // Made once, when a stopped plan or a flip round orders its pods (planRound makes its own).
  let order: NameOrder | undefined;
  const byName = (): NameOrder => (order ??= nameOrder(matched));
  const refs = (): PodRef[] => outdatedPods(matched, byName()).map((i) => refOf(matched, i));
  if (ctx.notUpdate) return stopped(plan, 'NotUpdate', refs(), 'updateStrategy.type is NotUpdate');
  if (ctx.paused) return stopped(plan, 'Paused', refs(), 'updateStrategy.paused is true');
  // Finished hot upgrades are flipped first, and alone in their round (§2.2 step 9).
  const flip = ctx.hot.length > 0 ? flips(ctx, matched, byName, options.now) : [];
  if (flip.length > 0) {
    const message = 'this round puts finished hot upgrades back on the empty image first';
    return { ...plan, flip, held: refs().map((ref) => hold(ref, 'HotUpgradeFlip', message)) };
  }
  if (plan.status.updatedPods === plan.status.matchedPods) return { ...plan, stopped: 'Complete' };
  return planRound(sidecarSet, ctx, matched, plan, options.now);
}

/** The matched pods whose finished hot upgrade waits for its flip, in namespace/name order. */
function flips(
  ctx: SidecarSetContext,
  matched: MatchedPods,
  byName: () => NameOrder,
  now: Date,
): PodFlip[] {
  const waiting: number[] = [];
  for (let i = 0; i < matched.pods.length; i++) {
    if (needsFlip(ctx, matched.pods[i] as Readonly<Pod>)) waiting.push(i);
  }
  if (waiting.length === 0) return [];
  return waiting.sort(byName().compare).map((i) => {
    const pod = matched.pods[i] as Readonly<Pod>;
    return buildPodFlip(ctx, pod, podRef(pod), now);
  });
}

/** Every given pod once: excluded, or matched with its flags (and, if `plans`, its verdict). */
function readPods(
  ctx: SidecarSetContext,
  pods: readonly Readonly<Pod>[],
  plans: boolean,
): { matched: MatchedPods; excluded: ExcludedPod[] } {
  // Sized for every pod up front, then cut to the matched ones: arrays grown one push at a time
  // leave their outgrown copies to the garbage collector, which over a large fleet is a real cost.
  const matched: MatchedPods = {
    pods: new Array<Readonly<Pod>>(pods.length),
    flags: new Uint8Array(pods.length),
    verdicts: new Uint8Array(pods.length),
    namespaces: new Array<string>(pods.length),
    names: new Array<string>(pods.length),
    refs: new Array<PodRef | undefined>(pods.length),
    candidates: new Int32Array(plans ? pods.length : 0),
    keys: new CandidateKeys(ctx.priority, plans ? pods.length : 0),
    scatter:
      plans && ctx.scatter.length > 0
        ? new LabelCodes(scatterKeys(ctx.scatter), pods.length)
        : undefined,
  };
  const excluded: ExcludedPod[] = [];
  let n = 0;
  for (const pod of pods) {
    const reason = exclusion(ctx, pod);
    if (reason !== undefined) {
      excluded.push({ pod: podRef(pod), ...reason });
      continue;
    }
    const i = n++;
    matched.pods[i] = pod;
    const updated = isUpdated(ctx, pod);
    const namespace = podNamespace(pod);
    const name = pod.metadata.name ?? '';
    matched.namespaces[i] = namespace;
    matched.names[i] = name;
    matched.refs[i] = updated ? undefined : makeRef(namespace, name, pod.metadata.uid);
    matched.flags[i] =
      (updated ? UPDATED : 0) |
      (isReady(ctx, pod) ? READY : 0) |
      (isStateConsistent(ctx, pod) ? CONSISTENT : 0);
    if (plans) readForRound(ctx, matched, i, updated);
  }
  for (const list of [matched.pods, matched.namespaces, matched.names, matched.refs]) {
    list.length = n;
  }
  matched.candidates = matched.candidates.subarray(0, matched.keys.size);
  matched.flags = matched.flags.subarray(0, n);
  matched.verdicts = matched.verdicts.subarray(0, n);
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

/** The round's facts of matched pod i: scatter labels, and for an outdated pod its verdict. */
function readForRound(
  ctx: SidecarSetContext,
  matched: MatchedPods,
  i: number,
  updated: boolean,
): void {
  const pod = matched.pods[i] as Readonly<Pod>;
  const labels = pod.metadata.labels ?? {};
  matched.scatter?.add(labels);
  if (updated) return;
  if (!ctx.isSelected(labels)) {
    matched.verdicts[i] = NOT_SELECTED;
    return;
  }
  const verdict = upgradability(ctx, pod, ((matched.flags[i] as number) & CONSISTENT) !== 0);
  matched.verdicts[i] =
    verdict === 'notUpgradable' ? NOT_UPGRADABLE : verdict === 'inFlight' ? IN_FLIGHT : CANDIDATE;
  if (verdict === 'candidate') {
    matched.candidates[matched.keys.size] = i;
    matched.keys.add(pod, labels);
  }
}

/**
 * Matched pods (as indexes) by namespace, then name, then the order given: the plan's lists follow
 * it, and candidates equal in every other field are ordered by it. Only the pods a list names are
 * sorted, never the whole fleet; namespaces are compared by their rank among the few there are.
 */
interface NameOrder {
  compare: (a: number, b: number) => number;
  /** Each matched pod's namespace rank. */
  namespaceRanks: Int32Array;
}

function nameOrder(matched: MatchedPods): NameOrder {
  const { namespaces, names } = matched;
  const codes = new Map<string, number>();
  for (const namespace of namespaces) if (!codes.has(namespace)) codes.set(namespace, codes.size);
  const rankOf = new Int32Array(codes.size);
  [...codes.keys()].sort(compareStrings).forEach((namespace, r) => {
    rankOf[codes.get(namespace) as number] = r;
  });
  const namespaceRanks = new Int32Array(namespaces.length);
  for (let i = 0; i < namespaces.length; i++) {
    namespaceRanks[i] = rankOf[codes.get(namespaces[i] as string) as number] as number;
  }
  return {
    namespaceRanks,
    compare: (a, b) =>
      (namespaceRanks[a] as number) - (namespaceRanks[b] as number) ||
      compareStrings(names[a] as string, names[b] as string) ||
      a - b,
  };
}

function statusCounts(flags: Uint8Array): StatusCounts {
  const counts = { matchedPods: flags.length, updatedPods: 0, readyPods: 0, updatedReadyPods: 0 };
  for (const f of flags) {
    const updated = (f & UPDATED) !== 0;
    const consistentAndReady = (f & (READY | CONSISTENT)) === (READY | CONSISTENT);
    if (updated) counts.updatedPods++;
    if (consistentAndReady) counts.readyPods++;
    if (updated && consistentAndReady) counts.updatedReadyPods++;
  }
  return counts;
}

/** Indexes of the matched pods not yet updated, in namespace/name order. */
function outdatedPods(matched: MatchedPods, byName: NameOrder): number[] {
  const outdated: number[] = [];
  for (let i = 0; i < matched.flags.length; i++) {
    if (((matched.flags[i] as number) & UPDATED) === 0) outdated.push(i);
  }
  return outdated.sort(byName.compare);
}

/** An outdated pod's ref (made when the pod was read). */
function refOf(matched: MatchedPods, i: number): PodRef {
  return matched.refs[i] as PodRef;
}

function unavailableCount(flags: Uint8Array): number {
  let n = 0;
  for (const f of flags)
    if (f & UPDATED && (f & (READY | CONSISTENT)) !== (READY | CONSISTENT)) n++;
  return n;
}

function budgetSummary(ctx: SidecarSetContext, flags: Uint8Array): BudgetSummary {
  const unavailable = unavailableCount(flags);
  return {
    partition: scalePartition(ctx.partition, flags.length),
    maxUnavailable: scaleMaxUnavailable(ctx.maxUnavailable, flags.length),
    unavailable,
    unavailableAfter: unavailable,
    candidates: 0,
    eligible: 0,
  };
}

function hold(pod: PodRef, reason: HoldReason, message: string): HeldPod {
  return { pod, reason, message };
}

function stopped(
  plan: UpgradePlan,
  reason: 'NotUpdate' | 'Paused',
  outdated: readonly PodRef[],
  message: string,
): UpgradePlan {
  return { ...plan, held: outdated.map((ref) => hold(ref, reason, message)), stopped: reason };
}

function planRound(
  sidecarSet: SidecarSet,
  ctx: SidecarSetContext,
  matched: MatchedPods,
  plan: UpgradePlan,
  now: Date,
): UpgradePlan {
  const byName = nameOrder(matched);
  // Pods held for their own state, listed after the candidates' holds.
  const otherHolds: number[] = [];
  const notUpgradable: number[] = [];
  for (let i = 0; i < matched.verdicts.length; i++) {
    const verdict = matched.verdicts[i];
    if (verdict === NOT_SELECTED || verdict === IN_FLIGHT) otherHolds.push(i);
    else if (verdict === NOT_UPGRADABLE) notUpgradable.push(i);
  }
  for (const i of notUpgradable.sort(byName.compare)) {
    plan.notUpgradable.push({
      pod: refOf(matched, i),
      reason: 'UpdateImmutableField',
      message:
        'a sidecar field other than image changed; the pod keeps its sidecar until recreated',
    });
  }
  otherHolds.sort(byName.compare);
  const ordered = orderCandidates(ctx, matched, byName);
  const candidatesReady = new Array<boolean>(ordered.length);
  for (let k = 0; k < ordered.length; k++) {
    candidatesReady[k] = ((matched.flags[ordered[k] as number] as number) & READY) !== 0;
  }
  const outcome = upgradeCount({
    candidatesReady,
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
  const held = plan.held;
  const build = podUpgradeBuilder(ctx, sidecarSet.spec.patchPodMetadata ?? [], now);
  for (let k = 0; k < ordered.length; k++) {
    const i = ordered[k] as number;
    const ref = refOf(matched, i);
    if (k < outcome.take) {
      const upgrade = tryUpgrade(build, matched.pods[i] as Readonly<Pod>, ref);
      if ('reason' in upgrade) held.push(upgrade);
      else plan.upgrade.push(upgrade);
    } else if (k < outcome.eligible) {
      held.push(hold(ref, 'MaxUnavailable', budgetMessage));
    } else {
      held.push(hold(ref, 'Partition', partitionMessage));
    }
  }
  for (const i of otherHolds) {
    held.push(
      matched.verdicts[i] === NOT_SELECTED
        ? hold(refOf(matched, i), 'NotSelected', 'updateStrategy.selector does not select the pod')
        : hold(
            refOf(matched, i),
            'UpgradeInFlight',
            'a sidecar is still being updated in place by the kubelet',
          ),
    );
  }
  return plan;
}

/**
 * The candidates in upgrade order, as indexes into matched.pods: sorted by their fields, then
 * namespace (one more counted key), then name, then scattered.
 */
function orderCandidates(
  ctx: SidecarSetContext,
  matched: MatchedPods,
  byName: NameOrder,
): Int32Array {
  const { candidates } = matched;
  const namespaces = new Float64Array(candidates.length);
  const names = new Array<string>(candidates.length);
  for (let c = 0; c < candidates.length; c++) {
    const i = candidates[c] as number;
    namespaces[c] = byName.namespaceRanks[i] as number;
    names[c] = matched.names[i] as string;
  }
  const sorted = pick(candidates, matched.keys.order(namespaces, names));
  if (matched.scatter === undefined) return sorted;
  return pick(sorted, scatterCodedPods(matched.scatter, byName.compare, ctx.scatter, sorted));
}

/** values[at[k]] for each k. */
function pick(values: ArrayLike<number>, at: Int32Array): Int32Array {
  const picked = new Int32Array(at.length);
  for (let k = 0; k < at.length; k++) picked[k] = values[at[k] as number] as number;
  return picked;
}

function tryUpgrade(
  build: (pod: Readonly<Pod>, ref: PodRef) => PodUpgrade,
  pod: Readonly<Pod>,
  ref: PodRef,
): PodUpgrade | HeldPod {
  try {
    return build(pod, ref);
  } catch (err) {
    if (!(err instanceof SidecarSetError)) throw err;
    return hold(ref, 'PatchPodMetadataError', err.message);
  }
}
