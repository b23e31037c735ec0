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
    for (const pod of podsInNameOrder) {
      const value = label(pod.labels, term.key);
      if (value !== undefined) add(term.key, value);
    }
  }
  return out;
}

/**
 * Each scatter key's label values as small integers, one typed array per key, so that the term
 * passes read contiguous memory instead of chasing label objects of pods spread over the heap.
 */
interface Coded {
  /** Per key: value → code. */
  dictionaries: Map<string, number>[];
  /** Per key: the code of each candidate, −1 when it lacks the label. */
  candidates: Int32Array[];
  /** Per key: code → how many of all matched pods carry it; and how many carry the key. */
  totals: Map<number, number>[];
  carryingKey: number[];
  allCount: number;
}

function codeOf(dictionary: Map<string, number>, value: string): number {
  let code = dictionary.get(value);
  if (code === undefined) {
    code = dictionary.size;
    dictionary.set(value, code);
  }
  return code;
}

function encode(
  keys: readonly string[],
  candidates: readonly Labelled[],
  all: readonly Labelled[],
): Coded {
  const dictionaries = keys.map(() => new Map<string, number>());
  const totals = keys.map(() => new Map<number, number>());
  const carryingKey = keys.map(() => 0);
  keys.forEach((key, k) => {
    const dictionary = dictionaries[k] as Map<string, number>;
    const total = totals[k] as Map<number, number>;
    for (const pod of all) {
      const value = label(pod.labels, key);
      if (value === undefined) continue;
      const code = codeOf(dictionary, value);
      total.set(code, (total.get(code) ?? 0) + 1);
      carryingKey[k] = (carryingKey[k] ?? 0) + 1;
    }
  });
  const coded = keys.map((key, k) => {
    const dictionary = dictionaries[k] as Map<string, number>;
    const codes = new Int32Array(candidates.length);
    candidates.forEach((c, i) => {
      const value = label(c.labels, key);
      codes[i] = value === undefined ? -1 : codeOf(dictionary, value);
    });
    return codes;
  });
  return { dictionaries, candidates: coded, totals, carryingKey, allCount: all.length };
}

interface CodedTerm {
  key: number;
  code: number;
  /** A term with the value "" also matches pods without the label. */
  matchesMissing: boolean;
}

/**
 * The candidates' new order, as indexes into `candidates` (which are in the order so far).
 * `all` is every matched pod in namespace/name order: totals and key-only expansion use it.
 */
export function scatterOrder(
  candidates: readonly Labelled[],
  all: readonly Labelled[],
  scatter: readonly UpdateScatterTerm[],
): number[] {
  let order = candidates.map((_, i) => i);
  const terms = expandScatterTerms(scatter, all);
  if (terms.length === 0 || order.length <= 1) return order;
  const keys = [...new Set(terms.map((t) => t.key))];
  const coded = encode(keys, candidates, all);
  const codedTerms = terms.map((t): CodedTerm => {
    const key = keys.indexOf(t.key);
    return {
      key,
      code: codeOf(coded.dictionaries[key] as Map<string, number>, t.value),
      matchesMissing: t.value === '',
    };
  });
  for (const term of orderTerms(codedTerms, coded)) {
    order = scatterByTerm(order, term, coded);
  }
  return order;
}

/** getScatterTerms: one term is used as is; several are kept if a candidate has the label, by count. */
function orderTerms(terms: readonly CodedTerm[], coded: Coded): CodedTerm[] {
  if (terms.length === 1) return [...terms];
  const counted = terms
    .map((term) => {
      const codes = coded.candidates[term.key] as Int32Array;
      let count = 0;
      for (const code of codes) if (code === term.code) count++;
      return { term, count };
    })
    .filter((t) => t.count > 0);
  // Array.prototype.sort is stable, as sort.SliceStable is.
  counted.sort((a, b) => b.count - a.count);
  return counted.map((t) => t.term);
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

/** scatterPodsByRule, over candidate indexes. */
function scatterByTerm(order: readonly number[], term: CodedTerm, coded: Coded): number[] {
  const codes = coded.candidates[term.key] as Int32Array;
  const matched: number[] = [];
  const unmatched: number[] = [];
  for (const i of order) {
    const code = codes[i] as number;
    if (code === term.code || (term.matchesMissing && code === -1)) matched.push(i);
    else unmatched.push(i);
  }
  if (matched.length <= 1 || unmatched.length <= 1) return [...order];
  const total = coded.totals[term.key] as Map<number, number>;
  let totalMatched = total.get(term.code) ?? 0;
  if (term.matchesMissing) totalMatched += coded.allCount - (coded.carryingKey[term.key] ?? 0);
  const totalUnmatched = coded.allCount - totalMatched;
  // The last matching pod is set aside and goes to the very end.
  const last = matched.pop() as number;
  const g = groupByDensity(totalMatched - 1, totalUnmatched, matched.length, unmatched.length);
  const out: number[] = unmatched.slice(0, g.remainder);
  let mi = 0;
  let ui = g.remainder;
  for (let n = 0; n < g.groups; n++) {
    const mEnd = Math.min(mi + g.matchedSize, matched.length);
    for (; mi < mEnd; mi++) out.push(matched[mi] as number);
    const uEnd = Math.min(ui + g.unmatchedSize, unmatched.length);
    for (; ui < uEnd; ui++) out.push(unmatched[ui] as number);
  }
  for (; mi < matched.length; mi++) out.push(matched[mi] as number);
  for (; ui < unmatched.length; ui++) out.push(unmatched[ui] as number);
  out.push(last);
  return out;
}
