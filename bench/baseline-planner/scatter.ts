/**
 * scatterStrategy (reference upgrade §4.5 c): OpenKruise's density interleaving, term by term.
 * A term whose value is "*" or missing (key-only scatter, SPEC.md) expands to one term per value of
 * the key, in order of first appearance over all matched pods taken in namespace/name order, so
 * the expansion does not depend on the input order either.
 */
import type { Labels } from '../../src/core/selector.js';
import type { UpdateScatterTerm } from '../../src/core/sidecarset-types.js';
import { identity } from './radix.js';

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
  return expandTerms(terms, (key) => keyValues([key], podsInNameOrder).get(key)?.values() ?? []);
}

function expandTerms(
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
  /** The pods' distinct values, in order of first appearance (the key-only expansion). */
  values: () => string[];
  /** code → how many pods carry it. */
  totals: number[];
  /** How many pods carry the key at all. */
  carrying: number;
}

/** KeyValues for each key over the pods, in their order. */
function keyValues(keys: readonly string[], pods: readonly Labelled[]): Map<string, KeyValues> {
  const codes = new LabelCodes(keys, pods.length);
  for (const pod of pods) codes.add(pod.labels);
  return codes.keyValues();
}

interface KeyCoding {
  dictionary: Map<string, number>;
  codes: Int32Array;
  totals: number[];
  carrying: number;
}

/**
 * The scatter keys' label values as codes, for pods added one at a time: a pod's labels are
 * fetched once for all the keys (over a large fleet, reaching each pod's labels costs more than
 * the lookups), and the planner adds each pod while it reads the pod for everything else.
 */
export class LabelCodes {
  private size = 0;
  private readonly keys: readonly string[];
  private readonly coded: KeyCoding[];

  /** `capacity`: how many pods at most will be added. */
  constructor(keys: readonly string[], capacity: number) {
    this.keys = keys;
    this.coded = keys.map(() => ({
      dictionary: new Map<string, number>(),
      codes: new Int32Array(capacity),
      totals: [] as number[],
      carrying: 0,
    }));
  }

  add(labels: Labels): void {
    const i = this.size++;
    for (let k = 0; k < this.keys.length; k++) {
      const kv = this.coded[k] as KeyCoding;
      const value = label(labels, this.keys[k] as string);
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

  /** How many pods were added. */
  get count(): number {
    return this.size;
  }

  /**
   * KeyValues per key. Its `values` are in order of first appearance in the order `earlier` gives
   * the pods (indexes in the order they were added; by default that order itself), worked out
   * only when asked for (key-only terms).
   */
  keyValues(earlier?: (a: number, b: number) => number): Map<string, KeyValues> {
    return new Map(
      this.keys.map((key, k) => {
        const kv = this.coded[k] as KeyCoding;
        const codes = kv.codes.subarray(0, this.size);
        return [key, { ...kv, codes, values: () => valuesInOrder(kv, codes, earlier) }];
      }),
    );
  }
}

/**
 * The distinct values of a key in order of first appearance in the order `earlier` gives: each
 * value's first pod is found in one pass, without ordering all the pods.
 */
function valuesInOrder(
  kv: KeyCoding,
  codes: Int32Array,
  earlier: ((a: number, b: number) => number) | undefined,
): string[] {
  const byCode = [...kv.dictionary.keys()];
  if (earlier === undefined) return byCode;
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

/**
 * Each candidate's code for the key, −1 when it lacks the label: read from the pods' codes when
 * the caller says where each candidate is among them.
 */
function candidateCodes(
  key: string,
  candidates: readonly Labelled[],
  kv: KeyValues,
  positions: Int32Array | undefined,
): Int32Array {
  if (positions !== undefined) return positions.map((p) => kv.codes[p] as number);
  const codes = new Int32Array(candidates.length);
  candidates.forEach((c, i) => {
    const value = label(c.labels, key);
    codes[i] = value === undefined ? -1 : codeOf(kv.dictionary, value);
  });
  return codes;
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

/**
 * The candidates' new order, as indexes into `candidates` (which are in the order so far).
 * `all` is every matched pod in namespace/name order: totals and key-only expansion use it.
 * `positions`, when given, holds the index in `all` of each candidate (the same labels).
 */
export function scatterOrder(
  candidates: readonly Labelled[],
  all: readonly Labelled[],
  scatter: readonly UpdateScatterTerm[],
  positions?: Int32Array,
): number[] {
  const byKey = keyValues(scatterKeys(scatter), all);
  const codesOf = (key: string, kv: KeyValues): Int32Array =>
    candidateCodes(key, candidates, kv, positions);
  return Array.from(
    scatterCoded(byKey, scatter, { count: candidates.length, allCount: all.length }, codesOf),
  );
}

export function scatterKeys(scatter: readonly UpdateScatterTerm[]): string[] {
  return [...new Set(scatter.map((t) => t.key))];
}

/**
 * scatterOrder over pods already coded: `codes` holds every matched pod (keys from scatterKeys),
 * `byName` orders them (as indexes) by namespace/name, `positions` holds each candidate's index
 * among them (candidates in the order so far). The new order, as indexes into `positions`.
 */
export function scatterCodedPods(
  codes: LabelCodes,
  byName: (a: number, b: number) => number,
  scatter: readonly UpdateScatterTerm[],
  positions: Int32Array,
): Int32Array {
  const byKey = codes.keyValues(byName);
  const codesOf = (_key: string, kv: KeyValues): Int32Array =>
    positions.map((p) => kv.codes[p] as number);
  return scatterCoded(byKey, scatter, { count: positions.length, allCount: codes.count }, codesOf);
}

function scatterCoded(
  byKey: ReadonlyMap<string, KeyValues>,
  scatter: readonly UpdateScatterTerm[],
  { count, allCount }: { count: number; allCount: number },
  codesOf: (key: string, kv: KeyValues) => Int32Array,
): Int32Array {
  const valuesOfKey = (key: string): KeyValues => byKey.get(key) as KeyValues;
  const terms = expandTerms(scatter, (key) => valuesOfKey(key).values());
  if (terms.length === 0 || count <= 1) return identity(count);
  const codesByKey = new Map<string, Int32Array>();
  const codedTerms = terms.map((t): CodedTerm => {
    const kv = valuesOfKey(t.key);
    let codes = codesByKey.get(t.key);
    if (codes === undefined) {
      codes = codesOf(t.key, kv);
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
