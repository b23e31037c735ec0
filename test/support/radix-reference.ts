/** The plain twin of sortIndexesByKeys (src/core/upgrade/radix.ts): a comparator sort. */
import { compareStrings } from '../../src/core/json.js';

/** Array.prototype.sort (stable) with the keys compared in turn, then the names, then the index. */
export function comparatorSort(
  keys: readonly Float64Array[],
  n: number,
  names: readonly string[],
): Int32Array {
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => {
    for (const key of keys) {
      const d = (key[a] as number) - (key[b] as number);
      if (d) return d;
    }
    return compareStrings(names[a] as string, names[b] as string) || a - b;
  });
  return Int32Array.from(order);
}
