/** The upgrade order: the default order and priorityStrategy (src/core/upgrade/order.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Pod } from '../../../src/core/api/k8s-types.js';
import type { UpdatePriorityStrategy } from '../../../src/core/api/sidecarset-types.js';
import type { Labels } from '../../../src/core/matching/selector.js';
import { sortCandidates, trailingNumber } from '../../../src/core/upgrade/order.js';
import { upgradePod } from '../../support/upgrade-pods.js';

function candidates(pods: readonly Pod[]): { pod: Pod }[] {
  return pods.map((pod) => ({ pod }));
}

/** The names of the pods in sortCandidates' order. */
function sortedNames(pods: readonly Pod[], priority?: UpdatePriorityStrategy): string[] {
  return sortCandidates(candidates(pods), priority).map((c) => c.pod.metadata.name ?? '');
}

describe('default order (ActivePods.Less)', () => {
  const cases: { name: string; first: Pod; second: Pod }[] = [
    { name: 'unscheduled first', first: upgradePod(0, { nodeName: '' }), second: upgradePod(1) },
    {
      name: 'Pending before Unknown',
      first: upgradePod(0, { phase: 'Pending' }),
      second: upgradePod(1, { phase: 'Unknown' }),
    },
    {
      name: 'Unknown before Running',
      first: upgradePod(0, { phase: 'Unknown' }),
      second: upgradePod(1, { phase: 'Running' }),
    },
    { name: 'not ready first', first: upgradePod(0, { ready: false }), second: upgradePod(1) },
    {
      name: 'ready more recently first',
      first: upgradePod(0, { readySince: 50 }),
      second: upgradePod(1, { readySince: 10 }),
    },
    {
      name: 'more restarts first',
      first: upgradePod(0, { restarts: 3 }),
      second: upgradePod(1, { createdAt: 9, readySince: 0, restarts: 1 }),
    },
    { name: 'newer first', first: upgradePod(5), second: upgradePod(2, { readySince: 5 }) },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(sortedNames([c.second, c.first]), sortedNames([c.first, c.second]));
      assert.equal(sortedNames([c.second, c.first])[0], c.first.metadata.name);
    });
  }

  it('a missing time goes first', () => {
    const a = upgradePod(0, { readySince: 5 });
    delete a.metadata.creationTimestamp;
    const b = upgradePod(1, { readySince: 5 });
    assert.deepEqual(sortedNames([b, a]), ['pod-0', 'pod-1']);
    const c = upgradePod(2, { readySince: 5 });
    c.metadata.creationTimestamp = '0001-01-01T00:00:00Z';
    assert.deepEqual(sortedNames([b, c]), ['pod-2', 'pod-1']);
    const zeroReady = upgradePod(4);
    const cond = zeroReady.status?.conditions?.[0];
    if (cond) cond.lastTransitionTime = null;
    assert.deepEqual(sortedNames([upgradePod(3), zeroReady]), ['pod-4', 'pod-3']);
  });

  it('pods equal in the default order go by namespace, then name', () => {
    const a = upgradePod(1);
    const b = upgradePod(1);
    b.metadata.name = 'pod-0';
    const c = upgradePod(1);
    c.metadata.namespace = 'a-first';
    c.metadata.name = 'pod-9';
    assert.deepEqual(sortedNames([a, b, c]), ['pod-9', 'pod-0', 'pod-1']);
  });
});

describe('priorityStrategy', () => {
  it('orderPriority: pods without any key go first (the OpenKruise quirk), then level, then value', () => {
    const strategy = { orderPriority: [{ orderedKey: 'a' }, { orderedKey: 'b' }] };
    const pods = [
      upgradePod(0, { labels: { b: '99' } }),
      upgradePod(1, { labels: { a: 'sts-2' } }),
      upgradePod(2, { labels: { a: 'sts-10' } }),
      upgradePod(3, { labels: {} }),
    ];
    assert.deepEqual(sortedNames(pods, strategy), ['pod-3', 'pod-2', 'pod-1', 'pod-0']);
  });

  it('weightPriority wins over orderPriority; invalid selectors are skipped', () => {
    const strategy = {
      weightPriority: [
        { weight: 10, matchSelector: { matchLabels: { x: '1' } } },
        { weight: 90, matchSelector: { matchExpressions: [{ key: 'x', operator: 'Bad' }] } },
      ],
      orderPriority: [{ orderedKey: 'x' }],
    };
    // Without priority, the newer pod-1 would go first.
    const pods = [upgradePod(0, { labels: { x: '1' } }), upgradePod(1, { labels: { x: '9' } })];
    assert.deepEqual(sortedNames(pods), ['pod-1', 'pod-0']);
    assert.deepEqual(sortedNames(pods, strategy), ['pod-0', 'pod-1']);
  });

  const suffixes: [string, bigint][] = [
    ['sts-10', 10n],
    ['5', 5n],
    ['abc', 0n],
    ['', 0n],
    ['x99999999999999999999', 0n],
    ['x9223372036854775807', 9223372036854775807n],
  ];
  for (const [value, expected] of suffixes) {
    it(`trailing number of "${value}" is ${expected}`, () => {
      assert.equal(trailingNumber(value), expected);
    });
  }
});

