/**
 * Hot upgrade (src/core/upgrade/hot-slots.ts; OpenKruise's
 * pkg/controller/sidecarset/sidecarset_hotupgrade.go): its TestUpdateHotUpgradeSidecar step by
 * step, the slot choice of findContainerToHotUpgrade, the flip's annotations, and a simulated
 * rollout.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Pod } from '../../../src/core/api/k8s-types.js';
import { applyPodUpgrade, simulateRollout } from '../../../src/core/rollout/simulate.js';
import { sidecarSetContext } from '../../../src/core/upgrade/context.js';
import { slotToUpgrade } from '../../../src/core/upgrade/hot-slots.js';
import { planUpgrade } from '../../../src/core/upgrade/plan.js';
import type { PodUpgrade, UpgradePlan } from '../../../src/core/upgrade/types.js';
import { applied, hotPod, hotSidecarSet } from '../../support/upgrade-pods.js';

const now = new Date('2026-07-02T10:00:00Z');
const WORKING = 'kruise.io/sidecarset-working-hotupgrade-container';
const STATE = 'kruise.io/sidecarset-inplace-update-state';

/** Each slot's [version, versionalt] annotations. */
function versions(pod: Pod): Record<string, [string, string]> {
  const a = pod.metadata.annotations ?? {};
  const of = (slot: string): [string, string] => [
    a[`version.sidecarset.kruise.io/${slot}`] ?? '',
    a[`versionalt.sidecarset.kruise.io/${slot}`] ?? '',
  ];
  return { 'hot-1': of('hot-1'), 'hot-2': of('hot-2') };
}

function counts(plan: UpgradePlan): string {
  const s = plan.status;
  return `${s.matchedPods}/${s.updatedPods}/${s.readyPods}/${s.updatedReadyPods}`;
}

describe('hot upgrade: TestUpdateHotUpgradeSidecar', () => {
  it('upgrades the empty slot, waits for it, flips the old slot, then is done', () => {
    const ss = hotSidecarSet();
    let pod = hotPod();

    // Step 1: the empty slot hot-2 gets the new image and becomes the working one.
    const first = planUpgrade(ss, [pod], { now });
    assert.equal(counts(first), '1/0/1/0');
    const upgrade = first.upgrade[0];
    assert.ok(upgrade);
    assert.deepEqual(upgrade.images, [{ container: 'hot-2', from: 'empty:1', to: 'hot:2' }]);
    assert.equal(upgrade.annotations[WORKING], '{"hot":"hot-2"}');
    assert.match(upgrade.annotations[STATE] ?? '', /"hot-2":\{"imageID":"id:\/\/empty"\}/);
    pod = applyPodUpgrade(pod, upgrade);
    // hot-2 runs version 42 and hot-1 the old one (1), and each knows the other's.
    assert.deepEqual(versions(pod), { 'hot-1': ['1', '42'], 'hot-2': ['42', '1'] });

    // Step 2: written, not applied yet: updated, not ready (the old slot is not empty).
    const second = planUpgrade(ss, [pod], { now });
    assert.equal(counts(second), '1/1/0/0');
    assert.deepEqual(second.flip, []);
    assert.deepEqual(second.upgrade, []);

    // Step 3: applied: the old slot hot-1 goes back to the empty image, and nothing else.
    pod = applied(pod);
    const third = planUpgrade(ss, [pod], { now });
    assert.equal(counts(third), '1/1/0/0');
    const flip: PodUpgrade | undefined = third.flip[0];
    assert.ok(flip);
    assert.deepEqual(flip.images, [{ container: 'hot-1', from: 'hot:1', to: 'empty:1' }]);
    assert.equal(flip.annotations['kruise.io/sidecarset-hash'], undefined);
    assert.match(flip.annotations[STATE] ?? '', /"hot-1":\{"imageID":"id:\/\/hot-1"\}/);
    pod = applyPodUpgrade(pod, flip);
    assert.deepEqual(versions(pod), { 'hot-1': ['0', '42'], 'hot-2': ['42', '0'] });

    // Step 4: the flip applied: updated and ready.
    pod = applied(pod);
    const fourth = planUpgrade(ss, [pod], { now });
    assert.equal(counts(fourth), '1/1/1/1');
    assert.equal(fourth.stopped, 'Complete');
    assert.deepEqual(fourth.flip, []);
  });

  it('a flip round plans no upgrade and holds the outdated pods', () => {
    const ss = hotSidecarSet();
    const done = applied(
      applyPodUpgrade(hotPod(0), planUpgrade(ss, [hotPod(0)], { now }).upgrade[0] as PodUpgrade),
    );
    const plan = planUpgrade(hotSidecarSet(), [done, hotPod(1)], { now });
    assert.deepEqual(
      plan.flip.map((f) => f.pod.name),
      ['pod-0'],
    );
    assert.deepEqual(plan.upgrade, []);
    assert.deepEqual(
      plan.held.map((h) => [h.pod.name, h.reason]),
      [['pod-1', 'HotUpgradeFlip']],
    );
  });
});

