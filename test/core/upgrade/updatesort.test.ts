/**
 * The vectors of OpenKruise's pkg/util/updatesort tests (scatter_sort_test.go,
 * priority_sort_test.go), which the SidecarSet strategy sorts with, run through our scatter and
 * order. Ties the priority leaves open are broken by name here (docs/adr/0003-stable-upgrade-order.md);
 * the pods are named so that name order is OpenKruise's original order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Labels } from '../../../src/core/matching/selector.js';
import type {
  UpdatePriorityStrategy,
  UpdateScatterTerm,
} from '../../../src/core/api/sidecarset-types.js';
import type { Pod } from '../../../src/core/api/k8s-types.js';
import { sortCandidates } from '../../../src/core/upgrade/order.js';
import { scatterCandidates } from '../../../src/core/upgrade/scatter.js';
import { upgradePod } from '../../support/upgrade-pods.js';

function candidates(pods: readonly Pod[]): { pod: Pod }[] {
  return pods.map((pod) => ({ pod }));
}

interface Item {
  labels: Labels;
  ref: { namespace: string; name: string };
  id: number;
}

/**
 * Sort(pods, indexes) of scatterSort: `pods` are all pods (null for a nil pod, counted nowhere),
 * the candidates are the first `count` pods that are not null. Returns the candidates' positions.
 */
function scatter(pods: readonly (Labels | null)[], terms: UpdateScatterTerm[], count: number) {
  const all: Item[] = [];
  pods.forEach((labels, id) => {
    const ref = { namespace: 'default', name: `pod-${String(id).padStart(4, '0')}` };
    if (labels !== null) all.push({ labels, ref, id });
  });
  return scatterCandidates(terms, all.slice(0, count), all).map((c) => c.id);
}

/** "labelA=AAA,labelB=BBB" as labels; parts without "=" are ignored, as the Go test does. */
function parseLabels(text: string): Labels {
  const labels: Record<string, string> = {};
  for (const part of text.split(',')) {
    const at = part.indexOf('=');
    if (at >= 0) labels[part.slice(0, at)] = part.slice(at + 1);
  }
  return labels;
}

describe('updatesort: TestScatterPodsByRule (one term labelA=AAA)', () => {
  const A = 'labelA=AAA';
  const cases: [string, string[], number[]][] = [
    ['no label', [''], [0]],
    ['only one scattered pod', [A], [0]],
    ['odd scattered pod + odd ordinary pod', [A, 'bbb'], [0, 1]],
    ['even scattered pods + even ordinary pods', ['', '', '', '', A, A], [4, 0, 1, 2, 3, 5]],
    ['odd scattered pods + odd ordinary pods', ['', '', '', A, A, A], [3, 0, 1, 4, 2, 5]],
    ['even scattered pods + odd ordinary pods', ['', '', '', A, '', '', A], [3, 0, 1, 2, 4, 5, 6]],
    [
      'odd scattered pods + even ordinary pods',
      ['', '', '', '', '', '', A, A, A],
      [6, 0, 1, 2, 7, 3, 4, 5, 8],
    ],
    ['even scattered + even ordinary, more scattered', ['', '', A, A, A, A], [2, 3, 0, 4, 1, 5]],
    [
      'odd scattered + odd ordinary, more scattered (only the first 6 pods exist)',
      ['', '', '', A, A, A],
      [3, 0, 1, 4, 2, 5],
    ],
    [
      'even scattered + odd ordinary, more scattered',
      ['', '', A, '', A, A, A, A, A],
      [2, 4, 0, 5, 6, 1, 7, 3, 8],
    ],
    [
      'odd scattered + even ordinary, more scattered',
      ['', A, '', A, '', '', A, A, A],
      [1, 0, 3, 2, 6, 4, 7, 5, 8],
    ],
    [
      'invalid label',
      ['', '', '', '', 'ee', 'a', '', A, A, `${A},labelB=BBB`],
      [7, 0, 1, 2, 3, 8, 4, 5, 6, 9],
    ],
  ];
  for (const [name, labels, expected] of cases) {
    it(name, () => {
      const pods = labels.map(parseLabels);
      assert.deepEqual(scatter(pods, [{ key: 'labelA', value: 'AAA' }], pods.length), expected);
    });
  }
});

