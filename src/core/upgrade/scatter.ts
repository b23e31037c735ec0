/**
 * scatterStrategy: OpenKruise's density interleaving, term by term (parseUpdateScatterTerms in
 * pkg/controller/sidecarset/sidecarset_strategy.go, pkg/util/updatesort/scatter_sort.go). A term
 * whose value is "*" or missing (key-only scatter, docs/adr/0003-stable-upgrade-order.md) expands
 * to one term per value of the key, in order of first appearance over all matched pods taken in
 * namespace/name order, so the expansion does not depend on the input order either.
 */
import type { Labels } from '../matching/selector.js';
import type { UpdateScatterTerm } from '../api/sidecarset-types.js';

/** A pod as the scatter reads it. */
export interface Labelled {
  labels: Labels;
}

interface ScatterTerm {
  key: string;
  value: string;
}

/**
 * The candidates (in the order so far) scattered term after term, as scatterSort.Sort does.
 * `matched`: every matched pod, in namespace/name order; the terms' totals count them.
 */
export function scatterCandidates<T extends Labelled>(
  strategy: readonly UpdateScatterTerm[],
  candidates: readonly T[],
  matched: readonly Labelled[],
): T[] {
  const terms = expandScatterTerms(strategy, matched);
  let order = [...candidates];
  if (terms.length === 0 || order.length <= 1) return order;
  const totals = new ValueCounts(terms, matched);
  for (const term of termsByCount(terms, candidates)) {
    order = scatterByTerm(term, order, totals.matching(term), matched.length);
  }
  return order;
}

/** parseUpdateScatterTerms, plus key-only terms; repeated key:value pairs are dropped. */
export function expandScatterTerms(
  strategy: readonly UpdateScatterTerm[],
  matched: readonly Labelled[],
): ScatterTerm[] {
  const terms: ScatterTerm[] = [];
  const add = (key: string, value: string): void => {
    if (!terms.some((t) => t.key === key && t.value === value)) terms.push({ key, value });
  };
  for (const { key, value } of strategy) {
    if (value !== undefined && value !== '*') {
      add(key, value);
      continue;
    }
    const values = new Set<string>();
    for (const { labels } of matched) if (Object.hasOwn(labels, key)) values.add(labels[key] ?? '');
    for (const v of values) add(key, v);
  }
  return terms;
}

/** How many pods carry each value of the terms' keys, counted in one pass per key. */
class ValueCounts {
  private readonly byKey = new Map<string, Map<string, number>>();
  private readonly total: number;

  constructor(terms: readonly ScatterTerm[], pods: readonly Labelled[]) {
    this.total = pods.length;
    for (const { key } of terms) {
      if (this.byKey.has(key)) continue;
      const counts = new Map<string, number>();
      for (const { labels } of pods) {
        if (!Object.hasOwn(labels, key)) continue;
        const value = labels[key] ?? '';
        counts.set(value, (counts.get(value) ?? 0) + 1);
      }
      this.byKey.set(key, counts);
    }
  }

  /** Pods that carry the term's label and value. */
  carrying({ key, value }: ScatterTerm): number {
    return this.byKey.get(key)?.get(value) ?? 0;
  }

  /** Pods the term matches: those without the label too when its value is "" (Go reads ""). */
  matching(term: ScatterTerm): number {
    if (term.value !== '') return this.carrying(term);
    let carryingKey = 0;
    for (const n of this.byKey.get(term.key)?.values() ?? []) carryingKey += n;
    return this.carrying(term) + this.total - carryingKey;
  }
}

/**
 * getScatterTerms: one term is used as it is; of several, those some candidate carries, the most
 * carried first (a stable sort, as sort.SliceStable).
 */
function termsByCount(terms: readonly ScatterTerm[], candidates: readonly Labelled[]) {
  if (terms.length === 1) return terms;
  const counts = new ValueCounts(terms, candidates);
  return terms
    .map((term) => ({ term, count: counts.carrying(term) }))
    .filter((t) => t.count > 0)
    .sort((a, b) => b.count - a.count)
    .map((t) => t.term);
}

/** scatterPodsByRule; `totalMatched` of `total` matched pods match the term. */
function scatterByTerm<T extends Labelled>(
  { key, value }: ScatterTerm,
  order: readonly T[],
  totalMatched: number,
  total: number,
): T[] {
  const matched: T[] = [];
  const unmatched: T[] = [];
  for (const pod of order) {
    // Go's `pods[i].Labels[key] == value`: a missing label reads as "".
    const label = Object.hasOwn(pod.labels, key) ? pod.labels[key] : '';
    (label === value ? matched : unmatched).push(pod);
  }
  if (matched.length <= 1 || unmatched.length <= 1) return [...order];
  // The last matching pod is set aside and goes to the very end.
  const last = matched.pop() as T;
  const group = groupByDensity(
    totalMatched - 1,
    total - totalMatched,
    matched.length,
    unmatched.length,
  );
  const out = unmatched.slice(0, Math.max(group.remainder, 0));
  // migrateItems: up to `size` more from `from`, starting at `at`; the new position.
  const migrate = (from: readonly T[], at: number, size: number): number => {
    const end = Math.min(at + size, from.length);
    for (let k = at; k < end; k++) out.push(from[k] as T);
    return end > at ? end : at;
  };
  let m = 0;
  let u = out.length;
  for (let i = 0; i < group.groups; i++) {
    m = migrate(matched, m, group.matchedSize);
    u = migrate(unmatched, u, group.unmatchedSize);
  }
  migrate(matched, m, Infinity);
  migrate(unmatched, u, Infinity);
  out.push(last);
  return out;
}

interface Grouping {
  groups: number;
  matchedSize: number;
  unmatchedSize: number;
  remainder: number;
}

/** Go's math.Round: halves away from zero (the inputs here are positive). */
function goRound(x: number): number {
  return Math.floor(x + 0.5);
}

function evenGroups(matched: number, unmatched: number): Grouping {
  const groups = Math.min(matched, unmatched);
  return {
    groups,
    matchedSize: goRound(matched / groups),
    unmatchedSize: goRound(unmatched / groups),
    remainder: 0,
  };
}

/** calculateGroupByDensity; the ratio test is done in float32, as in Go. */
export function groupByDensity(
  totalMatched: number,
  totalUnmatched: number,
  matched: number,
  unmatched: number,
): Grouping {
  const totalRatio = Math.fround(Math.fround(totalUnmatched) / Math.fround(totalMatched));
  const ratio = Math.fround(Math.fround(unmatched) / Math.fround(matched));
  if (totalRatio >= ratio) return evenGroups(matched, unmatched);
  const total = evenGroups(totalMatched, totalUnmatched);
  const groups = Math.min(
    Math.trunc(matched / total.matchedSize),
    Math.trunc(unmatched / total.unmatchedSize),
  );
  return {
    groups,
    matchedSize: total.matchedSize,
    unmatchedSize: total.unmatchedSize,
    remainder: unmatched - groups * total.unmatchedSize,
  };
}
