import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';

import { base64Utf8, encodePatch } from '../../../src/core/admission/review.js';
import { cloneJson } from '../../../src/core/encoding/json.js';

describe('cloneJson', () => {
  it('gives what structuredClone gives for any JSON value, sharing nothing', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const copy = cloneJson(value);
        assert.deepEqual(copy, structuredClone(value));
        assert.equal(JSON.stringify(copy), JSON.stringify(value));
        assertNothingShared(value, copy);
      }),
    );
  });

  it('keeps key order and keys whose value is undefined', () => {
    const value = { b: 1, a: undefined, c: [{ z: null, y: 'x' }] };
    const copy = cloneJson(value);
    assert.deepEqual(Object.keys(copy), ['b', 'a', 'c']);
    assert.ok('a' in copy);
    assert.deepEqual(Object.keys(copy.c[0] ?? {}), ['z', 'y']);
  });

  it('returns primitives as they are', () => {
    for (const value of ['s', 0, -1.5, true, false, null, undefined]) {
      assert.equal(cloneJson(value), value);
    }
  });

  it('copies an object without a prototype into a plain object, as structuredClone does', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: [1] });
    const copy = cloneJson(bare);
    assert.equal(Object.getPrototypeOf(copy), Object.prototype);
    assert.deepEqual(copy, { a: [1] });
    assert.notEqual(copy['a'], bare['a']);
  });

  it('keeps a __proto__ key as an own property, as structuredClone does', () => {
    const parsed = JSON.parse('{"labels":{"__proto__":{"a":"b"},"app":"web"}}') as unknown;
    const copy = cloneJson(parsed);
    assert.deepEqual(copy, structuredClone(parsed));
    assert.equal(JSON.stringify(copy), JSON.stringify(parsed));
  });

  it('hands other objects (a Date) to structuredClone', () => {
    const at = new Date('2024-05-06T07:08:09Z');
    const copy = cloneJson({ metadata: { creationTimestamp: at } });
    assert.ok(copy.metadata.creationTimestamp instanceof Date);
    assert.notEqual(copy.metadata.creationTimestamp, at);
    assert.equal(copy.metadata.creationTimestamp.getTime(), at.getTime());
  });
});

/** No array or object of `copy` is one of `original`'s. */
function assertNothingShared(original: unknown, copy: unknown): void {
  if (typeof original !== 'object' || original === null) return;
  assert.notEqual(copy, original);
  const a = original as Record<string, unknown>;
  const b = copy as Record<string, unknown>;
  for (const key of Object.keys(a)) assertNothingShared(a[key], b[key]);
}

describe('base64Utf8', () => {
  it('is the base64 of the UTF-8 bytes for any string (ASCII, other BMP, astral, lone surrogates)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        assert.equal(base64Utf8(text), Buffer.from(text, 'utf8').toString('base64'));
      }),
    );
  });

  it('handles ASCII and non-ASCII text longer than one chunk', () => {
    for (const text of ['a'.repeat(70_000), `${'é'.repeat(40_000)}x€😀`, 'ab', 'abc', '']) {
      assert.equal(base64Utf8(text), Buffer.from(text, 'utf8').toString('base64'));
    }
  });

  it('encodePatch is the base64 of the JSON', () => {
    const patch = [{ op: 'add', path: '/metadata/annotations', value: { note: 'café <&>' } }];
    assert.equal(Buffer.from(encodePatch(patch), 'base64').toString('utf8'), JSON.stringify(patch));
  });
});