// The vectors of OpenKruise's pkg/util/updatesort priority_sort_test.go, which the SidecarSet
// strategy sorts with. Ties the priority leaves open are broken by name here
// (docs/adr/0003-stable-upgrade-order.md); the pods are named so that name order is OpenKruise's
// original order.

describe('updatesort: TestCompare (priority first, ties by the default order and name)', () => {
  const weights: UpdatePriorityStrategy = {
    weightPriority: [
      { weight: 20, matchSelector: { matchLabels: { key: 'foo' } } },
      { weight: 10, matchSelector: { matchLabels: { key: 'bar' } } },
    ],
  };
  const three = (w3: number): UpdatePriorityStrategy => ({
    weightPriority: [
      { weight: 20, matchSelector: { matchLabels: { key1: 'foo' } } },
      { weight: 10, matchSelector: { matchLabels: { key2: 'bar' } } },
      { weight: w3, matchSelector: { matchLabels: { key3: 'baz' } } },
    ],
  });
  const orders: UpdatePriorityStrategy = {
    orderPriority: [{ orderedKey: 'key1' }, { orderedKey: 'key2' }],
  };
  // [strategy, labels of pod I, labels of pod J, whether I may stay before J]
  const cases: [UpdatePriorityStrategy, Labels, Labels, boolean][] = [
    [weights, {}, {}, true],
    [weights, { key: 'foo' }, { key: 'foo' }, true],
    [weights, { key: 'bar' }, { key: 'foo' }, false],
    [weights, {}, { key: 'bar' }, false],
    [weights, {}, { key: 'foo' }, false],
    [three(15), { key1: 'foo' }, { key2: 'bar', key3: 'baz' }, false],
    [three(5), { key2: 'bar', key3: 'baz' }, { key1: 'foo' }, false],
    [orders, {}, {}, true],
    [orders, { key1: 'o-10' }, { key1: 'o-5' }, true],
    [orders, { key1: 'o-10' }, { key1: 'o-10' }, true],
    [orders, { key1: 'o-10' }, { key1: 'o-20' }, false],
    [orders, { key2: 'o-20' }, { key1: 'o-10' }, false],
    [orders, { key2: 'o-20' }, { key2: 'o-10' }, true],
  ];
  cases.forEach(([strategy, i, j, iFirst], n) => {
    it(`case #${n}: ${JSON.stringify(i)} vs ${JSON.stringify(j)} → ${iFirst ? 'I, J' : 'J, I'}`, () => {
      // Same age and readiness: only the priority, then the name (I is pod-0), can order them.
      const podI = upgradePod(0, { labels: i, createdAt: 0 });
      const podJ = upgradePod(1, { labels: j, createdAt: 0 });
      for (const input of [
        [podI, podJ],
        [podJ, podI],
      ]) {
        const sorted = sortCandidates(candidates(input), strategy).map((c) => c.pod.metadata.name);
        assert.deepEqual(sorted, iFirst ? ['pod-0', 'pod-1'] : ['pod-1', 'pod-0']);
      }
    });
  });
});

describe('updatesort: Test_prioritySort_Sort', () => {
  const labels: Labels[] = [{ hello: 'world' }, {}, { foo: 'bar' }, {}];
  const cases: [string, UpdatePriorityStrategy, number[]][] = [
    ['empty priority strategy', {}, [0, 1, 2, 3]],
    [
      'keep the original order of pods no rule matches',
      {
        weightPriority: [
          { weight: 100, matchSelector: { matchLabels: { foo: 'bar' } } },
          { weight: 90, matchSelector: { matchLabels: { hello: 'world' } } },
        ],
      },
      [2, 0, 1, 3],
    ],
    [
      'no pod matches any rule: the original order',
      {
        weightPriority: [
          { weight: 100, matchSelector: { matchLabels: { not: 'match' } } },
          { weight: 90, matchSelector: { matchLabels: { not1: 'match1' } } },
        ],
      },
      [0, 1, 2, 3],
    ],
  ];
  for (const [name, strategy, expected] of cases) {
    it(name, () => {
      const pods = labels.map((l, i) => upgradePod(i, { labels: l, createdAt: 0 }));
      const sorted = sortCandidates(candidates([...pods].reverse()), strategy);
      assert.deepEqual(
        sorted.map((c) => Number(c.pod.metadata.name?.slice(4))),
        expected,
      );
    });
  }
});
