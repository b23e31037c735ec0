/** The health gate's pause and the planner's stop (src/core/upgrade/rollout-health.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { healthSettings } from '../../../src/core/api/health-gate-annotations.js';
import type { SidecarSet } from '../../../src/core/api/sidecarset-types.js';
import { ROLLOUT_PAUSED } from '../../../src/core/api/sidecarset-types.js';
import { sidecarSetContext } from '../../../src/core/upgrade/context.js';
import { planUpgrade } from '../../../src/core/upgrade/plan.js';
import {
  pauseThreshold,
  rolloutGate,
  rolloutHealth,
} from '../../../src/core/upgrade/rollout-health.js';
import { seconds, sidecarSet, upgraded } from '../../support/health-gate.js';
import { SIDECAR, upgradePod, upgradeSidecarSet } from '../../support/upgrade-pods.js';

describe('pauseThreshold', () => {
  it('the threshold: a count, or a percentage of matched pods rounded up, at least 1', () => {
    assert.equal(pauseThreshold('3', 20), 3);
    assert.equal(pauseThreshold('10%', 20), 2);
    assert.equal(pauseThreshold('10%', 21), 3);
    assert.equal(pauseThreshold('1%', 5), 1);
  });
});

describe('rolloutHealth', () => {
  it('pauses when counted failures reach the threshold, naming the pods', () => {
    const ss = sidecarSet({ 'sidecarset.dev/unhealthy-pods-to-pause': '2' });
    const pods = [
      upgraded(ss, 0, 'notReady'),
      upgraded(ss, 1, 'ready'),
      upgraded(ss, 2, 'pending', { at: seconds(590) }),
    ];
    const ctx = sidecarSetContext(ss);
    const one = rolloutHealth(ctx, pods, 10, healthSettings(ss), seconds(600));
    assert.deepEqual(
      [one.judged, one.healthy, one.progressing, one.failed.length, one.pause],
      [3, 1, 1, 1, false],
    );
    const two = rolloutHealth(ctx, pods, 10, healthSettings(ss), seconds(1190));
    assert.equal(two.pause, true);
    assert.equal(
      two.message,
      `2 upgraded pod(s) failed (pause at 2): default/pod-0 (sidecar ${SIDECAR} is not ready 600s after the upgrade), ` +
        `default/pod-2 (sidecar ${SIDECAR} does not run test-sidecar:v2 600s after the upgrade)`,
    );
  });

  it('names five pods, then how many more', () => {
    const ss = sidecarSet();
    const pods = Array.from({ length: 7 }, (_, i) => upgraded(ss, i, 'notReady'));
    const health = rolloutHealth(sidecarSetContext(ss), pods, 7, healthSettings(ss), seconds(600));
    assert.match(
      health.message,
      /^7 upgraded pod\(s\) failed .*default\/pod-4 \([^)]*\) and 2 more$/,
    );
  });

  it('after a resume only pods upgraded since count; off, nothing is judged', () => {
    const resumed = sidecarSet({ 'sidecarset.dev/resumed-at': '2026-07-02T10:10:00Z' });
    const ctx = sidecarSetContext(resumed);
    const before = upgraded(resumed, 0, 'notReady');
    const health = rolloutHealth(ctx, [before], 5, healthSettings(resumed), seconds(2000));
    assert.equal(health.failed.length, 1);
    assert.equal(health.failed[0]?.counts, false);
    assert.equal(health.pause, false);
    assert.equal(health.message, '');
    const after = upgraded(resumed, 1, 'notReady', { at: seconds(600) });
    assert.equal(
      rolloutHealth(ctx, [before, after], 5, healthSettings(resumed), seconds(2000)).pause,
      true,
    );
    const off = sidecarSet({ 'sidecarset.dev/health-gate': 'off' });
    const none = rolloutHealth(
      sidecarSetContext(off),
      [upgraded(off, 0, 'notReady')],
      5,
      healthSettings(off),
      seconds(2000),
    );
    assert.deepEqual([none.judged, none.pause], [0, false]);
  });
});

describe('planUpgrade with the health gate', () => {
  it('holds every outdated pod (UnhealthyPods) once failed pods reach the threshold', () => {
    const ss = sidecarSet({}, 5);
    const pods = [upgraded(ss, 0, 'notReady'), upgradePod(1), upgradePod(2)];
    const early = planUpgrade(ss, pods, { now: seconds(10) });
    assert.equal(early.stopped, undefined);
    assert.equal(early.upgrade.length, 2);
    const late = planUpgrade(ss, pods, { now: seconds(600) });
    assert.equal(late.stopped, 'UnhealthyPods');
    assert.deepEqual(late.upgrade, []);
    assert.deepEqual(
      late.held.map((h) => [h.pod.name, h.reason]),
      [
        ['pod-1', 'UnhealthyPods'],
        ['pod-2', 'UnhealthyPods'],
      ],
    );
  });

  it('a complete rollout is not paused; NotUpdate judges nothing', () => {
    const ss = sidecarSet();
    const done = planUpgrade(ss, [upgraded(ss, 0, 'notReady')], { now: seconds(600) });
    assert.equal(done.stopped, 'Complete');
    const notUpdate = upgradeSidecarSet({ type: 'NotUpdate' });
    assert.equal(
      planUpgrade(notUpdate, [upgraded(ss, 0, 'notReady')], { now: seconds(600) }).health,
      undefined,
    );
  });

  it('undo: the failed pods are upgraded back first (they are not ready)', () => {
    const bad = sidecarSet({}, 3);
    const pods = [
      upgradePod(0),
      upgradePod(1),
      upgraded(bad, 5, 'notReady'),
      upgraded(bad, 6, 'notReady'),
      upgradePod(7),
    ];
    // The undo writes the old sidecar back: a new hash, the old image.
    const undo = upgradeSidecarSet({ maxUnavailable: 2 });
    undo.metadata.annotations = {
      ...undo.metadata.annotations,
      'kruise.io/sidecarset-hash': 'aaa',
    };
    undo.spec.containers = [{ name: SIDECAR, image: 'test-sidecar:v1' }];
    const plan = planUpgrade(undo, pods, { now: seconds(700) });
    assert.equal(plan.stopped, undefined, 'the failures of the bad revision do not pause the undo');
    assert.deepEqual(plan.upgrade.map((u) => u.pod.name).sort(), ['pod-5', 'pod-6']);
    assert.deepEqual(
      plan.upgrade[0]?.images.map((c) => c.to),
      ['test-sidecar:v1'],
    );
  });
});

describe('rolloutGate: a recorded pause holds', () => {
  const paused = (extra: Record<string, string> = {}, generation = 2): SidecarSet => {
    const ss = sidecarSet(extra);
    ss.metadata.generation = generation;
    ss.status = {
      conditions: [
        {
          type: ROLLOUT_PAUSED,
          status: 'True',
          reason: 'UnhealthyPods',
          message: 'before',
          observedGeneration: 2,
          lastTransitionTime: '2026-07-02T10:10:00Z',
        },
      ],
    };
    return ss;
  };
  const gate = (ss: SidecarSet) =>
    rolloutGate(ss, sidecarSetContext(ss), [upgraded(ss, 0, 'ready')], 3, seconds(2000));

  it('while the pods recover, with its message', () => {
    assert.deepEqual([gate(paused()).pause, gate(paused()).message], [true, 'before']);
  });

  it('not for a new spec, after a resume, with the gate off, or when it is lifted', () => {
    assert.equal(gate(paused({}, 3)).pause, false);
    assert.equal(
      gate(paused({ 'sidecarset.dev/resumed-at': '2026-07-02T10:10:01Z' })).pause,
      false,
    );
    assert.equal(gate(paused({ 'sidecarset.dev/resumed-at': '2026-07-02T10:09:00Z' })).pause, true);
    assert.equal(gate(paused({ 'sidecarset.dev/health-gate': 'off' })).pause, false);
    const lifted = paused();
    const [condition] = lifted.status?.conditions ?? [];
    assert.ok(condition);
    condition.status = 'False';
    assert.equal(gate(lifted).pause, false);
    assert.equal(gate(sidecarSet()).pause, false);
  });
});
