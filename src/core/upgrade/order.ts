/**
 * The candidate order (reference upgrade §4.5 a and b): Kubernetes' ActivePods order, then
 * priorityStrategy as a stable sort on top of it. Unlike OpenKruise, every tie that is left is
 * broken by namespace, then name, so the order never depends on the input order (SPEC.md;
 * docs/adr/0003-stable-upgrade-order.md).
 */
import { compareStrings } from '../json.js';
import type { Pod } from '../k8s-types.js';
import type { Labels } from '../selector.js';
import type { UpdatePriorityStrategy } from '../sidecarset-types.js';
import { safeMatches } from './context.js';
import { hasReadyCondition, readyCondition } from './pod-state.js';

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

const PHASE_RANK: Readonly<Record<string, number>> = { Pending: 0, Unknown: 1, Running: 2 };
/** Go's zero time.Time, which is how a missing time marshals. */
const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

/** metav1.Time has second precision, so the canonical string orders exactly as the time. */
function timeOf(value: string | null | undefined): string {
  if (value === undefined || value === null || value === '' || value === GO_ZERO_TIME) return '';
  // The form the API server writes: no parsing needed (this is the hot path for large fleets).
  if (value.length === 20 && value[10] === 'T' && value[19] === 'Z') return value;
  const ms = Date.parse(value);
  if (Number.isNaN(ms) || ms <= Date.parse(GO_ZERO_TIME)) return '';
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function orderKey(
  pod: Readonly<Pod>,
  namespace: string,
  priority: UpdatePriorityStrategy | undefined,
): OrderKey {
  const ready = hasReadyCondition(pod);
  const labels = pod.metadata.labels ?? {};
  let restarts = 0;
  for (const s of pod.status?.containerStatuses ?? []) {
    restarts = Math.max(restarts, s.restartCount ?? 0);
  }
  const { level, value } = orderPriority(priority, labels);
  return {
    namespace,
    name: pod.metadata.name ?? '',
    unscheduled: (pod.spec.nodeName ?? '') === '',
    phaseRank: PHASE_RANK[pod.status?.phase ?? ''] ?? 0,
    ready,
    readyTime: ready ? timeOf(readyCondition(pod)?.lastTransitionTime) : '',
    restarts,
    created: timeOf(pod.metadata.creationTimestamp),
    weight: weightPriority(priority, labels),
    level,
    levelValue: value,
  };
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

export function compareByName(a: OrderKey, b: OrderKey): number {
  return compareStrings(a.namespace, b.namespace) || compareStrings(a.name, b.name);
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
    return compareActivePods(a, b) || compareByName(a, b);
  };
}

function weightPriority(priority: UpdatePriorityStrategy | undefined, labels: Labels): number {
  let weight = 0;
  for (const term of priority?.weightPriority ?? []) {
    if (safeMatches(term.matchSelector, labels)) weight += term.weight;
  }
  return weight;
}

/** The first orderedKey the pod carries (−1 when none: such pods go first) and its number. */
function orderPriority(
  priority: UpdatePriorityStrategy | undefined,
  labels: Labels,
): { level: number; value: bigint } {
  const terms = priority?.orderPriority ?? [];
  for (let i = 0; i < terms.length; i++) {
    const key = terms[i]?.orderedKey ?? '';
    const value = labels[key];
    if (value !== undefined && Object.hasOwn(labels, key)) {
      return { level: i, value: trailingNumber(value) };
    }
  }
  return { level: -1, value: 0n };
}

const INT64_MAX = 2n ** 63n - 1n;

/** The integer of the value's trailing digits: "sts-10" → 10, "abc" → 0, overflow → 0. */
export function trailingNumber(value: string): bigint {
  const digits = /\d+$/.exec(value)?.[0];
  if (digits === undefined) return 0n;
  const n = BigInt(digits);
  return n > INT64_MAX ? 0n : n;
}

/** A canonical time with every digit reversed, so that later times sort first. */
function laterFirst(time: string): string {
  if (time === '') return '0';
  let out = '1';
  for (let i = 0; i < time.length; i++) {
    const c = time.charCodeAt(i);
    out += c >= 48 && c <= 57 ? String.fromCharCode(105 - c) : time.charAt(i);
  }
  return out;
}

const WEIGHT_OFFSET = 1e12;

function fixed(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/**
 * One string per candidate that sorts (by plain string comparison) exactly as
 * candidateComparator orders, so large fleets sort without a multi-field comparator. Field widths
 * are fixed; namespace and name come last, separated by a character names cannot contain.
 */
export function sortKey(key: OrderKey, priority: UpdatePriorityStrategy | undefined): string {
  let out = '';
  if ((priority?.weightPriority ?? []).length > 0) {
    out += fixed(WEIGHT_OFFSET - key.weight, 13);
  } else if ((priority?.orderPriority ?? []).length > 0) {
    out += fixed(key.level + 1, 6) + (INT64_MAX - key.levelValue).toString().padStart(19, '0');
  }
  out += key.unscheduled ? '0' : '1';
  out += String(key.phaseRank);
  out += key.ready ? '1' + laterFirst(key.readyTime) : '0';
  out += fixed(1e9 - Math.min(key.restarts, 1e9), 10);
  out += laterFirst(key.created);
  return `${out}\u0000${key.namespace}\u0000${key.name}`;
}
