import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { LabelSelector } from '../../../src/core/api/k8s-types.js';
import type { NamespaceLabels } from '../../../src/core/matching/match.js';
import { matchSidecarSet, minimalNamespaceLabels } from '../../../src/core/matching/match.js';
import { podNamespace } from '../../../src/core/api/pod-ref.js';
import { selectorMatches, selectorMatchesAll } from '../../../src/core/matching/selector.js';
import {
  buildSidecarSetIndex,
  candidateSidecarSets,
  explainMatches,
  matchingSidecarSets,
} from '../../../src/core/matching/sidecarset-index.js';
import type { SidecarSet } from '../../../src/core/api/sidecarset-types.js';
import { makePod, makeSidecarSet } from '../../support/factories.js';

describe('selectorMatches', () => {
  const labels = { app: 'web', tier: 'front' };
  const cases: [string, LabelSelector | undefined, boolean][] = [
    ['nil selector matches nothing', undefined, false],
    ['empty selector matches nothing', {}, false],
    ['empty lists match nothing', { matchLabels: {}, matchExpressions: [] }, false],
    ['matchLabels equal', { matchLabels: { app: 'web' } }, true],
    ['matchLabels differ', { matchLabels: { app: 'db' } }, false],
    ['matchLabels all required', { matchLabels: { app: 'web', tier: 'back' } }, false],
    [
      'In listed',
      { matchExpressions: [{ key: 'app', operator: 'In', values: ['db', 'web'] }] },
      true,
    ],
    [
      'In not listed',
      { matchExpressions: [{ key: 'app', operator: 'In', values: ['db'] }] },
      false,
    ],
    ['In absent key', { matchExpressions: [{ key: 'x', operator: 'In', values: ['web'] }] }, false],
    [
      'NotIn listed',
      { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['web'] }] },
      false,
    ],
    [
      'NotIn absent key',
      { matchExpressions: [{ key: 'x', operator: 'NotIn', values: ['a'] }] },
      true,
    ],
    ['Exists', { matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, true],
    ['Exists absent', { matchExpressions: [{ key: 'x', operator: 'Exists' }] }, false],
    ['DoesNotExist', { matchExpressions: [{ key: 'x', operator: 'DoesNotExist' }] }, true],
    [
      'DoesNotExist present',
      { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] },
      false,
    ],
    [
      'labels and expressions together',
      {
        matchLabels: { app: 'web' },
        matchExpressions: [{ key: 'tier', operator: 'In', values: ['front'] }],
      },
      true,
    ],
  ];
  for (const [title, selector, expected] of cases) {
    it(title, () => {
      assert.equal(selectorMatches(selector, labels), expected);
    });
  }

  it('throws on an unknown operator', () => {
    assert.throws(
      () => selectorMatches({ matchExpressions: [{ key: 'app', operator: 'Near' }] }, labels),
      { code: 'SI_ERR_INVALID_SELECTOR' },
    );
  });

  it('selectorMatchesAll keeps the usual meaning of {}', () => {
    assert.equal(selectorMatchesAll({}, {}), true);
  });
});

describe('matchSidecarSet', () => {
  const namespaces: NamespaceLabels = new Map([
    ['prod', { 'kubernetes.io/metadata.name': 'prod', env: 'prod' }],
    ['default', minimalNamespaceLabels('default')],
  ]);
  const pod = makePod({ namespace: 'prod' });
  const cases: [string, Partial<SidecarSet['spec']>, boolean, RegExp?][] = [
    ['selector only', {}, true],
    ['paused injection', { injectionStrategy: { paused: true } }, false, /paused/],
    ['namespace equal', { namespace: 'prod' }, true],
    ['namespace differs', { namespace: 'default' }, false, /spec\.namespace is default/],
    [
      'namespaceSelector matches labels',
      { namespaceSelector: { matchLabels: { env: 'prod' } } },
      true,
    ],
    [
      'namespaceSelector does not match',
      { namespaceSelector: { matchLabels: { env: 'dev' } } },
      false,
      /namespaceSelector/,
    ],
    ['empty namespaceSelector matches any existing namespace', { namespaceSelector: {} }, true],
    ['empty selector', { selector: {} }, false, /empty/],
    ['selector differs', { selector: { matchLabels: { app: 'db' } } }, false, /does not match/],
  ];
  for (const [title, spec, matched, reason] of cases) {
    it(title, () => {
      const result = matchSidecarSet(makeSidecarSet('s', spec), pod, 'prod', namespaces);
      assert.equal(result.matched, matched);
      if (!result.matched && reason) assert.match(result.reason, reason);
    });
  }

  it('a namespace that does not exist matches no namespaceSelector', () => {
    const set = makeSidecarSet('s', { namespaceSelector: {} });
    const result = matchSidecarSet(set, makePod({ namespace: 'gone' }), 'gone', namespaces);
    assert.deepEqual(result, { matched: false, reason: 'namespace gone is not known' });
  });

  it("uses the pod's namespace, else the request's, else default", () => {
    assert.equal(podNamespace(makePod({ namespace: 'a' }), 'b'), 'a');
    const bare = makePod();
    delete bare.metadata.namespace;
    assert.equal(podNamespace(bare, 'b'), 'b');
    assert.equal(podNamespace(bare), 'default');
  });
});

describe('SidecarSet index', () => {
  const namespaces: NamespaceLabels = new Map([['default', minimalNamespaceLabels('default')]]);
  const sets = [
    makeSidecarSet('by-label', { selector: { matchLabels: { app: 'web', tier: 'front' } } }),
    makeSidecarSet('by-in', {
      selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'db'] }] },
    }),
    makeSidecarSet('by-exists', {
      selector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] },
    }),
    makeSidecarSet('other-app', { selector: { matchLabels: { app: 'db' } } }),
    makeSidecarSet('empty', { selector: {} }),
  ];
  const index = buildSidecarSetIndex(sets);

  it('offers only SidecarSets that could match, sorted by name', () => {
    const names = candidateSidecarSets(index, { app: 'web' }).map((s) => s.metadata.name);
    assert.deepEqual(names, ['by-exists', 'by-in', 'by-label', 'empty']);
  });

  it('agrees with matching every SidecarSet one by one', () => {
    for (const labels of [{ app: 'web', tier: 'front' }, { app: 'db' }, { tier: 'front' }, {}]) {
      const pod = makePod({ labels });
      const viaIndex = matchingSidecarSets(index, pod, 'default', namespaces).map(
        (s) => s.metadata.name,
      );
      const bruteForce = explainMatches(index, pod, 'default', namespaces)
        .filter((e) => e.result.matched)
        .map((e) => e.name);
      assert.deepEqual(viaIndex, bruteForce, JSON.stringify(labels));
    }
  });

  it('does not look at SidecarSets filed under other labels', () => {
    const many = Array.from({ length: 1000 }, (_, i) =>
      makeSidecarSet(`set-${i}`, { selector: { matchLabels: { app: `app-${i}` } } }),
    );
    const big = buildSidecarSetIndex(many);
    assert.deepEqual(
      candidateSidecarSets(big, { app: 'app-7' }).map((s) => s.metadata.name),
      ['set-7'],
    );
  });

  it('explains every SidecarSet', () => {
    const explained = explainMatches(
      index,
      makePod({ labels: { app: 'db' } }),
      'default',
      namespaces,
    );
    assert.equal(explained.length, sets.length);
    assert.deepEqual(explained.find((e) => e.name === 'other-app')?.result, { matched: true });
  });
});
