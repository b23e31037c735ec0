/**
 * sortCandidates reads canonical times digit by digit; the order must be the one the canonical
 * strings (timeOf, compared as strings) give, for any mix of valid and invalid timestamps.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';

import type { Pod } from '../../../src/core/k8s-types.js';
import { compactTime, sortCandidates } from '../../../src/core/upgrade/order.js';
import { asCandidates, sortCandidatesByComparator } from '../../support/candidate-order.js';

const digitArb = fc.integer({ min: 0, max: 9 }).map(String);
const digitsArb = (n: number): fc.Arbitrary<string> =>
  fc.array(digitArb, { minLength: n, maxLength: n }).map((d) => d.join(''));

/** "YYYY-MM-DDThh:mm:ssZ" with any digits (few distinct values, so times tie). */
const canonicalArb = fc.oneof(
  fc
    .tuple(fc.constantFrom('2026', '2025', '0001', '0000', '9999'), digitsArb(1), digitsArb(1))
    .map(([y, d, s]) => `${y}-01-0${d}T00:00:0${s}Z`),
  fc
    .tuple(digitsArb(4), digitsArb(2), digitsArb(2), digitsArb(2), digitsArb(2), digitsArb(2))
    .map(([y, mo, d, h, mi, s]) => `${y}-${mo}-${d}T${h}:${mi}:${s}Z`),
);

const timeArb = fc.oneof(
  canonicalArb,
  canonicalArb,
  fc.constantFrom(
    undefined,
    null,
    '',
    '0001-01-01T00:00:00Z',
    '2026-01-01T00:00:00.5Z',
    '2026-01-01T01:00:00+01:00',
    '2026-01-01 00:00:00Z',
    '2026-01-01Tab:cd:efZ',
    '+010000-01-01T00:00:00Z',
    '2026-01-01T00:00:00z',
    'not a time',
  ),
  // A canonical time with one character replaced by anything.
  fc
    .tuple(canonicalArb, fc.integer({ min: 0, max: 19 }), fc.string({ minLength: 1, maxLength: 1 }))
    .map(([t, at, c]) => t.slice(0, at) + c + t.slice(at + 1)),
  fc.string({ maxLength: 22 }),
);

function pod(i: number, created: string | null | undefined, ready: string | null | undefined): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      namespace: 'ns',
      name: `p-${String(i).padStart(4, '0')}`,
      ...(created === undefined ? {} : { creationTimestamp: created }),
    },
    spec: { nodeName: 'node', containers: [] },
    status: {
      phase: 'Running',
      conditions:
        ready === undefined ? [] : [{ type: 'Ready', status: 'True', lastTransitionTime: ready }],
    },
  };
}

describe('candidate time keys', () => {
  it('order as the canonical time strings do, valid and invalid timestamps alike', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(timeArb, fc.option(timeArb, { nil: undefined })), { maxLength: 40 }),
        (times) => {
          const candidates = asCandidates(
            times.map(([created, ready], i) => pod(i, created, ready)),
          );
          assert.deepEqual(
            sortCandidates(candidates, undefined),
            sortCandidatesByComparator(candidates, undefined),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('compactTime reads only the canonical form', () => {
    assert.ok(compactTime('2026-07-02T10:00:59Z') > compactTime('2026-07-02T10:00:58Z'));
    assert.equal(compactTime('2026-07-02T10:00:59.0Z'), -1);
    assert.equal(compactTime('2026-07-02t10:00:59Z'), -1);
    assert.equal(compactTime('2026-07-02T10:0a:59Z'), -1);
  });

  it('compactTime orders valid times as their strings and refuses the rest', () => {
    const validArb = fc
      .tuple(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 31 }),
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 59 }),
        fc.integer({ min: 0, max: 60 }),
      )
      .map(
        ([y, ...rest]) =>
          `${String(y).padStart(4, '0')}-${rest.map((n) => String(n).padStart(2, '0')).join('-')}`,
      )
      .map((t) => `${t.slice(0, 10)}T${t.slice(11).replaceAll('-', ':')}Z`);
    fc.assert(
      fc.property(validArb, validArb, (a, b) => {
        const sign = Math.sign(compactTime(a) - compactTime(b));
        assert.equal(sign, a < b ? -1 : a > b ? 1 : 0, `${a} ${b}`);
      }),
      { numRuns: 2000 },
    );
    assert.equal(compactTime('2026-07-02T10:00:59Z') > 0, true);
    for (const t of [
      '2026-13-02T10:00:59Z',
      '2026-00-02T10:00:59Z',
      '2026-07-32T10:00:59Z',
      '2026-07-00T10:00:59Z',
      '2026-07-02T24:00:59Z',
      '2026-07-02T10:60:59Z',
      '2026-07-02T10:00:61Z',
      '2026-07-02T10:00:5aZ',
      '2026/07-02T10:00:59Z',
      '2026-07-02T10:00:59',
    ]) {
      assert.equal(compactTime(t), -1, t);
    }
  });
});