describe('hot upgrade: when a finished upgrade is flipped (isHotUpgradingReady)', () => {
  /** hot-2 upgraded and running the new image; hot-1 still on the old one, not ready; pod not Ready. */
  function upgradedNotReady(appReady: boolean): Pod {
    const ss = hotSidecarSet();
    const pod = applied(
      applyPodUpgrade(hotPod(), planUpgrade(ss, [hotPod()], { now }).upgrade[0] as PodUpgrade),
    );
    for (const s of pod.status?.containerStatuses ?? []) {
      if (s.name === 'hot-1') s.ready = false;
      if (s.name === 'app') s.ready = appReady;
    }
    const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
    if (ready) ready.status = 'False';
    return pod;
  }

  it('a pod not Ready only because of its idle slot is flipped', () => {
    const plan = planUpgrade(hotSidecarSet(), [upgradedNotReady(true)], { now });
    assert.deepEqual(
      plan.flip.map((f) => f.images.map((i) => i.container)),
      [['hot-1']],
    );
  });

  it('a pod with another container not ready waits', () => {
    const plan = planUpgrade(hotSidecarSet(), [upgradedNotReady(false)], { now });
    assert.deepEqual(plan.flip, []);
  });
});

describe('hot upgrade: the slot to write (findContainerToHotUpgrade)', () => {
  const ctx = sidecarSetContext(hotSidecarSet());
  const hot = ctx.hot[0];

  it('the slot on the empty image first', () => {
    assert.ok(hot);
    assert.deepEqual(slotToUpgrade(ctx, hot, hotPod()), { slot: 'hot-2', other: 'hot-1' });
    const pod = hotPod();
    pod.spec.containers = [
      { name: 'hot-1', image: 'empty:1' },
      { name: 'hot-2', image: 'hot:1' },
      { name: 'app', image: 'nginx:1.25' },
    ];
    assert.deepEqual(slotToUpgrade(ctx, hot, pod), { slot: 'hot-1', other: 'hot-2' });
  });

  it('then the slot that is not ready, then the idle (older) one', () => {
    assert.ok(hot);
    const pod = hotPod();
    pod.spec.containers = [
      { name: 'hot-1', image: 'hot:1' },
      { name: 'hot-2', image: 'hot:0' },
      { name: 'app', image: 'nginx:1.25' },
    ];
    const statuses = pod.status?.containerStatuses ?? [];
    for (const s of statuses) if (s.name === 'hot-2') Object.assign(s, { image: 'hot:0' });
    // Both ready: the idle one (hot-1 works, per the annotation).
    assert.deepEqual(slotToUpgrade(ctx, hot, pod), { slot: 'hot-2', other: 'hot-1' });
    for (const s of statuses) if (s.name === 'hot-1') s.ready = false;
    assert.deepEqual(slotToUpgrade(ctx, hot, pod), { slot: 'hot-1', other: 'hot-2' });
  });

  it('nothing to write when the other slot already runs the image', () => {
    const ss = hotSidecarSet('hot:1');
    const plan = planUpgrade(ss, [hotPod()], { now });
    const upgrade = plan.upgrade[0];
    assert.ok(upgrade);
    assert.deepEqual(upgrade.images, []);
    assert.equal(upgrade.annotations[WORKING], undefined);
  });
});

describe('hot upgrade: a simulated rollout', () => {
  it('upgrades and flips every pod, within the budget', () => {
    const ss = hotSidecarSet();
    ss.spec.updateStrategy = { type: 'RollingUpdate', maxUnavailable: 2 };
    const pods = [0, 1, 2, 3, 4].map((i) => hotPod(i));
    const sim = simulateRollout(ss, pods, { now });
    assert.equal(sim.end, 'Complete');
    assert.deepEqual(
      sim.waves.map((w) => w.pods.length),
      [2, 2, 1],
    );
    assert.ok(sim.waves.every((w) => w.unavailable <= 2));
    assert.equal(sim.final.updatedReadyPods, 5);
  });
});
