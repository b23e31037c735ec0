import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Pod } from '../../../src/core/api/k8s-types.js';
import type { Labels } from '../../../src/core/matching/selector.js';
import type {
  UpdatePriorityStrategy,
  UpdateScatterTerm,
} from '../../../src/core/api/sidecarset-types.js';
import { sortCandidates, trailingNumber } from '../../../src/core/upgrade/order.js';
import { planUpgrade } from '../../../src/core/upgrade/plan.js';
import {
  expandScatterTerms,
  groupByDensity,
  scatterCandidates,
} from '../../../src/core/upgrade/scatter.js';
import { names, shuffled, upgradePod, upgradeSidecarSet } from '../../support/upgrade-pods.js';

const now = new Date('2026-07-02T10:00:00Z');

/** The names of the pods in sortCandidates' order. */
function sortedNames(pods: readonly Pod[], priority?: UpdatePriorityStrategy): string[] {
  const candidates = pods.map((pod) => ({ pod }));
  return sortCandidates(candidates, priority).map((c) => c.pod.metadata.name ?? '');
}

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
