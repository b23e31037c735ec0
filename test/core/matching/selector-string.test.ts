import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';

import { SidecarSetError } from '../../../src/core/errors.js';
import type { LabelSelector, LabelSelectorRequirement } from '../../../src/core/api/k8s-types.js';
import { selectorMatches, selectorString } from '../../../src/core/matching/selector.js';
import { parseLabelSelector } from '../../fake-apiserver/selectors.js';

describe('selectorString', () => {
  it('writes matchLabels and each operator in the API string form', () => {
    assert.equal(
      selectorString({
        matchLabels: { app: 'web', tier: 'front' },
        matchExpressions: [
          { key: 'env', operator: 'In', values: ['a', 'b'] },
          { key: 'zone', operator: 'NotIn', values: ['x'] },
          { key: 'canary', operator: 'Exists' },
          { key: 'legacy', operator: 'DoesNotExist' },
        ],
      }),
      'app=web,tier=front,env in (a,b),zone notin (x),canary,!legacy',
    );
  });

  it('gives nothing for an empty selector, which matches no pod', () => {
    assert.equal(selectorString(undefined), undefined);
    assert.equal(selectorString({}), undefined);
    assert.equal(selectorString({ matchLabels: {}, matchExpressions: [] }), undefined);
  });

  it('refuses an unknown operator as matching does', () => {
    const selector = {
      matchExpressions: [{ key: 'a', operator: 'Gt' as LabelSelectorRequirement['operator'] }],
    };
    assert.throws(() => selectorString(selector), SidecarSetError);
  });

  it('the API server selects by the string exactly the pods the selector matches', () => {
    const key = fc.constantFrom('app', 'tier', 'env');
    const value = fc.constantFrom('a', 'b', 'c');
    const requirement: fc.Arbitrary<LabelSelectorRequirement> = fc.oneof(
      fc.record({
        key,
        operator: fc.constantFrom('In' as const, 'NotIn' as const),
        values: fc.uniqueArray(value, { minLength: 1, maxLength: 3 }),
      }),
      fc.record({ key, operator: fc.constantFrom('Exists' as const, 'DoesNotExist' as const) }),
    );
    const selector: fc.Arbitrary<LabelSelector> = fc.record({
      matchLabels: fc.dictionary(key, value, { maxKeys: 2 }),
      matchExpressions: fc.array(requirement, { maxLength: 3 }),
    });
    const labels = fc.dictionary(key, value, { maxKeys: 3 });
    fc.assert(
      fc.property(selector, labels, (sel, podLabels) => {
        const text = selectorString(sel);
        const byServer =
          text !== undefined && parseLabelSelector(text)({ metadata: { labels: podLabels } });
        assert.equal(byServer, selectorMatches(sel, podLabels), text);
      }),
    );
  });
});
