/**
 * scatterStrategy: OpenKruise's density interleaving, term by term
 * (pkg/controller/sidecarset/sidecarset_strategy.go, pkg/util/updatesort/scatter_sort.go).
 * A term whose value is "*" or missing (key-only scatter, docs/adr/0003-stable-upgrade-order.md)
 * expands to one term per value of
 * the key, in order of first appearance over all matched pods taken in namespace/name order, so
 * the expansion does not depend on the input order either.
 */
import type { Labels } from '../selector.js';
import type { UpdateScatterTerm } from '../sidecarset-types.js';
import { identity } from './radix.js';

/** A pod as the scatter reads it. */
export interface Labelled {
  labels: Labels;
  /** Its position among the matched pods. */
  index: number;
}

interface ScatterTerm {
  key: string;
  value: string;
}

function label(labels: Labels, key: string): string | undefined {
  return Object.hasOwn(labels, key) ? labels[key] : undefined;
}

/**
 * The candidates (in the order so far) scattered term after term, as scatterPodsByRule does.
 * `matched` is every matched pod: the terms' totals count them, and a key-only term expands to
 * their values in order of first appearance by `byName` (namespace/name).
 */
export function scatterCandidates<T extends Labelled>(
  terms: readonly UpdateScatterTerm[],
  candidates: readonly T[],
  matched: readonly T[],
  byName: (a: T, b: T) => number,
): T[] {
  const earlier = (a: number, b: number): number => byName(matched[a] as T, matched[b] as T);
  const byKey = keyValues([...new Set(terms.map((t) => t.key))], matched, earlier);
  const order = scatterCoded(byKey, terms, candidates, matched.length);
  const scattered = new Array<T>(order.length);
  for (let k = 0; k < order.length; k++) scattered[k] = candidates[order[k] as number] as T;
  return scattered;
}

/** parseUpdateScatterTerms, plus key-only terms; repeated key:value pairs are dropped. */
export function expandScatterTerms(
  terms: readonly UpdateScatterTerm[],
  valuesOf: (key: string) => readonly string[],
): ScatterTerm[] {
  const out: ScatterTerm[] = [];
  const seen = new Map<string, Set<string>>();
  const add = (key: string, value: string): void => {
    let values = seen.get(key);
    if (values === undefined) {
      values = new Set();
      seen.set(key, values);
    }
    if (values.has(value)) return;
    values.add(value);
    out.push({ key, value });
  };
  for (const term of terms) {
    if (term.value !== undefined && term.value !== '*') {
      add(term.key, term.value);
      continue;
    }
    for (const value of valuesOf(term.key)) add(term.key, value);
  }
  return out;
}

/**
 * One scatter key over all matched pods, its label values as small integers: the term passes then
 * read a typed array instead of chasing the label objects of pods spread over the heap.
 */
interface KeyValues {
  /** value → code; the pods' values first, in order of first appearance. */
  dictionary: Map<string, number>;
  /** Each pod's code, −1 when it lacks the label. */
  codes: Int32Array;
  /** The pods' distinct values, in order of first appearance by `earlier` (key-only terms). */
  values: () => string[];
  /** code → how many pods carry it. */
  totals: number[];
  /** How many pods carry the key at all. */
  carrying: number;
}

/** KeyValues of each key over the pods, their labels read once per pod for all the keys. */
function keyValues(
  keys: readonly string[],
  pods: readonly Labelled[],
  earlier: (a: number, b: number) => number,
): Map<string, KeyValues> {
  const coded = keys.map(() => ({
    dictionary: new Map<string, number>(),
    codes: new Int32Array(pods.length),
    totals: [] as number[],
    carrying: 0,
  }));
  for (let i = 0; i < pods.length; i++) {
    const labels = (pods[i] as Labelled).labels;
    for (let k = 0; k < keys.length; k++) {
      const kv = coded[k] as (typeof coded)[number];
      const value = label(labels, keys[k] as string);
      if (value === undefined) {
        kv.codes[i] = -1;
        continue;
      }
      const code = codeOf(kv.dictionary, value);
      kv.codes[i] = code;
      kv.totals[code] = (kv.totals[code] ?? 0) + 1;
      kv.carrying++;
    }
  }
  return new Map(
    keys.map((key, k) => {
      const kv = coded[k] as (typeof coded)[number];
      const values = (): string[] => valuesInOrder(kv.dictionary, kv.codes, earlier);
      return [key, { ...kv, values }];
    }),
  );
}

/**
 * The distinct values of a key in order of first appearance in the order `earlier` gives: each
 * value's first pod is found in one pass, without ordering all the pods.
 */
function valuesInOrder(
  dictionary: ReadonlyMap<string, number>,
  codes: Int32Array,
  earlier: (a: number, b: number) => number,
): string[] {
  const byCode = [...dictionary.keys()];
  const first = new Int32Array(byCode.length).fill(-1);
  for (let i = 0; i < codes.length; i++) {
    const code = codes[i] as number;
    if (code < 0) continue;
    const f = first[code] as number;
    if (f === -1 || earlier(i, f) < 0) first[code] = i;
  }
  const carried: number[] = [];
  for (let code = 0; code < byCode.length; code++)
    if ((first[code] as number) >= 0) carried.push(code);
  carried.sort((a, b) => earlier(first[a] as number, first[b] as number));
  return carried.map((code) => byCode[code] as string);
}

