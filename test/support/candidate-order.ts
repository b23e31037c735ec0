/**
 * The plain twin of sortCandidates (src/core/upgrade/order.ts): each candidate's fields in one
 * object, compared field by field as OpenKruise's SortUpdateIndexes and Kubernetes' ActivePods.Less
 * do, then namespace and name (docs/adr/0003-stable-upgrade-order.md).
 */
import { compareStrings } from '../../src/core/json.js';
import type { Pod } from '../../src/core/k8s-types.js';
import type { Labels } from '../../src/core/selector.js';
import type { UpdatePriorityStrategy } from '../../src/core/sidecarset-types.js';
import { safeMatches } from '../../src/core/upgrade/context.js';
import type { Sortable } from '../../src/core/upgrade/order.js';
import {
  isUnscheduled,
  maxRestarts,
  orderPriority,
  phaseRank,
  timeOf,
} from '../../src/core/upgrade/order.js';
import { podRef } from '../../src/core/upgrade/plan.js';
import { hasReadyCondition, readyCondition } from '../../src/core/upgrade/pod-state.js';

export interface OrderKey {
  namespace: string;
  name: string;
  unscheduled: boolean;
  phaseRank: number;
  ready: boolean;
  /** Canonical RFC 3339 (UTC, seconds), which sorts as time does; "" for a missing time. */
  readyTime: string;
  restarts: number;
  created: string;
  weight: number;
  level: number;
  levelValue: bigint;
}

export function orderKey(
  pod: Readonly<Pod>,
  namespace: string,
  priority: UpdatePriorityStrategy | undefined,
): OrderKey {
  const ready = hasReadyCondition(pod);
  const labels = pod.metadata.labels ?? {};
  const { level, value } = orderPriority(priority, labels);
  return {
    namespace,
    name: pod.metadata.name ?? '',
    unscheduled: isUnscheduled(pod),
    phaseRank: phaseRank(pod),
    ready,
    readyTime: ready ? timeOf(readyCondition(pod)?.lastTransitionTime) : '',
    restarts: maxRestarts(pod),
    created: timeOf(pod.metadata.creationTimestamp),
    weight: weightPriority(priority, labels),
    level,
    levelValue: value,
  };
}

function weightPriority(priority: UpdatePriorityStrategy | undefined, labels: Labels): number {
  let weight = 0;
  for (const term of priority?.weightPriority ?? []) {
    if (safeMatches(term.matchSelector, labels)) weight += term.weight;
  }
  return weight;
}

/** afterOrZero: a zero time first, otherwise the later time first. */
function afterOrZero(a: string, b: string): number {
  if (a === '' || b === '') return a === '' ? -1 : 1;
  return compareStrings(b, a);
}

/** ActivePods.Less, as a three-way comparison. */
export function compareActivePods(a: OrderKey, b: OrderKey): number {
  if (a.unscheduled !== b.unscheduled) return a.unscheduled ? -1 : 1;
  if (a.phaseRank !== b.phaseRank) return a.phaseRank - b.phaseRank;
  if (a.ready !== b.ready) return a.ready ? 1 : -1;
  if (a.ready && a.readyTime !== b.readyTime) return afterOrZero(a.readyTime, b.readyTime);
  if (a.restarts !== b.restarts) return b.restarts - a.restarts;
  if (a.created !== b.created) return afterOrZero(a.created, b.created);
  return 0;
}

/**
 * priorityStrategy first (a stable sort over the default order is the same as comparing priority
 * first), then the default order, then namespace/name.
 */
export function candidateComparator(
  priority: UpdatePriorityStrategy | undefined,
): (a: OrderKey, b: OrderKey) => number {
  const byWeight = (priority?.weightPriority ?? []).length > 0;
  const byOrder = !byWeight && (priority?.orderPriority ?? []).length > 0;
  return (a, b) => {
    if (byWeight && a.weight !== b.weight) return b.weight - a.weight;
    if (byOrder) {
      if (a.level !== b.level) return a.level - b.level;
      if (a.levelValue !== b.levelValue) return a.levelValue > b.levelValue ? -1 : 1;
    }
    return (
      compareActivePods(a, b) ||
      compareStrings(a.namespace, b.namespace) ||
      compareStrings(a.name, b.name)
    );
  };
}

/** Pods as sortCandidates takes them. */
export function asCandidates(pods: readonly Readonly<Pod>[]): Sortable[] {
  return pods.map((pod) => ({ pod, labels: pod.metadata.labels ?? {}, ref: podRef(pod) }));
}

/** What sortCandidates gives, by the comparator (a stable sort: equal pods keep their order). */
export function sortCandidatesByComparator<T extends Sortable>(
  candidates: readonly T[],
  priority: UpdatePriorityStrategy | undefined,
): T[] {
  const compare = candidateComparator(priority);
  return candidates
    .map((c) => ({ c, key: orderKey(c.pod, c.ref.namespace, priority) }))
    .sort((a, b) => compare(a.key, b.key))
    .map(({ c }) => c);
}
