/**
 * The candidates' upgrade order, as SortUpdateIndexes orders them in OpenKruise
 * (pkg/controller/sidecarset/sidecarset_strategy.go): Kubernetes' default order
 * (GetPodsSortFunc, which is ActivePods.Less), then a stable sort by priorityStrategy
 * (pkg/util/updatesort/priority_sort.go). Comparing the priority first and the default order
 * second is the same. Unlike OpenKruise, every tie left is broken by namespace, then name, so the
 * order never depends on the input order (docs/adr/0003-stable-upgrade-order.md).
 */
import type { Pod } from '../api/k8s-types.js';
import { compareByName, podNamespace } from '../api/pod-ref.js';
import type { Labels } from '../matching/selector.js';
import { labelValue, validSelectorMatches } from '../matching/selector.js';
import type { UpdatePriorityStrategy } from '../api/sidecarset-types.js';
import { readyCondition } from '../api/pod-status.js';

/** What the comparison reads of a candidate, read once before sorting. */
interface SortKey<T> {
  candidate: T;
  namespace: string;
  name: string;
  weight: number;
  /** The first orderPriority key the pod carries (−1: none), and the number its value ends in. */
  level: number;
  levelValue: bigint;
  unscheduled: boolean;
  phase: number;
  ready: boolean;
  /** Seconds since the epoch; undefined for no time (metav1.Time has second precision). */
  readyTime: number | undefined;
  restarts: number;
  created: number | undefined;
}

/** The candidates in upgrade order. */
export function sortCandidates<T extends { pod: Readonly<Pod> }>(
  candidates: readonly T[],
  priority: UpdatePriorityStrategy | undefined,
): T[] {
  const keys = candidates.map((c) => sortKey(c, priority));
  const comparePriority = priorityComparison(priority);
  keys.sort((a, b) => comparePriority(a, b) || compareActivePods(a, b) || compareByName(a, b));
  return keys.map((key) => key.candidate);
}

/** prioritySort.compare: a higher weight first; or a lower level, then a larger value, first. */
function priorityComparison(
  priority: UpdatePriorityStrategy | undefined,
): (a: SortKey<unknown>, b: SortKey<unknown>) => number {
  if ((priority?.weightPriority ?? []).length > 0) return (a, b) => b.weight - a.weight;
  if ((priority?.orderPriority ?? []).length === 0) return () => 0;
  return (a, b) => {
    if (a.level !== b.level) return a.level - b.level;
    return a.levelValue === b.levelValue ? 0 : a.levelValue > b.levelValue ? -1 : 1;
  };
}

/**
 * ActivePods.Less: unscheduled first, then Pending < Unknown < Running, not ready first, ready
 * later first, more restarts first, created later first (a missing time first).
 */
function compareActivePods(a: SortKey<unknown>, b: SortKey<unknown>): number {
  if (a.unscheduled !== b.unscheduled) return a.unscheduled ? -1 : 1;
  if (a.phase !== b.phase) return a.phase - b.phase;
  if (a.ready !== b.ready) return a.ready ? 1 : -1;
  if (a.ready && a.readyTime !== b.readyTime) return afterOrZero(a.readyTime, b.readyTime);
  if (a.restarts !== b.restarts) return b.restarts - a.restarts;
  if (a.created !== b.created) return afterOrZero(a.created, b.created);
  return 0;
}

function afterOrZero(a: number | undefined, b: number | undefined): number {
  if (a === undefined || b === undefined) return a === undefined ? -1 : 1;
  return b - a;
}

function sortKey<T extends { pod: Readonly<Pod> }>(
  candidate: T,
  priority: UpdatePriorityStrategy | undefined,
): SortKey<T> {
  const { pod } = candidate;
  const labels = pod.metadata.labels ?? {};
  const condition = readyCondition(pod);
  const ready = condition?.status === 'True';
  const phase = pod.status?.phase;
  return {
    candidate,
    namespace: podNamespace(pod),
    name: pod.metadata.name ?? '',
    weight: weightPriority(priority, labels),
    ...orderPriority(priority, labels),
    unscheduled: (pod.spec.nodeName ?? '') === '',
    // Pending < Unknown < Running; any other phase ranks as Pending.
    phase: phase === 'Running' ? 2 : phase === 'Unknown' ? 1 : 0,
    ready,
    readyTime: ready ? secondsOf(condition.lastTransitionTime) : undefined,
    restarts: (pod.status?.containerStatuses ?? []).reduce(
      (most, s) => Math.max(most, s.restartCount ?? 0),
      0,
    ),
    created: secondsOf(pod.metadata.creationTimestamp),
  };
}

function weightPriority(priority: UpdatePriorityStrategy | undefined, labels: Labels): number {
  let weight = 0;
  for (const term of priority?.weightPriority ?? []) {
    if (validSelectorMatches(term.matchSelector, labels)) weight += term.weight;
  }
  return weight;
}

/** getPodOrderPriority: the first orderedKey the pod carries and its value's trailing number. */
function orderPriority(
  priority: UpdatePriorityStrategy | undefined,
  labels: Labels,
): { level: number; levelValue: bigint } {
  const terms = priority?.orderPriority ?? [];
  for (let level = 0; level < terms.length; level++) {
    const value = labelValue(labels, terms[level]?.orderedKey ?? '');
    if (value !== undefined) return { level, levelValue: trailingNumber(value) };
  }
  return { level: -1, levelValue: 0n };
}

const INT64_MAX = 2n ** 63n - 1n;

/** getIntFromStringSuffix: "sts-10" → 10, "abc" → 0, beyond int64 → 0. */
export function trailingNumber(value: string): bigint {
  const digits = /\d+$/.exec(value)?.[0];
  if (digits === undefined) return 0n;
  const n = BigInt(digits);
  return n > INT64_MAX ? 0n : n;
}

/** Go's zero time.Time, which is how a missing time marshals. */
const GO_ZERO_TIME = Date.parse('0001-01-01T00:00:00Z');

function secondsOf(value: string | null | undefined): number | undefined {
  const ms = Date.parse(value ?? '');
  return Number.isNaN(ms) || ms <= GO_ZERO_TIME ? undefined : Math.floor(ms / 1000);
}
