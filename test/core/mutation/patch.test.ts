import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';
import jsonPatch from 'fast-json-patch';

import { diffAsJsonPatch } from '../../../src/core/mutation/patch.js';

/** `patch` applied to a copy of `document`. */
function applied(document: unknown, patch: ReturnType<typeof diffAsJsonPatch>): unknown {
  return jsonPatch.applyPatch(
    structuredClone(document),
    patch as jsonPatch.Operation[],
    true,
    false,
  ).newDocument;
}

// JSON as JSON.parse makes it: no undefined, no null prototypes. No `__proto__` keys either:
// fast-json-patch refuses to apply a patch that names one.
const json = fc
  .jsonValue()
  .map(
    (v) =>
      JSON.parse(JSON.stringify(v), (k, x: unknown) =>
        k === '__proto__' ? undefined : x,
      ) as unknown,
  );

/** `base` with `extra` inserted at the given positions (each taken modulo the length so far). */
function withInsertions(base: unknown[], extra: [number, unknown][]): unknown[] {
  const out = [...base];
  for (const [at, item] of extra) out.splice(at % (out.length + 1), 0, item);
  return out;
}

describe('diffAsJsonPatch', () => {
  it('turns any JSON value into any other', () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        assert.deepEqual(applied(a, diffAsJsonPatch(a, b)), b);
      }),
      { numRuns: 500 },
    );
  });

  it('turns an object into one with some keys changed, removed or added', () => {
    const keys = fc.constantFrom('a', 'b', 'c', 'd/e', 'f~g');
    const objects = fc.dictionary(keys, json, { noNullPrototype: true });
    fc.assert(
      fc.property(objects, objects, (a, b) => {
        assert.deepEqual(applied(a, diffAsJsonPatch(a, b)), b);
      }),
      { numRuns: 300 },
    );
  });

  it('adds the items a list gained, at their final indexes, and touches nothing else', () => {
    const extra = fc.array(fc.tuple(fc.nat(), json), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(fc.array(json, { maxLength: 5 }), extra, (before, inserted) => {
        const after = withInsertions(before, inserted);
        const patch = diffAsJsonPatch({ list: before }, { list: after });
        assert.deepEqual(applied({ list: before }, patch), { list: after });
        assert.ok(patch.every((op) => op.op === 'add'));
        assert.equal(patch.length, inserted.length);
      }),
      { numRuns: 300 },
    );
  });

  it('replaces a list whose items changed, moved or went', () => {
    assert.deepEqual(diffAsJsonPatch({ l: [1, 2] }, { l: [2, 1, 3] }), [
      { op: 'replace', path: '/l', value: [2, 1, 3] },
    ]);
    assert.deepEqual(diffAsJsonPatch({ l: [1, 2] }, { l: [1] }), [
      { op: 'replace', path: '/l', value: [1] },
    ]);
    assert.deepEqual(diffAsJsonPatch({ l: [{ a: 1 }] }, { l: [{ a: 2 }, { a: 1 }, 3] }), [
      { op: 'add', path: '/l/0', value: { a: 2 } },
      { op: 'add', path: '/l/2', value: 3 },
    ]);
  });

  it('puts a sidecar in front of the containers with one add', () => {
    const app = { name: 'app', image: 'app:1', env: [{ name: 'TZ', value: 'UTC' }] };
    const sidecar = { name: 'log', image: 'log:1' };
    const patch = diffAsJsonPatch(
      { spec: { containers: [app] } },
      { spec: { containers: [sidecar, app] } },
    );
    assert.deepEqual(patch, [{ op: 'add', path: '/spec/containers/0', value: sidecar }]);
  });

  it('copies the values it puts in the patch', () => {
    const env = { name: 'A', value: '1' };
    const added = { name: 'log', env: [env] };
    const patch = diffAsJsonPatch({ l: [] as unknown[], m: {} }, { l: [added], m: { added } });
    env.value = 'changed';
    assert.deepEqual(
      patch.map((op) => ('value' in op ? op.value : undefined)),
      [
        { name: 'log', env: [{ name: 'A', value: '1' }] },
        { name: 'log', env: [{ name: 'A', value: '1' }] },
      ],
    );
  });
});
