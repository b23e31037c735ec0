/** The radix sort of candidate indexes gives what its plain twin, a comparator sort, gives. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';

import { sortIndexesByKeys } from '../../../src/core/upgrade/radix.js';
import { comparatorSort } from '../../support/radix-reference.js';

/** Few distinct values (many ties), small and huge integers, fractions, ±0 and infinities. */
const valueArb = fc.oneof(
  fc.integer({ min: -3, max: 3 }),
  fc.integer({ min: -1_000, max: 1_000 }),
  fc.constantFrom(0, -0, 0.5, -2.25, 1e14, 20260101000000, -1e300, Infinity, -Infinity),
  // Integer ranges sorted digit by digit (two counting passes), at and past the widest.
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
  fc.constantFrom(65_535, 65_536, 131_071, 131_072, 2 ** 31 - 1, 2 ** 31),
  fc.double({ noNaN: true }),
);

/** Names that tie everywhere: the index decides. */
function noNames(n: number): string[] {
  return new Array<string>(n).fill('');
}

function columns(rows: readonly (readonly number[])[], width: number): Float64Array[] {
  return Array.from({ length: width }, (_, k) => Float64Array.from(rows, (row) => row[k] ?? 0));
}

describe('sortIndexesByKeys', () => {
  it('orders as comparing the keys in turn, then the index (ties included)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4 }).chain((width) =>
          fc.tuple(
            fc.constant(width),
            fc.array(fc.array(valueArb, { minLength: width, maxLength: width }), {
              maxLength: 60,
            }),
          ),
        ),
        ([width, rows]) => {
          const keys = columns(rows, width);
          const actual = Array.from(sortIndexesByKeys(keys, rows.length, noNames(rows.length)));
          assert.deepEqual(
            actual,
            Array.from(comparatorSort(keys, rows.length, noNames(rows.length))),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('breaks the ties left by every key by name, then the index', () => {
    const name = fc.constantFrom('', 'a', 'b', 'ab', 'B', '\u00e9', '\ud83d', 'a-1', 'a-10');
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), valueArb, name), { maxLength: 60 }),
        (rows) => {
          const keys = columns(
            rows.map(([a, b]) => [a, b]),
            2,
          );
          const names = rows.map(([, , n]) => n);
          assert.deepEqual(
            Array.from(sortIndexesByKeys(keys, rows.length, names)),
            Array.from(comparatorSort(keys, rows.length, names)),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('orders long runs of ties by name as short ones', () => {
    for (const n of [5, 33, 200]) {
      const keys = [Float64Array.from({ length: n }, (_, i) => i % 2)];
      const names = Array.from({ length: n }, (_, i) => `pod-${(i * 7_919) % 97}`);
      assert.deepEqual(
        Array.from(sortIndexesByKeys(keys, n, names)),
        Array.from(comparatorSort(keys, n, names)),
      );
    }
    const names = ['b', 'a', 'c', 'a'];
    assert.deepEqual(Array.from(sortIndexesByKeys([new Float64Array(4)], 4, names)), [1, 3, 0, 2]);
  });

  it('sorts by the first n values of longer key arrays', () => {
    const keys = [Float64Array.from([3, 1, 2, 0, 0]), Float64Array.from([0, 0, 0, 9, 9])];
    assert.deepEqual(Array.from(sortIndexesByKeys(keys, 3, noNames(3))), [1, 2, 0]);
  });

  it('sorts integers spread over a range too wide for one counting pass', () => {
    const n = 3_000;
    for (const width of [2 ** 17, 2 ** 24, 2 ** 31 - 1]) {
      const spread = Float64Array.from({ length: n }, (_, i) => (i * 104_729) % width);
      spread[0] = 0;
      spread[1] = width - 1;
      const ties = Float64Array.from({ length: n }, (_, i) => i % 3);
      for (const keys of [[spread], [ties, spread]]) {
        assert.deepEqual(
          Array.from(sortIndexesByKeys(keys, n, noNames(n))),
          Array.from(comparatorSort(keys, n, noNames(n))),
        );
      }
    }
  });

  it('handles many distinct, widely spread integers and fractions', () => {
    const n = 2_000;
    const spread = Float64Array.from({ length: n }, (_, i) => ((i * 7_919) % 1_009) * 1e9);
    const fractions = Float64Array.from({ length: n }, (_, i) => ((i * 31) % 97) / 7);
    for (const keys of [[spread], [fractions, spread], [spread, fractions]]) {
      assert.deepEqual(
        Array.from(sortIndexesByKeys(keys, n, noNames(n))),
        Array.from(comparatorSort(keys, n, noNames(n))),
      );
    }
  });
});
