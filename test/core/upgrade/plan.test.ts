/** The planner: which pods upgrade, wait or stay, and its status (src/core/upgrade/plan.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  SIDECARSET_HASH as HASH,
  SIDECARSET_HASH_WITHOUT_IMAGE as WITHOUT_IMAGE,
} from '../../../src/core/api/annotations.js';
import type { IntOrString, Pod } from '../../../src/core/api/k8s-types.js';
import type { SidecarSetUpdateStrategy } from '../../../src/core/api/sidecarset-types.js';
import { planUpgrade } from '../../../src/core/upgrade/plan.js';
import { applyPodUpgrade } from '../../../src/core/rollout/simulate.js';
import {
  inPlaceUpdateState,
  names,
  podFleet,
  shuffled,
  upgradePod,
  upgradeSidecarSet,
} from '../../support/upgrade-pods.js';

const now = new Date('2026-07-02T10:00:00Z');

function plan(strategy: SidecarSetUpdateStrategy, pods: Pod[]) {
  return planUpgrade(upgradeSidecarSet(strategy), shuffled(pods), { now });
}

describe('planUpgrade: TestGetNextUpgradePods vectors (sidecarset_strategy_test.go)', () => {
  const cases: {
    name: string;
    strategy: SidecarSetUpdateStrategy;
    fleet: [number, number, number];
    upgrade: number;
  }[] = [
    {
      name: 'maxUnavailable 10',
      strategy: { maxUnavailable: 10 },
      fleet: [100, 30, 26],
      upgrade: 6,
    },
    { name: '10%', strategy: { maxUnavailable: '10%' }, fleet: [1000, 300, 260], upgrade: 60 },
    { name: '5%', strategy: { maxUnavailable: '5%' }, fleet: [1000, 300, 250], upgrade: 0 },
    { name: '100', strategy: { maxUnavailable: 100 }, fleet: [100, 30, 27], upgrade: 70 },
    {
      name: 'partition 180',
      strategy: { partition: 180, maxUnavailable: 100 },
      fleet: [1000, 800, 760],
      upgrade: 20,
    },
    {
      name: 'partition 100',
      strategy: { partition: 100, maxUnavailable: 100 },
      fleet: [1000, 800, 760],
      upgrade: 60,
    },
    {
      name: 'partition 18%',
      strategy: { partition: '18%', maxUnavailable: 100 },
      fleet: [1000, 800, 760],
      upgrade: 20,
    },
    {
      name: 'partition 10%',
      strategy: { partition: '10%', maxUnavailable: 100 },
      fleet: [1000, 800, 760],
      upgrade: 60,
    },
    { name: '5% of 5', strategy: { maxUnavailable: '5%' }, fleet: [5, 0, 0], upgrade: 1 },
    {
      name: 'partition 99% of 5',
      strategy: { maxUnavailable: 5, partition: '99%' },
      fleet: [5, 0, 0],
      upgrade: 1,
    },
    {
      name: 'partition 1% of 5',
      strategy: { maxUnavailable: 5, partition: '1%' },
      fleet: [5, 0, 0],
      upgrade: 4,
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.fleet.join('/')} → ${c.upgrade}`, () => {
      const p = plan(c.strategy, podFleet(...c.fleet));
      assert.equal(p.upgrade.length, c.upgrade);
      assert.equal(p.notUpgradable.length, 0);
    });
  }

  it('selector covering 30 of 1000 pods, maxUnavailable 100 → 30', () => {
    const pods = Array.from({ length: 1000 }, (_, i) =>
      upgradePod(i, { labels: i < 30 ? { app: 'test' } : { app: 'web' } }),
    );
    const p = plan({ selector: { matchLabels: { app: 'test' } }, maxUnavailable: 100 }, pods);
    assert.equal(p.upgrade.length, 30);
    assert.ok(p.upgrade.every((u) => Number(u.pod.name.slice(4)) < 30));
    assert.equal(p.held.filter((h) => h.reason === 'NotSelected').length, 970);
  });

  it('every pod with another without-image hash → 0 upgraded, 100 not upgradable', () => {
    const ss = upgradeSidecarSet({ maxUnavailable: 100 }, { withoutImage: 'without-ccc' });
    const p = planUpgrade(ss, podFleet(100), { now });
    assert.equal(p.upgrade.length, 0);
    assert.equal(p.notUpgradable.length, 100);
    assert.equal(p.notUpgradable[0]?.reason, 'UpdateImmutableField');
  });
});

describe('planUpgrade: the article worked examples at full size', () => {
  it('1000 pods, partition 980, maxUnavailable 10%: 20, then holds', () => {
    const first = plan({ partition: 980, maxUnavailable: '10%' }, podFleet(1000));
    assert.equal(first.upgrade.length, 20);
    assert.deepEqual(first.budget, {
      partition: 980,
      maxUnavailable: 100,
      unavailable: 0,
      unavailableAfter: 20,
      candidates: 1000,
      eligible: 20,
    });
    assert.equal(first.held.length, 980);
    assert.ok(first.held.every((h) => h.reason === 'Partition'));
    // The 20 newest pods go first (default order: newer before older).
    assert.deepEqual(
      names(first.upgrade),
      Array.from({ length: 20 }, (_, i) => `pod-${999 - i}`),
    );
    const next = plan({ partition: 980, maxUnavailable: '10%' }, podFleet(1000, 20, 20));
    assert.equal(next.upgrade.length, 0);
    assert.equal(next.held.length, 980);
    assert.ok(next.held.every((h) => h.reason === 'Partition'));
  });

  it('partition removed: 100 per wave (10% of 1000)', () => {
    const p = plan({ maxUnavailable: '10%' }, podFleet(1000, 20, 20));
    assert.equal(p.upgrade.length, 100);
    assert.equal(p.held.filter((h) => h.reason === 'MaxUnavailable').length, 880);
  });

  it('100 pods, partition 50, maxUnavailable 10: rounds as OpenKruise plays them', () => {
    const s = { partition: 50, maxUnavailable: 10 };
    assert.equal(plan(s, podFleet(100)).upgrade.length, 10);
    assert.equal(plan(s, podFleet(100, 10, 7)).upgrade.length, 7);
    assert.equal(plan(s, podFleet(100, 45, 45)).upgrade.length, 5);
    assert.equal(plan(s, podFleet(100, 50, 50)).upgrade.length, 0);
  });

  it('100 pods, partition 80, maxUnavailable 30: all 20 at once', () => {
    const p = plan({ partition: 80, maxUnavailable: 30 }, podFleet(100));
    assert.equal(p.upgrade.length, 20);
    assert.equal(p.held.length, 80);
  });
});

describe('planUpgrade: budget', () => {
  it('defaults: no partition, maxUnavailable 1', () => {
    const p = planUpgrade(upgradeSidecarSet({}, { spec: { updateStrategy: {} } }), podFleet(5), {
      now,
    });
    assert.equal(p.upgrade.length, 1);
    assert.equal(p.budget.maxUnavailable, 1);
    assert.equal(p.budget.partition, 0);
  });

  it('updated pods that are not consistent or not ready consume budget', () => {
    const pods = [
      upgradePod(0, { upgraded: true }),
      upgradePod(1, { done: true, ready: false }),
      upgradePod(2, { done: true }),
      ...Array.from({ length: 5 }, (_, i) => upgradePod(3 + i)),
    ];
    const p = plan({ maxUnavailable: 3 }, pods);
    assert.equal(p.budget.unavailable, 2);
    assert.equal(p.upgrade.length, 1);
  });

  it('not-ready old pods go first and use no budget', () => {
    const pods = [
      ...Array.from({ length: 6 }, (_, i) => upgradePod(i)),
      upgradePod(6, { ready: false }),
      upgradePod(7, { phase: 'Pending' }),
    ];
    const p = plan({ maxUnavailable: 1 }, pods);
    // Pending (even with Ready=True) ranks first and is not ready (IsPodReady, sidecarcontrol).
    assert.deepEqual(names(p.upgrade), ['pod-7', 'pod-6', 'pod-5']);
    assert.equal(p.budget.unavailableAfter, 1);
  });

  it('maxUnavailable 0 moves only not-ready pods', () => {
    const pods = [upgradePod(0), upgradePod(1, { ready: false })];
    assert.deepEqual(names(plan({ maxUnavailable: 0 }, pods).upgrade), ['pod-1']);
  });

  it('the percentage base is all matched pods, not the canary subset', () => {
    const pods = Array.from({ length: 20 }, (_, i) =>
      upgradePod(i, { labels: { app: 'web', ...(i < 4 ? { 'canary.release': 'true' } : {}) } }),
    );
    const p = plan(
      { selector: { matchLabels: { 'canary.release': 'true' } }, maxUnavailable: '10%' },
      pods,
    );
    assert.equal(p.budget.maxUnavailable, 2);
    assert.equal(p.upgrade.length, 2);
    assert.ok(p.upgrade.every((u) => Number(u.pod.name.slice(4)) < 4));
  });

  it('an invalid canary selector selects nothing', () => {
    const p = plan(
      { selector: { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] } },
      podFleet(3),
    );
    assert.equal(p.upgrade.length, 0);
    assert.equal(p.held.length, 3);
  });

  it('not-upgradable pods do not count toward the partition', () => {
    const pods = Array.from({ length: 100 }, (_, i) =>
      upgradePod(i, i < 30 ? { withoutImage: 'without-old' } : {}),
    );
    const p = plan({ partition: 50, maxUnavailable: 100 }, pods);
    assert.equal(p.upgrade.length, 20);
    assert.equal(p.notUpgradable.length, 30);
  });
});

describe('planUpgrade: sidecarset_processor_test.go and sidecarset_controller_test.go', () => {
  it('TestCanUpgradePods: maxUnavailable 50% of 100 upgrades exactly the 50 whose only change is the image', () => {
    const pods = Array.from({ length: 100 }, (_, i) =>
      upgradePod(i, i < 50 ? { withoutImage: 'without-aaa' } : {}),
    );
    const p = plan({ maxUnavailable: '50%' }, pods);
    assert.equal(p.upgrade.length, 50);
    assert.ok(p.upgrade.every((u) => Number(u.pod.name.slice(4)) >= 50));
    assert.equal(p.notUpgradable.length, 50);
    assert.ok(p.notUpgradable.every((n) => Number(n.pod.name.slice(4)) < 50));
  });

  // TestUpdateWhenMaxUnavailableNotZero, TestUpdateWhenPartitionFinished, TestRemoveSidecarSet
  // (one pod, the default strategy unless given): which pods the reconcile upgrades.
  const single: {
    name: string;
    strategy: SidecarSetUpdateStrategy;
    pod: Pod;
    upgrade: string[];
  }[] = [
    {
      name: 'TestUpdateWhenMaxUnavailableNotZero: a Pending pod is upgraded',
      strategy: {},
      pod: upgradePod(1, { phase: 'Pending' }),
      upgrade: ['pod-1'],
    },
    {
      name: 'TestUpdateWhenPartitionFinished: partition 1 keeps the only pod',
      strategy: { partition: 1 },
      pod: upgradePod(1),
      upgrade: [],
    },
    {
      name: 'TestRemoveSidecarSet: a pod that records the hash is left alone',
      strategy: {},
      pod: upgradePod(1, { done: true }),
      upgrade: [],
    },
  ];
  for (const c of single) {
    it(c.name, () => {
      const p = planUpgrade(upgradeSidecarSet({ ...c.strategy }), [c.pod], { now });
      assert.deepEqual(names(p.upgrade), c.upgrade);
    });
  }

  it('TestUpdateColdUpgradeSidecar: the upgrade changes the image only; env, mounts and the injected list stay', () => {
    const pod = upgradePod(1);
    const sidecar = pod.spec.containers[0];
    assert.ok(sidecar);
    sidecar.env = [{ name: 'nginx-env', value: 'nginx-value' }];
    sidecar.volumeMounts = [{ name: 'v', mountPath: '/data/nginx' }];
    const upgrade = planUpgrade(upgradeSidecarSet(), [pod], { now }).upgrade[0];
    assert.ok(upgrade);
    const after = applyPodUpgrade(pod, upgrade);
    assert.deepEqual(after.spec.containers[0], { ...sidecar, image: 'test-sidecar:v2' });
    assert.equal(
      after.metadata.annotations?.['kruise.io/sidecarset-injected-list'],
      'test-sidecarset',
    );
  });

  it('without-image hashes absent on both sides compare equal (sidecarSetDemo has none)', () => {
    const ss = upgradeSidecarSet();
    delete ss.metadata.annotations?.['kruise.io/sidecarset-hash-without-image'];
    const pod = upgradePod(1);
    delete pod.metadata.annotations?.['kruise.io/sidecarset-hash-without-image'];
    const p = planUpgrade(ss, [pod], { now });
    assert.deepEqual(names(p.upgrade), ['pod-1']);
    assert.equal(p.notUpgradable.length, 0);
  });

  // The partition counts the selected candidates; a percentage scales against all matched pods.
  const canary: [IntOrString, number][] = [
    [10, 10],
    ['10%', 10],
    [19, 1],
    [30, 0],
  ];
  for (const [partition, expected] of canary) {
    it(`updateStrategy.selector picks 20 of 100, partition ${partition} → ${expected} upgraded`, () => {
      const pods = Array.from({ length: 100 }, (_, i) =>
        upgradePod(i, { labels: { app: 'web', ...(i % 5 === 0 ? { canary: 'true' } : {}) } }),
      );
      const p = plan(
        { selector: { matchLabels: { canary: 'true' } }, partition, maxUnavailable: 100 },
        pods,
      );
      assert.equal(p.upgrade.length, expected);
      assert.ok(p.upgrade.every((u) => Number(u.pod.name.slice(4)) % 5 === 0));
      assert.equal(p.held.filter((h) => h.reason === 'Partition').length, 20 - expected);
      assert.equal(p.held.filter((h) => h.reason === 'NotSelected').length, 80);
    });
  }
});

describe('planUpgrade: stops and holds', () => {
  // TestUpdateWhenSidecarSetPaused and TestUpdateWhenUseNotUpdateStrategy (sidecarset_controller_test.go).
  const cases: { name: string; strategy: SidecarSetUpdateStrategy; reason: string }[] = [
    { name: 'paused', strategy: { paused: true }, reason: 'Paused' },
    { name: 'NotUpdate', strategy: { type: 'NotUpdate' }, reason: 'NotUpdate' },
  ];
  for (const c of cases) {
    it(`${c.name}: nothing upgraded, nothing reported not upgradable, status kept`, () => {
      const pods = [
        upgradePod(0),
        upgradePod(1, { done: true }),
        upgradePod(2, { withoutImage: 'x' }),
      ];
      const p = plan(c.strategy, pods);
      assert.equal(p.upgrade.length, 0);
      assert.equal(p.notUpgradable.length, 0);
      assert.equal(p.stopped, c.reason);
      assert.deepEqual(
        p.held.map((h) => [h.pod.name, h.reason]),
        [
          ['pod-0', c.reason],
          ['pod-2', c.reason],
        ],
      );
      assert.equal(p.status.updatedPods, 1);
    });
  }

  it('every pod updated: Complete', () => {
    const p = plan({}, podFleet(3, 3, 3));
    assert.equal(p.stopped, 'Complete');
    assert.deepEqual(p.status, {
      matchedPods: 3,
      updatedPods: 3,
      readyPods: 3,
      updatedReadyPods: 3,
      observedGeneration: 2,
    });
  });

  it('a ready sidecar whose earlier in-place update is pending: UpgradeInFlight', () => {
    // An older upgrade wrote v1.5 while the status still shows v1 under the recorded imageID.
    const pod = upgradePod(0);
    pod.spec.containers[0] = { name: 'test-sidecar', image: 'test-sidecar:v1.5' };
    pod.metadata.annotations = {
      ...pod.metadata.annotations,
      'kruise.io/sidecarset-inplace-update-state': inPlaceUpdateState('aaa', {
        'test-sidecar': 'docker-pullable://test-sidecar@sha256:1111',
      }),
    };
    const p = plan({ maxUnavailable: 5 }, [pod, upgradePod(1)]);
    assert.deepEqual(names(p.upgrade), ['pod-1']);
    assert.deepEqual(
      p.held.map((h) => h.reason),
      ['UpgradeInFlight'],
    );
  });

  it('pods that are inactive, not injected or lack a sidecar are excluded', () => {
    const done = upgradePod(0, { phase: 'Succeeded' });
    const deleting = upgradePod(1);
    deleting.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    const notInjected = upgradePod(2);
    delete notInjected.metadata.annotations?.['kruise.io/sidecarset-injected-list'];
    const missing = upgradePod(3);
    missing.spec.containers = missing.spec.containers.filter((c) => c.name === 'app');
    const p = plan({}, [done, deleting, notInjected, missing, upgradePod(4)]);
    assert.deepEqual(
      p.excluded.map((e) => [e.pod.name, e.reason]),
      [
        ['pod-0', 'Inactive'],
        ['pod-1', 'Inactive'],
        ['pod-2', 'NotInjected'],
        ['pod-3', 'MissingSidecar'],
      ],
    );
    assert.equal(p.status.matchedPods, 1);
  });
});

describe('planUpgrade: TestSortNextUpgradePods (exact order, 20 pods)', () => {
  it('10 upgraded, 5 done, maxUnavailable 10', () => {
    const p = plan({ maxUnavailable: 10 }, podFleet(20, 10, 5));
    assert.deepEqual(names(p.upgrade), ['pod-19', 'pod-18', 'pod-17', 'pod-16', 'pod-15']);
  });

  it('pods 10 and 13 not ready come first, free', () => {
    const pods = podFleet(20, 10, 5).map((p, i) =>
      i === 10 || i === 13 ? upgradePod(i, { ready: false }) : p,
    );
    const p = plan({ maxUnavailable: 10 }, pods);
    assert.deepEqual(names(p.upgrade), [
      'pod-13',
      'pod-10',
      'pod-19',
      'pod-18',
      'pod-17',
      'pod-16',
      'pod-15',
    ]);
  });

  it('weight priority', () => {
    const pods = podFleet(20, 10, 2).map((p, i) =>
      i === 16
        ? upgradePod(i, { labels: { app: 'web', foo: 'x' } })
        : i === 15
          ? upgradePod(i, { labels: { app: 'web', bar: 'x' } })
          : p,
    );
    const p = plan(
      {
        maxUnavailable: 10,
        priorityStrategy: {
          weightPriority: [
            { weight: 50, matchSelector: { matchLabels: { foo: 'x' } } },
            { weight: 30, matchSelector: { matchLabels: { bar: 'x' } } },
          ],
        },
      },
      pods,
    );
    assert.deepEqual(names(p.upgrade), ['pod-16', 'pod-15']);
  });

  it('order priority', () => {
    const pods = Array.from({ length: 20 }, (_, i) =>
      upgradePod(i, {
        upgraded: i < 10,
        done: i < 2,
        labels: { app: 'web', key1: i === 17 ? '10' : i === 18 ? '20' : '5' },
      }),
    );
    const p = plan(
      { maxUnavailable: 10, priorityStrategy: { orderPriority: [{ orderedKey: 'key1' }] } },
      pods,
    );
    assert.deepEqual(names(p.upgrade), ['pod-18', 'pod-17']);
  });
});

describe('planUpgrade: TestUpdateColdUpgradeSidecar status sequence', () => {
  it('2 pods, maxUnavailable 1: 2/0/2/0 → 2/1/1/0 → 2/1/2/1 → 2/2/1/1 → 2/2/2/2', () => {
    const ss = upgradeSidecarSet({ maxUnavailable: 1 });
    let pods = [upgradePod(1), upgradePod(2)];
    const seen: string[] = [];
    const upgraded: string[][] = [];
    const finish = (name: string) => {
      const i = Number(name.slice(4));
      pods = pods.map((p) => (p.metadata.name === name ? upgradePod(i, { done: true }) : p));
    };
    for (let round = 0; round < 5; round++) {
      const p = planUpgrade(ss, pods, { now });
      const s = p.status;
      seen.push(`${s.matchedPods}/${s.updatedPods}/${s.readyPods}/${s.updatedReadyPods}`);
      upgraded.push(names(p.upgrade));
      const byName = new Map(p.upgrade.map((u) => [u.pod.name, u]));
      pods = pods.map((pod) => {
        const u = byName.get(pod.metadata.name ?? '');
        return u === undefined ? pod : applyPodUpgrade(pod, u);
      });
      if (round === 1) finish('pod-2');
      if (round === 3) finish('pod-1');
    }
    assert.deepEqual(seen, ['2/0/2/0', '2/1/1/0', '2/1/2/1', '2/2/1/1', '2/2/2/2']);
    assert.deepEqual(upgraded, [['pod-2'], [], ['pod-1'], [], []]);
  });
});

describe('planUpgrade: determinism', () => {
  it('ties are broken by namespace, then name, whatever the input order', () => {
    const pods = ['c', 'a', 'b'].flatMap((ns) =>
      ['z', 'y'].map((n) => {
        const p = upgradePod(0, { namespace: ns, createdAt: 0 });
        p.metadata.name = n;
        return p;
      }),
    );
    const expected = ['a/y', 'a/z', 'b/y', 'b/z', 'c/y', 'c/z'];
    for (const seed of [1, 2, 3]) {
      const p = planUpgrade(upgradeSidecarSet({ maxUnavailable: 10 }), shuffled(pods, seed), {
        now,
      });
      assert.deepEqual(
        p.upgrade.map((u) => `${u.pod.namespace}/${u.pod.name}`),
        expected,
      );
    }
  });

  const rounding: [IntOrString, number][] = [
    ['10%', 2],
    ['11%', 2],
    ['14%', 3],
    ['1%', 1],
  ];
  for (const [value, expected] of rounding) {
    it(`maxUnavailable ${value} of 15 pods rounds up to ${expected}`, () => {
      assert.equal(plan({ maxUnavailable: value }, podFleet(15)).upgrade.length, expected);
    });
  }
});

describe('planUpgrade: pods judged by their hash annotations', () => {
  it('pods sharing one annotation value are still judged on their own other fields', () => {
    const annotation = (pod: Pod, key: string): string => pod.metadata.annotations?.[key] ?? '';
    const ready = upgradePod(0);
    const notReady = upgradePod(1, { ready: false });
    const changed = upgradePod(2, { withoutImage: 'without-old' });
    const upgraded = upgradePod(3, { upgraded: true });
    const done = upgradePod(4, { done: true });
    // The very same strings on every pod: only the memo's key is shared.
    for (const pod of [notReady, changed]) {
      const annotations = pod.metadata.annotations ?? {};
      annotations[HASH] = annotation(ready, HASH);
      if (pod !== changed) annotations[WITHOUT_IMAGE] = annotation(ready, WITHOUT_IMAGE);
    }
    assert.equal(annotation(notReady, HASH), annotation(ready, HASH));
    assert.notEqual(annotation(changed, WITHOUT_IMAGE), annotation(ready, WITHOUT_IMAGE));
    assert.equal(annotation(done, HASH), annotation(upgraded, HASH));
    const plan = planUpgrade(
      upgradeSidecarSet({ maxUnavailable: 1 }),
      [ready, notReady, changed, upgraded, done],
      { now },
    );
    // The not-ready pod needs no budget and goes first; the ready one takes the one slot.
    assert.deepEqual(names(plan.upgrade), ['pod-1']);
    assert.deepEqual(
      plan.held.map((h) => [h.pod.name, h.reason]),
      [['pod-0', 'MaxUnavailable']],
    );
    assert.deepEqual(
      plan.notUpgradable.map((p) => p.pod.name),
      ['pod-2'],
    );
    assert.equal(plan.status.updatedPods, 2);
    assert.equal(plan.status.updatedReadyPods, 1);
  });
});
