import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';

import {
  buildSidecarSetIndex,
  candidateSidecarSets,
} from '../../../src/core/matching/sidecarset-index.js';
import type { SidecarSet } from '../../../src/core/api/sidecarset-types.js';
import { makeSidecarSet } from '../../support/factories.js';

const names = (sets: readonly SidecarSet[]): (string | undefined)[] =>
  sets.map((s) => s.metadata.name);

describe('candidateSidecarSets merges the sorted lists of the index', () => {
  const sets = [
    makeSidecarSet('d-tier', { selector: { matchLabels: { tier: 'front' } } }),
    makeSidecarSet('a-app', { selector: { matchLabels: { app: 'web' } } }),
    makeSidecarSet('c-exists', {
      selector: { matchExpressions: [{ key: 'x', operator: 'Exists' }] },
    }),
    makeSidecarSet('b-in', {
      selector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1', 'z1', 'z2'] }] },
    }),
    makeSidecarSet('e-app', { selector: { matchLabels: { app: 'web', tier: 'back' } } }),
  ];
  const index = buildSidecarSetIndex(sets);

  it('gives the unindexed ones and those filed under the pod labels, by name, each once', () => {
    assert.deepEqual(
      names(candidateSidecarSets(index, { tier: 'front', app: 'web', zone: 'z1' })),
      ['a-app', 'b-in', 'c-exists', 'd-tier', 'e-app'],
    );
    assert.deepEqual(names(candidateSidecarSets(index, { zone: 'z2' })), ['b-in', 'c-exists']);
    assert.deepEqual(names(candidateSidecarSets(index, {})), ['c-exists']);
  });

  it('gives one list of the index as a copy that the caller may change', () => {
    const onlyIndexed = buildSidecarSetIndex(sets.filter((s) => s.metadata.name !== 'c-exists'));
    const first = candidateSidecarSets(onlyIndexed, { app: 'web' });
    assert.deepEqual(names(first), ['a-app', 'e-app']);
    first.pop();
    assert.deepEqual(names(candidateSidecarSets(onlyIndexed, { app: 'web' })), ['a-app', 'e-app']);
    const unindexed = candidateSidecarSets(index, {});
    unindexed.pop();
    assert.deepEqual(names(candidateSidecarSets(index, {})), ['c-exists']);
  });

  it('is what sorting the union of the lists gives, for any SidecarSets and labels', () => {
    const value = fc.constantFrom('a', 'b', 'c');
    const key = fc.constantFrom('app', 'tier', 'zone');
    const selector = fc.oneof(
      fc.dictionary(key, value, { maxKeys: 2 }).map((matchLabels) => ({ matchLabels })),
      fc.record({ key, values: fc.array(value, { maxLength: 3 }) }).map((e) => ({
        matchExpressions: [{ ...e, operator: 'In' as const }],
      })),
      key.map((k) => ({ matchExpressions: [{ key: k, operator: 'Exists' as const }] })),
    );
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.string({ maxLength: 3 }), selector), {
          selector: ([name]) => name,
          maxLength: 12,
        }),
        fc.dictionary(key, value),
        (specs, labels) => {
          const built = buildSidecarSetIndex(
            specs.map(([n, s]) => makeSidecarSet(n, { selector: s })),
          );
          const expected = new Set(built.unindexed);
          for (const [k, v] of Object.entries(labels)) {
            for (const ss of built.byLabelPair.get(`${k}\u0000${v}`) ?? []) expected.add(ss);
          }
          const want = [...expected].sort((a, b) =>
            (a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1,
          );
          assert.deepEqual(names(candidateSidecarSets(built, labels)), names(want));
        },
      ),
    );
  });
});
