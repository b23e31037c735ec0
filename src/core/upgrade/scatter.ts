/**
 * scatterStrategy (reference upgrade §4.5 c): OpenKruise's density interleaving, term by term.
 * A term whose value is "*" or missing (key-only scatter, SPEC.md) expands to one term per value of
 * the key, in order of first appearance over all matched pods taken in namespace/name order, so
 * the expansion does not depend on the input order either.
 */
import type { Labels } from '../selector.js';
import type { UpdateScatterTerm } from '../sidecarset-types.js';

export interface ScatterTerm {
  key: string;
  value: string;
}

export interface Labelled {
  labels: Labels;
}

function label(labels: Labels, key: string): string | undefined {
  return Object.hasOwn(labels, key) ? labels[key] : undefined;
}

/** parseUpdateScatterTerms, plus key-only terms; repeated key:value pairs are dropped. */
export function expandScatterTerms(
  terms: readonly UpdateScatterTerm[],
  podsInNameOrder: readonly Labelled[],
): ScatterTerm[] {
  const out: ScatterTerm[] = [];
  const seen = new Set<string>();
  const add = (key: string, value: string): void => {
    const id = JSON.stringify([key, value]);
    if (seen.has(id)) return;
    seen.add(id);
    out.push({ key, value });
  };
  for (const term of terms) {
    if (term.value !== undefined && term.value !== '*') {
      add(term.key, term.value);
      continue;
    }
    for (const pod of podsInNameOrder) {
      const value = label(pod.labels, term.key);
      if (value !== undefined) add(term.key, value);
    }
  }
  return out;
}

/** How many of all matched pods match a term (a missing label reads as ""). */
export class TermCounter {
  readonly #total: number;
  readonly #byKey = new Map<string, Map<string, number>>();

  constructor(pods: readonly Labelled[]) {
    this.#total = pods.length;
    for (const pod of pods) {
      for (const [key, value] of Object.entries(pod.labels)) {
        let values = this.#byKey.get(key);
        if (values === undefined) {
          values = new Map();
          this.#byKey.set(key, values);
        }
        values.set(value, (values.get(value) ?? 0) + 1);
      }
    }
  }

  /** Pods that carry the label with this value. */
  carrying(term: ScatterTerm): number {
    return this.#byKey.get(term.key)?.get(term.value) ?? 0;
  }

  matching(term: ScatterTerm): number {
    const values = this.#byKey.get(term.key);
    const present = this.carrying(term);
    if (term.value !== '') return present;
    let withKey = 0;
    for (const n of values?.values() ?? []) withKey += n;
    return this.#total - withKey + present;
  }

  get total(): number {
    return this.#total;
  }
}

/** getScatterTerms: one term is used as is; several are kept if a candidate has the label, by count. */
function orderTerms(terms: readonly ScatterTerm[], candidates: readonly Labelled[]): ScatterTerm[] {
  if (terms.length === 1) return [...terms];
  const counter = new TermCounter(candidates);
  const counted = terms
    .map((term) => ({ term, count: counter.carrying(term) }))
    .filter((t) => t.count > 0);
  // Array.prototype.sort is stable, as sort.SliceStable is.
  counted.sort((a, b) => b.count - a.count);
  return counted.map((t) => t.term);
}

export function scatterSort<T extends Labelled>(
  candidates: readonly T[],
  terms: readonly ScatterTerm[],
  counter: TermCounter,
): T[] {
  let sequence = [...candidates];
  if (terms.length === 0 || sequence.length <= 1) return sequence;
  for (const term of orderTerms(terms, sequence)) {
    sequence = scatterByTerm(sequence, term, counter);
  }
  return sequence;
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

/** scatterPodsByRule. */
export function scatterByTerm<T extends Labelled>(
  sequence: readonly T[],
  term: ScatterTerm,
  counter: TermCounter,
): T[] {
  const matched: T[] = [];
  const unmatched: T[] = [];
  for (const item of sequence) {
    if ((label(item.labels, term.key) ?? '') === term.value) matched.push(item);
    else unmatched.push(item);
  }
  if (matched.length <= 1 || unmatched.length <= 1) return [...sequence];
  const totalMatched = counter.matching(term);
  const totalUnmatched = counter.total - totalMatched;
  // The last matching pod is set aside and goes to the very end.
  const last = matched.pop() as T;
  const g = groupByDensity(totalMatched - 1, totalUnmatched, matched.length, unmatched.length);
  const out: T[] = unmatched.slice(0, g.remainder);
  let mi = 0;
  let ui = g.remainder;
  for (let i = 0; i < g.groups; i++) {
    const mEnd = Math.min(mi + g.matchedSize, matched.length);
    for (; mi < mEnd; mi++) out.push(matched[mi] as T);
    const uEnd = Math.min(ui + g.unmatchedSize, unmatched.length);
    for (; ui < uEnd; ui++) out.push(unmatched[ui] as T);
  }
  for (; mi < matched.length; mi++) out.push(matched[mi] as T);
  for (; ui < unmatched.length; ui++) out.push(unmatched[ui] as T);
  out.push(last);
  return out;
}
