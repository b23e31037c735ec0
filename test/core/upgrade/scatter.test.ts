/** scatterStrategy, alone and through the planner (src/core/upgrade/scatter.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { UpdateScatterTerm } from '../../../src/core/api/sidecarset-types.js';
import type { Labels } from '../../../src/core/matching/selector.js';
import { planUpgrade } from '../../../src/core/upgrade/plan.js';
import {
  expandScatterTerms,
  groupByDensity,
  scatterCandidates,
} from '../../../src/core/upgrade/scatter.js';
import { names, shuffled, upgradePod, upgradeSidecarSet } from '../../support/upgrade-pods.js';

const now = new Date('2026-07-02T10:00:00Z');

/** scatterCandidates over `candidates`, all of `all` (in namespace/name order), as indexes. */
function scatterOrder(
  candidates: readonly { labels: Labels }[],
  all: readonly { labels: Labels }[],
  terms: readonly UpdateScatterTerm[],
): number[] {
  const named = all.map(({ labels }, i) => ({
    labels,
    ref: { namespace: 'default', name: `pod-${String(i).padStart(6, '0')}` },
  }));
  return scatterCandidates(terms, candidates, named).map((c) => candidates.indexOf(c));
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

describe('scatterStrategy', () => {
  // The scatter worked example of SortUpdateIndexes (sidecarset_strategy.go): 00–05 nginx (oldest), 06–09 web-server, 10–11 api-gateway.
  const app = (i: number) => (i <= 5 ? 'nginx' : i <= 9 ? 'web-server' : 'api-gateway');
  const pods = Array.from({ length: 12 }, (_, i) =>
    upgradePod(i, { labels: { app: 'web', app_name: app(i) } }),
  );
  const terms = ['nginx', 'web-server', 'api-gateway'].map((value) => ({ key: 'app_name', value }));

  it('the article example: full order, and the first 4 with maxUnavailable 4', () => {
    const p = planUpgrade(
      upgradeSidecarSet({ scatterStrategy: terms, maxUnavailable: 12 }),
      shuffled(pods),
      { now },
    );
    assert.deepEqual(
      names(p.upgrade).map((n) => Number(n.slice(4))),
      [11, 9, 5, 4, 8, 3, 2, 7, 1, 0, 6, 10],
    );
    const four = planUpgrade(
      upgradeSidecarSet({ scatterStrategy: terms, maxUnavailable: 4 }),
      pods,
      { now },
    );
    assert.deepEqual(names(four.upgrade), ['pod-11', 'pod-9', 'pod-5', 'pod-4']);
  });

  it('key-only scatter ("*" or no value) expands to every value, in name order of first appearance', () => {
    for (const term of [{ key: 'app_name', value: '*' }, { key: 'app_name' }]) {
      const p = planUpgrade(
        upgradeSidecarSet({ scatterStrategy: [term], maxUnavailable: 12 }),
        shuffled(pods, 3),
        { now },
      );
      assert.deepEqual(
        names(p.upgrade).map((n) => Number(n.slice(4))),
        [11, 9, 5, 4, 8, 3, 2, 7, 1, 0, 6, 10],
      );
    }
  });

  it('expandScatterTerms (TestParseUpdateScatterTerms)', () => {
    const explicit = [1, 2, 3].map((i) => ({ key: `key-${i}`, value: `value-${i}` }));
    const labelled = ['value-4-0', 'value-4-1', 'value-4-2', 'value-4', 'value-4', 'value-4'].map(
      (v, i) => ({ labels: { 'key-4': v }, ref: { namespace: 'default', name: `pod-${i + 1}` } }),
    );
    assert.deepEqual(expandScatterTerms(explicit, labelled), explicit);
    assert.deepEqual(
      expandScatterTerms(
        [...explicit, { key: 'key-1', value: 'value-1' }, { key: 'key-4', value: '*' }],
        [{ labels: {}, ref: { namespace: 'default', name: 'pod-0' } }, ...labelled],
      ),
      [
        ...explicit,
        ...['value-4-0', 'value-4-1', 'value-4-2', 'value-4'].map((value) => ({
          key: 'key-4',
          value,
        })),
      ],
    );
  });

  it('groupByDensity', () => {
    assert.deepEqual(groupByDensity(5, 6, 5, 6), {
      groups: 5,
      matchedSize: 1,
      unmatchedSize: 1,
      remainder: 0,
    });
    // The candidates hold fewer matching pods than the fleet: use the fleet's group sizes.
    assert.deepEqual(groupByDensity(10, 2, 2, 4), {
      groups: 0,
      matchedSize: 5,
      unmatchedSize: 1,
      remainder: 4,
    });
    assert.deepEqual(groupByDensity(9, 3, 4, 6), {
      groups: 1,
      matchedSize: 3,
      unmatchedSize: 1,
      remainder: 5,
    });
  });

  it('a term matching at most one candidate, or leaving at most one, changes nothing', () => {
    const items = ['a', 'b', 'b', 'c'].map((v) => ({ labels: { k: v } }));
    assert.deepEqual(scatterOrder(items, items, [{ key: 'k', value: 'a' }]), [0, 1, 2, 3]);
    assert.deepEqual(scatterOrder(items, items, []), [0, 1, 2, 3]);
    assert.deepEqual(scatterOrder(items.slice(0, 1), items, [{ key: 'k', value: 'a' }]), [0]);
  });

  it('a missing label counts as "" for a term with an empty value', () => {
    const items = [{}, {}, { k: 'x' }, { k: 'x' }, { k: '' }].map((labels) => ({ labels }));
    // M = 0, 1, 4 (4 set aside), U = 2, 3; totals 3 and 2: even groups of one.
    assert.deepEqual(scatterOrder(items, items, [{ key: 'k', value: '' }]), [0, 2, 1, 3, 4]);
    assert.deepEqual(scatterOrder(items, items, [{ key: 'none', value: '' }]), [0, 1, 2, 3, 4]);
  });

  it('several terms: those no candidate carries are dropped, the rest go by count', () => {
    const items = ['a', 'a', 'b', 'b', 'b', 'c', 'c'].map((v) => ({ labels: { k: v } }));
    assert.deepEqual(
      scatterOrder(
        items,
        items,
        ['a', 'z', 'b'].map((value) => ({ key: 'k', value })),
      ),
      [0, 2, 3, 5, 6, 4, 1],
    );
  });
});

// The vectors of OpenKruise's pkg/util/updatesort scatter_sort_test.go, which the SidecarSet
// strategy sorts with; the pods are named so that name order is OpenKruise's original order.

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
