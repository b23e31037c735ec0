import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LabelSelector } from '../../../src/core/api/k8s-types.js';
import { isSelectorOverlapping } from '../../../src/core/validation/selector-overlap.js';

const expr = (key: string, operator: string, values?: string[]): LabelSelector => ({
  matchExpressions: [{ key, operator, ...(values ? { values } : {}) }],
});

// TestSelectorConflict (OpenKruise pkg/util/selector_test.go), plus edge cases of the same heuristic.
const cases: [string, LabelSelector, LabelSelector, boolean][] = [
  ['a=h / a=h', { matchLabels: { a: 'h' } }, { matchLabels: { a: 'h' } }, true],
  ['a=h / a=i', { matchLabels: { a: 'h' } }, { matchLabels: { a: 'i' } }, false],
  ['a=h / b=i', { matchLabels: { a: 'h' } }, { matchLabels: { b: 'i' } }, true],
  [
    'three labels, one differs',
    { matchLabels: { a: 'h', b: 'i', c: 'j' } },
    { matchLabels: { a: 'h', b: 'x', c: 'j' } },
    false,
  ],
  ['a=h / a In [h,i,j]', { matchLabels: { a: 'h' } }, expr('a', 'In', ['h', 'i', 'j']), true],
  ['a=h / a In [i,j]', { matchLabels: { a: 'h' } }, expr('a', 'In', ['i', 'j']), false],
  ['a NotIn [h,i] / a=h', expr('a', 'NotIn', ['h', 'i']), { matchLabels: { a: 'h' } }, false],
  ['a=h / a Exists', { matchLabels: { a: 'h' } }, expr('a', 'Exists'), true],
  ['a DoesNotExist / a=h', expr('a', 'DoesNotExist'), { matchLabels: { a: 'h' } }, false],
  ['a Exists / a=x', expr('a', 'Exists'), { matchLabels: { a: 'x' } }, true],
  ['a Exists / a In [x]', expr('a', 'Exists'), expr('a', 'In', ['x']), true],
  // Upstream quirk kept: NotIn records nothing, so the other side's Exists finds no key.
  ['a Exists / a NotIn [ALL]', expr('a', 'Exists'), expr('a', 'NotIn', ['ALL']), false],
  ['b=x / a Exists', { matchLabels: { b: 'x' } }, expr('a', 'Exists'), false],
  ['a In [] / a=x', expr('a', 'In', []), { matchLabels: { a: 'x' } }, false],
  ['unknown operator ignored', expr('a', 'Bogus', ['x']), { matchLabels: { a: 'y' } }, true],
  ['empty / anything', {}, { matchLabels: { a: 'h' } }, true],
];

for (const [name, a, b, want] of cases) {
  test(`isSelectorOverlapping: ${name}`, () => {
    assert.equal(isSelectorOverlapping(a, b), want);
    assert.equal(isSelectorOverlapping(b, a), want, 'symmetric');
  });
}
