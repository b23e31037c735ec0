/**
 * The fast ways of reading a pod's hash records give what parsing gives: the canonical-value
 * recognizer never says yes where JSON.parse would say otherwise, and the self-disabling memo
 * answers as the plain reader does while it remembers and after it stops.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';

import { formatPodSidecarSetHashes } from '../../../src/core/pod-hash-annotation.js';
import type { PodSidecarSetHashes } from '../../../src/core/pod-hash-annotation.js';
import { canonicalRecordTest } from '../../../src/core/upgrade/canonical-record.js';
import { hashRecordMatcher, recordsHash } from '../../../src/core/upgrade/pod-records.js';
import { ValueMemo } from '../../../src/core/upgrade/value-memo.js';

const NAME = 'log-agent';
const HASH = 'c4k2v9x7w';

/** Strings with the characters that matter to JSON and to regular expressions. */
const text = fc.string({
  unit: fc.constantFrom('a', 'b', '-', '.', '"', '\\', '\n', '\u0001', 'é', '*', '[', '}', ':'),
  maxLength: 6,
});

const entry = fc.record({
  updateTimestamp: fc.option(fc.oneof(text, fc.constant('2026-01-01T00:00:00Z'))),
  hash: fc.oneof(fc.constant(HASH), text),
  sidecarSetName: fc.oneof(fc.constant(NAME), text),
  sidecarList: fc.option(fc.array(fc.oneof(text, fc.constant('agent')), { maxLength: 3 })),
  controllerRevision: fc.option(fc.oneof(text, fc.constant('log-agent-5d4f')), { nil: undefined }),
});

/** Go's encoding of a map of entries, then perhaps bent out of shape. */
const value = fc
  .tuple(
    fc.dictionary(fc.oneof(fc.constant(NAME), text), entry, { maxKeys: 3 }),
    fc.nat(),
    fc.constantFrom('none', 'space', 'drop', 'duplicate', 'escape'),
  )
  .map(([map, at, bend]) => {
    const formatted = formatPodSidecarSetHashes(map as PodSidecarSetHashes);
    const i = formatted.length === 0 ? 0 : at % formatted.length;
    switch (bend) {
      case 'space':
        return formatted.slice(0, i) + ' ' + formatted.slice(i);
      case 'drop':
        return formatted.slice(0, i) + formatted.slice(i + 1);
      case 'duplicate':
        return formatted.slice(0, i) + formatted.slice(i, i + 1) + formatted.slice(i);
      case 'escape':
        return formatted.replace('"h', '"\\u0068');
      case 'none':
        return formatted;
    }
  });

describe('canonicalRecordTest', () => {
  const test = canonicalRecordTest(NAME, HASH);

  it('says yes only where parsing finds the hash', () => {
    assert.ok(test);
    fc.assert(
      fc.property(value, (v) => {
        if (test(v)) assert.equal(recordsHash(v, NAME, HASH), true, v);
      }),
      { numRuns: 3000 },
    );
  });

  it('recognizes what Go writes for one entry, with and without a revision or times', () => {
    assert.ok(test);
    for (const spec of [
      { updateTimestamp: '2026-01-01T00:00:00Z', sidecarList: ['agent'] },
      { updateTimestamp: null, sidecarList: null },
      { updateTimestamp: '2026-01-01T00:00:00Z', sidecarList: [], controllerRevision: 'r-1' },
      { updateTimestamp: 'é', sidecarList: ['a', 'b', 'c'] },
    ]) {
      const v = formatPodSidecarSetHashes({
        [NAME]: { hash: HASH, sidecarSetName: NAME, ...spec },
      });
      assert.equal(test(v), true, v);
    }
  });

  it('leaves everything else to the parser', () => {
    assert.ok(test);
    const one = (fields: string): string => `{"${NAME}":{${fields}}}`;
    const base = `"updateTimestamp":null,"hash":"${HASH}","sidecarSetName":"${NAME}","sidecarList":null`;
    for (const v of [
      one(base.replace(HASH, 'other')),
      one(base.replace(`"sidecarSetName":"${NAME}"`, '"sidecarSetName":"x"')),
      one(base) + ' ',
      `{"a":{},${one(base).slice(1)}`,
      one(base.replace('null', '"a\\"b"')),
      one(base.replace('null', '"a\nb"')),
      one(`${base},"controllerRevision":1`),
      `{"${NAME}":"${HASH}"}`,
    ]) {
      assert.equal(test(v), false, v);
    }
  });

  it('is not offered for a name or hash that JSON would escape', () => {
    assert.equal(canonicalRecordTest('a"b', HASH), undefined);
    assert.equal(canonicalRecordTest(NAME, 'h\\'), undefined);
    // Regular-expression characters are taken literally.
    const dotted = canonicalRecordTest('a.b', 'h*');
    assert.ok(dotted);
    const v = (name: string, hash: string): string =>
      formatPodSidecarSetHashes({
        [name]: { updateTimestamp: null, hash, sidecarSetName: name, sidecarList: null },
      });
    assert.equal(dotted(v('a.b', 'h*')), true);
    assert.equal(dotted(v('axb', 'hhh')), false);
  });
});

describe('ValueMemo', () => {
  it('keeps remembering while values repeat', () => {
    const memo = new ValueMemo<number>();
    for (let i = 0; i < 4 * ValueMemo.TRIAL; i++) {
      const key = `v${i % 10}`;
      const known = memo.get(key);
      if (known === undefined) memo.set(key, i % 10);
      else assert.equal(known, i % 10);
    }
    assert.equal(memo.remembering, true);
  });

  it('stops once most lookups miss, and then remembers nothing', () => {
    const memo = new ValueMemo<number>();
    for (let i = 0; i < ValueMemo.TRIAL; i++) {
      assert.equal(memo.get(`v${i}`), undefined);
      memo.set(`v${i}`, i);
    }
    assert.equal(memo.remembering, false);
    memo.set('v0', 0);
    assert.equal(memo.get('v0'), undefined);
  });

  it('a matcher answers as recordsHash does before and after its memo stops', () => {
    const matches = hashRecordMatcher(NAME, HASH);
    const values = Array.from({ length: 3 * ValueMemo.TRIAL }, (_, i) => {
      const hash = i % 3 === 0 ? HASH : `${HASH}-${i % 7}`;
      return i % 5 === 0
        ? `{"${NAME}":"${hash}"}`
        : formatPodSidecarSetHashes({
            [NAME]: { updateTimestamp: `t${i}`, hash, sidecarSetName: NAME, sidecarList: null },
          });
    });
    for (const v of values) assert.equal(matches(v), recordsHash(v, NAME, HASH), v);
  });
});