describe('updatesort: TestSort (scatterSort.Sort)', () => {
  const A = { labelA: 'AAA' };
  const B = { labelB: 'BBB' };
  const C = { labelC: 'CCC' };
  const AB = { ...A, ...B };
  const tA = { key: 'labelA', value: 'AAA' };
  const tB = { key: 'labelB', value: 'BBB' };
  const tC = { key: 'labelC', value: 'CCC' };
  const cases: [string, (Labels | null)[], UpdateScatterTerm[], number[]][] = [
    ['a scattered pod + an ordinary pod', [AB], [tA], [0]],
    ['all ordinary pods', [{}, {}, {}, {}, {}, {}], [], [0, 1, 2, 3, 4, 5]],
    ['one pod one label', [{}, {}, {}, {}, A, A], [tA], [4, 0, 1, 2, 3, 5]],
    [
      'one pod more labels',
      [{}, {}, {}, {}, { sdfb: 'eee' }, { dsf: 'same' }, B, A, A, AB],
      [tB],
      [6, 0, 1, 2, 3, 4, 5, 7, 8, 9],
    ],
    ['2 dimensions + one pod one label', [B, B, {}, {}, A, A], [tA, tB], [0, 4, 2, 3, 5, 1]],
    ['2 dimensions + one pod more labels', [{}, {}, {}, B, AB, A], [tA, tB], [4, 0, 1, 2, 5, 3]],
    [
      '2 dimensions + same label + sequence: A + B',
      [{}, {}, {}, {}, { sdfb: 'eee' }, { dsf: 'same' }, B, A, A, B],
      [tB, tA],
      [7, 6, 0, 1, 2, 3, 4, 5, 9, 8],
    ],
    [
      '2 dimensions + same label + sequence: B + A',
      [{}, {}, {}, {}, { sdfb: 'eee' }, { dsf: 'same' }, B, A, A, B],
      [tA, tB],
      [6, 7, 0, 1, 2, 3, 4, 5, 8, 9],
    ],
    [
      '2 dimensions + same pod same label + even scatter + even ordinary',
      [{}, {}, {}, {}, { sdfb: 'eee' }, { dsf: 'same' }, AB, {}, {}, AB],
      [tA, tB],
      [6, 0, 1, 2, 3, 4, 5, 7, 8, 9],
    ],
    [
      '2 dimensions + same pod same label + even scatter + odd ordinary',
      [{}, {}, {}, { sdfb: 'eee' }, { dsf: 'same' }, AB, {}, {}, AB],
      [tA, tB],
      [5, 0, 1, 2, 3, 4, 6, 7, 8],
    ],
    [
      '2 dimensions + same pod same label + odd scatter + odd ordinary (8 of 10 to update)',
      [{}, {}, {}, A, { sdfb: 'eee' }, { dsf: 'same' }, AB, {}, {}, {}],
      [tA, tB],
      [3, 0, 1, 2, 4, 5, 7, 6],
    ],
    [
      '2 dimensions + same pod same label + odd scatter + odd ordinary (11 of 12 to update)',
      [{}, {}, {}, A, {}, {}, { sdfb: 'eee' }, { dsf: 'same' }, AB, {}, {}, AB],
      [tA, tB],
      [0, 1, 2, 4, 3, 5, 6, 7, 9, 10, 8],
    ],
    [
      '2 dimensions + even scatter + even ordinary + more scatter',
      [{}, {}, {}, A, { sdfb: 'eee', ...A }, { dsf: 'same' }, AB, {}, {}, AB],
      [tA, tB],
      [6, 3, 0, 1, 4, 2, 5, 7, 8, 9],
    ],
    [
      '2 dimensions + even scatter + odd ordinary + more scatter',
      [{}, A, A, { sdfb: 'eee' }, { dsf: 'same' }, AB, {}, {}, AB],
      [tA, tB],
      [5, 1, 0, 3, 2, 4, 6, 7, 8],
    ],
    [
      '2 dimensions + odd scatter + odd ordinary + more scatter (8 of 10 to update)',
      [A, {}, {}, A, { sdfb: 'eee', ...A }, { dsf: 'same' }, AB, {}, {}, AB],
      [tA, tB],
      [1, 0, 2, 3, 5, 4, 7, 6],
    ],
    [
      '2 dimensions + odd scatter + odd ordinary + more scatter (11 of 12 to update)',
      [{}, {}, A, A, {}, A, { sdfb: 'eee' }, { dsf: 'same' }, AB, {}, {}, AB],
      [tA, tB],
      [0, 2, 1, 4, 3, 6, 7, 5, 9, 10, 8],
    ],
    [
      '3 dimensions + one pod one label',
      [{}, A, A, B, B, C, C, C, C, C],
      [tA, tB, tC],
      [3, 1, 5, 0, 6, 7, 8, 9, 2, 4],
    ],
    [
      '3 dimensions + one pod more label',
      [{}, A, { ...A, ...C }, { ...B, ...C }, B, {}, {}, C, C, C],
      [tA, tB, tC],
      [3, 2, 0, 7, 8, 5, 6, 9, 1, 4],
    ],
    ['continuous sort 1', [{}, {}, {}, {}, A, A, A], [tA], [0, 1, 4, 2, 3, 5]],
    ['continuous sort 2', [A, A, {}, {}, {}, {}, {}, {}, {}, A], [tA], [2, 0, 3, 4, 5, 6, 1]],
    [
      'reserveOrdinals nil in slice',
      [{}, A, { ...A, ...C }, { ...B, ...C }, B, null, {}, {}, C, C, C],
      [tA, tB, tC],
      [3, 2, 0, 8, 9, 6, 7, 10, 1, 4],
    ],
  ];
  for (const [name, pods, terms, expected] of cases) {
    it(name, () => {
      assert.deepEqual(scatter(pods, terms, expected.length), expected);
    });
  }
});

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