function codeOf(dictionary: Map<string, number>, value: string): number {
  let code = dictionary.get(value);
  if (code === undefined) {
    code = dictionary.size;
    dictionary.set(value, code);
  }
  return code;
}

interface CodedTerm {
  /** The candidates' codes for the term's key. */
  codes: Int32Array;
  code: number;
  /** A term with the value "" also matches pods without the label. */
  matchesMissing: boolean;
  /** How many of all matched pods the term matches. */
  totalMatched: number;
}

/** The candidates' new order, as indexes into `candidates`. */
function scatterCoded(
  byKey: ReadonlyMap<string, KeyValues>,
  scatter: readonly UpdateScatterTerm[],
  candidates: readonly Labelled[],
  allCount: number,
): Int32Array {
  const count = candidates.length;
  const valuesOfKey = (key: string): KeyValues => byKey.get(key) as KeyValues;
  const terms = expandScatterTerms(scatter, (key) => valuesOfKey(key).values());
  if (terms.length === 0 || count <= 1) return identity(count);
  const codesByKey = new Map<string, Int32Array>();
  const codedTerms = terms.map((t): CodedTerm => {
    const kv = valuesOfKey(t.key);
    let codes = codesByKey.get(t.key);
    if (codes === undefined) {
      codes = new Int32Array(count);
      for (let i = 0; i < count; i++) {
        codes[i] = kv.codes[(candidates[i] as Labelled).index] as number;
      }
      codesByKey.set(t.key, codes);
    }
    const code = codeOf(kv.dictionary, t.value);
    const matchesMissing = t.value === '';
    let totalMatched = kv.totals[code] ?? 0;
    if (matchesMissing) totalMatched += allCount - kv.carrying;
    return { codes, code, matchesMissing, totalMatched };
  });
  const passes = new ScatterPasses(count, allCount);
  for (const term of orderTerms(codedTerms)) passes.scatterBy(term);
  return passes.result();
}

/** getScatterTerms: one term is used as is; several are kept if a candidate has the label, by count. */
function orderTerms(terms: readonly CodedTerm[]): CodedTerm[] {
  if (terms.length === 1) return [...terms];
  // The terms of one key share its codes: count every value of the key in one pass.
  const histograms = new Map<Int32Array, Int32Array>();
  const countOf = (term: CodedTerm): number => {
    let counts = histograms.get(term.codes);
    if (counts === undefined) {
      counts = histogram(term.codes);
      histograms.set(term.codes, counts);
    }
    return counts[term.code] ?? 0;
  };
  const counted = terms.map((term) => ({ term, count: countOf(term) })).filter((t) => t.count > 0);
  // Array.prototype.sort is stable, as sort.SliceStable is.
  counted.sort((a, b) => b.count - a.count);
  return counted.map((t) => t.term);
}

/** How many times each code (≥ 0) occurs. */
function histogram(codes: Int32Array): Int32Array {
  let max = -1;
  for (const code of codes) if (code > max) max = code;
  const counts = new Int32Array(max + 1);
  for (const code of codes) if (code >= 0) counts[code] = (counts[code] as number) + 1;
  return counts;
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

/**
 * scatterPodsByRule, term after term, over candidate indexes held in typed arrays that every pass
 * reuses (a pass writes the new order into `next`, then the two swap).
 */
class ScatterPasses {
  private order: Int32Array;
  /** How much of `order` is in use (only inputs that break the totals' invariants shrink it). */
  private size: number;
  private next: Int32Array;
  private readonly matched: Int32Array;
  private readonly unmatched: Int32Array;
  private readonly allCount: number;

  constructor(size: number, allCount: number) {
    this.order = identity(size);
    this.size = size;
    this.next = new Int32Array(size);
    this.matched = new Int32Array(size);
    this.unmatched = new Int32Array(size);
    this.allCount = allCount;
  }

  result(): Int32Array {
    return this.order.slice(0, this.size);
  }

  scatterBy(term: CodedTerm): void {
    const { codes, code: wanted, matchesMissing } = term;
    const { order, matched, unmatched, next } = this;
    let m = 0;
    let u = 0;
    for (let k = 0; k < this.size; k++) {
      const i = order[k] as number;
      const code = codes[i] as number;
      if (code === wanted || (matchesMissing && code === -1)) matched[m++] = i;
      else unmatched[u++] = i;
    }
    if (m <= 1 || u <= 1) return;
    // The last matching pod is set aside and goes to the very end.
    const last = matched[--m] as number;
    const g = groupByDensity(term.totalMatched - 1, this.allCount - term.totalMatched, m, u);
    let out = 0;
    // As unmatched.slice(0, remainder), then the groups from there (remainder may be NaN).
    for (let k = 0; k < g.remainder && k < u; k++) next[out++] = unmatched[k] as number;
    let mi = 0;
    let ui = g.remainder;
    for (let n = 0; n < g.groups; n++) {
      const mEnd = Math.min(mi + g.matchedSize, m);
      for (; mi < mEnd; mi++) next[out++] = matched[mi] as number;
      const uEnd = Math.min(ui + g.unmatchedSize, u);
      for (; ui < uEnd; ui++) next[out++] = unmatched[ui] as number;
    }
    for (; mi < m; mi++) next[out++] = matched[mi] as number;
    for (; ui < u; ui++) next[out++] = unmatched[ui] as number;
    next[out++] = last;
    this.size = out;
    this.next = order;
    this.order = next;
  }
}
