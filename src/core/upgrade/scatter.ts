/**
 * scatterStrategy: OpenKruise's density interleaving, term by term (parseUpdateScatterTerms in
 * pkg/controller/sidecarset/sidecarset_strategy.go, pkg/util/updatesort/scatter_sort.go). A term
 * whose value is "*" or missing (key-only scatter, docs/adr/0003-stable-upgrade-order.md) expands
 * to one term per value of the key, in order of first appearance over all matched pods taken in
 * namespace/name order, so the expansion does not depend on the input order either.
 */
import type { Labels } from '../matching/selector.js';
import { labelValue } from '../matching/selector.js';
import type { UpdateScatterTerm } from '../api/sidecarset-types.js';
import { compareByName } from '../api/pod-ref.js';
import type { PodRef } from '../api/pod-ref.js';

type ScatterTerm = Required<UpdateScatterTerm>;

/**
 * scatterSort.Sort: the candidates (in the order so far) scattered term after term. As in Go, the
 * passes reorder indexes into `candidates`; each scatter key's label is read once per candidate.
 * `matched`: every matched pod; the terms' totals count them.
 */
export function scatterCandidates<T extends { labels: Labels }>(
  strategy: readonly UpdateScatterTerm[],
  candidates: readonly T[],
  matched: readonly { labels: Labels; ref: PodRef }[],
): T[] {
  if (candidates.length <= 1) return [...candidates];
  const terms = expandScatterTerms(strategy, matched);
  const keys = new Set(terms.map((t) => t.key));
  // By scatter key, each candidate's label (undefined: it has none).
  const labels = new Map(
    [...keys].map((key) => [key, candidates.map((c) => labelValue(c.labels, key))]),
  );
  const carrying = termCounter(matched);
  let indexes: readonly number[] = candidates.map((_, i) => i);
  for (const term of scatterTerms(terms, labels)) {
    const values = labels.get(term.key) ?? [];
    // Go's `pods[i].Labels[key] == value` in scatterPodsByRule: a missing label reads as "".
    const carries = (i: number): boolean => (values[i] ?? '') === term.value;
    indexes = scatterByTerm(indexes, carries, carrying(term), matched.length);
  }
  return indexes.map((i) => candidates[i] as T);
}

/** parseUpdateScatterTerms, plus key-only terms; repeated key:value pairs are dropped. */
export function expandScatterTerms(
  strategy: readonly UpdateScatterTerm[],
  matched: readonly { labels: Labels; ref: PodRef }[],
): ScatterTerm[] {
  const terms: ScatterTerm[] = [];
  const add = (key: string, value: string): void => {
    if (!terms.some((t) => t.key === key && t.value === value)) terms.push({ key, value });
  };
  for (const { key, value } of strategy) {
    if (value !== undefined && value !== '*') add(key, value);
    else for (const v of valuesByFirstPod(matched, key)) add(key, v);
  }
  return terms;
}

/** The label's values, each placed by the first pod (in namespace/name order) that carries it. */
function valuesByFirstPod(pods: readonly { labels: Labels; ref: PodRef }[], key: string) {
  const first = new Map<string, PodRef>();
  for (const { labels, ref } of pods) {
    const value = labelValue(labels, key);
    if (value === undefined) continue;
    const seen = first.get(value);
    if (seen === undefined || compareByName(ref, seen) < 0) first.set(value, ref);
  }
  return [...first].sort(([, a], [, b]) => compareByName(a, b)).map(([value]) => value);
}

/** How many of the pods carry a term, counted once per key (a missing label reads as ""). */
function termCounter(pods: readonly { labels: Labels }[]) {
  const byKey = new Map<string, Map<string, number>>();
  return ({ key, value }: ScatterTerm): number => {
    let counts = byKey.get(key);
    if (counts === undefined) {
      counts = new Map();
      for (const { labels } of pods) {
        const carried = labelValue(labels, key) ?? '';
        counts.set(carried, (counts.get(carried) ?? 0) + 1);
      }
      byKey.set(key, counts);
    }
    return counts.get(value) ?? 0;
  };
}

/**
 * getScatterTerms: one term is used as it is; of several, those some candidate carries, the most
 * carried first (a stable sort, as sort.SliceStable).
 */
function scatterTerms(
  terms: readonly ScatterTerm[],
  labels: ReadonlyMap<string, readonly (string | undefined)[]>,
): readonly ScatterTerm[] {
  if (terms.length <= 1) return terms;
  const carriedBy = ({ key, value }: ScatterTerm): number =>
    (labels.get(key) ?? []).filter((v) => v === value).length;
  return terms
    .map((term) => ({ term, count: carriedBy(term) }))
    .filter((t) => t.count > 0)
    .sort((a, b) => b.count - a.count)
    .map((t) => t.term);
}

/** scatterPodsByRule: the term's pods spread evenly among the rest (`carrying` of `total`). */
function scatterByTerm(
  indexes: readonly number[],
  carries: (index: number) => boolean,
  carrying: number,
  total: number,
): readonly number[] {
  const matching: number[] = [];
  const others: number[] = [];
  for (const i of indexes) (carries(i) ? matching : others).push(i);
  if (matching.length <= 1 || others.length <= 1) return indexes;
  // The last matching pod is set aside and goes to the very end.
  const last = matching.pop() as number;
  const group = groupByDensity(carrying - 1, total - carrying, matching.length, others.length);
  // Every index once, in an array sized up front (pushing a fleet's worth costs more: docs/plan.md).
  const out = new Array<number>(indexes.length);
  let placed = 0;
  // migrateItems: up to `size` more from `from`, starting at `at`; the new position.
  const migrate = (from: readonly number[], at: number, size: number): number => {
    const end = Math.min(at + size, from.length);
    for (let k = at; k < end; k++) out[placed++] = from[k] as number;
    return end;
  };
  let m = 0;
  let u = migrate(others, 0, Math.max(group.remainder, 0));
  for (let i = 0; i < group.groups; i++) {
    m = migrate(matching, m, group.matchedSize);
    u = migrate(others, u, group.unmatchedSize);
  }
  migrate(matching, m, Infinity);
  migrate(others, u, Infinity);
  out[placed] = last;
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
