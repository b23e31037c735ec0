/**
 * A stable sort of indexes by several numeric keys, without a comparator: one counting-sort pass
 * per key, least significant first (LSD radix sort over each key's ranks). Over a large fleet this
 * is linear in the pods plus the keys' distinct values, where a comparator sort calls back into
 * JavaScript n log n times and reads scattered keys each time.
 */
import { compareStrings } from '../json.js';

/** Each value's rank among the key's distinct values (equal values share one), and how many. */
interface Ranks {
  ranks: Int32Array;
  count: number;
}

/**
 * The indexes 0..n−1 in the order that comparing `keys[0]`, then `keys[1]`, ... (smaller first,
 * as `a − b` compares), then `names` (strings, by UTF-16 code units, as compareStrings orders),
 * then the index itself gives. Only the runs that tie in every key compare their names (over a
 * large fleet they are short). The keys hold no NaN, which has no order (sortCandidates' keys are
 * integers). Its plain twin, a comparator sort, is test/support/radix-reference.ts.
 */
export function sortIndexesByKeys(
  keys: readonly Float64Array[],
  n: number,
  names: readonly string[],
): Int32Array {
  let order = identity(n);
  let next = new Int32Array(n);
  // The keys that tell indexes apart: only they can end a run of ties.
  const used: Float64Array[] = [];
  for (let k = keys.length - 1; k >= 0; k--) {
    const ranked = rankValues(keys[k] as Float64Array, n);
    if (ranked.count <= 1) continue;
    used.push(keys[k] as Float64Array);
    if (ranked.count <= DIGIT * 2) {
      countingPass(order, next, ranked);
      [order, next] = [next, order];
      continue;
    }
    // Wide ranks: two passes, low digit then high digit (LSD within the key too).
    const high = new Int32Array(n);
    const low = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const r = ranked.ranks[i] as number;
      low[i] = r % DIGIT;
      high[i] = (r - (low[i] as number)) / DIGIT;
    }
    countingPass(order, next, { ranks: low, count: DIGIT });
    countingPass(next, order, { ranks: high, count: Math.ceil(ranked.count / DIGIT) });
  }
  settleTies(order, used, names);
  return order;
}

/** Each run of `order` equal in every key (in index order so far) sorted by name, then index. */
function settleTies(
  order: Int32Array,
  keys: readonly Float64Array[],
  names: readonly string[],
): void {
  let start = 0;
  for (let k = 1; k <= order.length; k++) {
    if (k < order.length && sameKeys(keys, order[start] as number, order[k] as number)) continue;
    if (k - start > 1) sortRunByName(order, start, k, names);
    start = k;
  }
}

/** The longest run sorted in place by insertion, comparing strings inline (no callback). */
const SHORT_RUN = 64;

function sortRunByName(
  order: Int32Array,
  from: number,
  to: number,
  names: readonly string[],
): void {
  if (to - from > SHORT_RUN) {
    order.subarray(from, to).sort((a, b) => byName(names, a, b));
    return;
  }
  for (let k = from + 1; k < to; k++) {
    const x = order[k] as number;
    const name = names[x] as string;
    let j = k - 1;
    // Strictly greater names move up; equal names keep their (index) order.
    while (j >= from && (names[order[j] as number] as string) > name) {
      order[j + 1] = order[j] as number;
      j--;
    }
    order[j + 1] = x;
  }
}

function byName(names: readonly string[], a: number, b: number): number {
  return compareStrings(names[a] as string, names[b] as string) || a - b;
}

function sameKeys(keys: readonly Float64Array[], a: number, b: number): boolean {
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k] as Float64Array;
    if (key[a] !== key[b]) return false;
  }
  return true;
}

/** 0, 1, ..., n − 1. */
export function identity(n: number): Int32Array<ArrayBuffer> {
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  return order;
}

/** Stable: indexes with the same rank keep their order from `order`. */
function countingPass(order: Int32Array, into: Int32Array, { ranks, count }: Ranks): void {
  const starts = new Int32Array(count + 1);
  for (let i = 0; i < order.length; i++) {
    const at = (ranks[i] as number) + 1;
    starts[at] = (starts[at] as number) + 1;
  }
  for (let r = 1; r <= count; r++) starts[r] = (starts[r] as number) + (starts[r - 1] as number);
  for (let k = 0; k < order.length; k++) {
    const i = order[k] as number;
    const r = ranks[i] as number;
    into[starts[r] as number] = i;
    starts[r] = (starts[r] as number) + 1;
  }
}

/** The base of a wide key's two digits. */
const DIGIT = 1 << 16;
/** The widest range ranked by offset (the ranks are Int32). */
const WIDEST = 2 ** 31 - 1;

/**
 * Ranks of the first n values. Integers spanning at most WIDEST are
 * ranked by their offset from the smallest (gaps are harmless to a counting pass, which takes one
 * pass or two by digit); anything else by its position among the sorted distinct values.
 */
function rankValues(values: Float64Array, n: number): Ranks {
  let min = Infinity;
  let max = -Infinity;
  let integers = true;
  for (let i = 0; i < n; i++) {
    const v = values[i] as number;
    if (v < min) min = v;
    if (v > max) max = v;
    if (integers && !Number.isInteger(v)) integers = false;
  }
  if (n === 0 || min === max) return { ranks: new Int32Array(n), count: 1 };
  if (integers && max - min <= WIDEST) return offsetRanks(values, n, min, max);
  return sortedRanks(values, n);
}

function offsetRanks(values: Float64Array, n: number, min: number, max: number): Ranks {
  const ranks = new Int32Array(n);
  for (let i = 0; i < n; i++) ranks[i] = (values[i] as number) - min;
  return { ranks, count: max - min + 1 };
}

function sortedRanks(values: Float64Array, n: number): Ranks {
  const sorted = values.slice(0, n).sort();
  // Distinct values; −0 and 0 are one value (the comparator's 0 − −0 is a tie).
  let d = 0;
  for (let i = 0; i < n; i++) {
    const v = sorted[i] as number;
    if (d === 0 || v !== sorted[d - 1]) sorted[d++] = v;
  }
  const ranks = new Int32Array(n);
  for (let i = 0; i < n; i++) ranks[i] = lowerBound(sorted, d, values[i] as number);
  return { ranks, count: d };
}

/** The first position among the first d sorted values that is not below v. */
function lowerBound(sorted: Float64Array, d: number, v: number): number {
  let lo = 0;
  let hi = d - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
