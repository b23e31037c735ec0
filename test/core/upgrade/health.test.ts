/**
 * The health gate (src/core/upgrade/health-*.ts, rollout-*.ts, upgrade-baseline.ts): settings from
 * annotations, the baseline an upgrade records, the judgement of upgraded pods, the pause, the
 * RolloutPaused condition, and the planner's stop.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Pod } from '../../../src/core/api/k8s-types.js';
import type { SidecarSet } from '../../../src/core/api/sidecarset-types.js';
import { judgePod, judgedContainers } from '../../../src/core/upgrade/health-judge.js';
import { rolloutGate } from '../../../src/core/upgrade/rollout-health.js';
import { rolloutHealth } from '../../../src/core/upgrade/rollout-health.js';
import { ROLLOUT_PAUSED } from '../../../src/core/api/sidecarset-types.js';
import {
  nextRolloutPausedConditions,
  rolloutPause,
} from '../../../src/core/status/rollout-paused-condition.js';
import { healthSettings } from '../../../src/core/api/health-gate-annotations.js';
import { pauseThreshold } from '../../../src/core/upgrade/rollout-health.js';
import {
  UPGRADE_BASELINE,
  readUpgradeBaselines,
} from '../../../src/core/pod-annotations/upgrade-baseline.js';
import { buildPodUpgrade } from '../../../src/core/upgrade/change.js';
import { applyPodUpgrade } from '../../../src/core/rollout/simulate.js';
import { sidecarSetContext } from '../../../src/core/upgrade/context.js';
import { planUpgrade } from '../../../src/core/upgrade/plan.js';
import {
  SET,
  SIDECAR,
  applied,
  hotPod,
  hotSidecarSet,
  upgradePod,
  upgradeSidecarSet,
} from '../../support/upgrade-pods.js';

const T0 = new Date('2026-07-02T10:00:00Z');
const seconds = (n: number): Date => new Date(T0.getTime() + n * 1000);

function sidecarSet(annotations: Record<string, string> = {}, maxUnavailable: number | string = 1) {
  const ss = upgradeSidecarSet({ maxUnavailable });
  ss.metadata.annotations = { ...ss.metadata.annotations, ...annotations };
  return ss;
}

type Outcome = 'ready' | 'notReady' | 'pending' | 'podNotReady';

/** Pod i upgraded in place at `at` (as the controller writes it), then in the state `outcome`. */
function upgraded(
  ss: SidecarSet,
  i: number,
  outcome: Outcome,
  options: { at?: Date; restartsAfter?: number; readyBefore?: boolean } = {},
): Pod {
  const before = upgradePod(i, { restarts: 2, ready: options.readyBefore ?? true });
  const ctx = sidecarSetContext(ss);
  const change = buildPodUpgrade(ctx, before, [], options.at ?? T0);
  const pod = applyPodUpgrade(before, change);
  const status = pod.status?.containerStatuses?.find((s) => s.name === SIDECAR);
  if (status !== undefined && outcome !== 'pending') {
    status.image = 'test-sidecar:v2';
    status.imageID = 'docker-pullable://test-sidecar@sha256:2222';
    status.ready = outcome !== 'notReady';
    status.restartCount = 3 + (options.restartsAfter ?? 0);
  }
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready !== undefined) ready.status = outcome === 'ready' ? 'True' : 'False';
  return pod;
}

describe('health settings', () => {
  it('defaults: gate on, 600 s deadline, 3 restarts, 1 failed pod pauses', () => {
    const s = healthSettings(sidecarSet());
    assert.deepEqual(s, {
      enabled: true,
      progressDeadlineSeconds: 600,
      maxSidecarRestarts: 3,
      unhealthyPodsToPause: '1',
      problems: [],
    });
  });

  it('reads every annotation; bad values fall back to the default with a problem', () => {
    const good = healthSettings(
      sidecarSet({
        'sidecarset.dev/health-gate': 'off',
        'sidecarset.dev/progress-deadline-seconds': '30',
        'sidecarset.dev/max-sidecar-restarts': '0',
        'sidecarset.dev/unhealthy-pods-to-pause': '10%',
        'sidecarset.dev/resumed-at': '2026-07-02T10:05:00Z',
      }),
    );
    assert.equal(good.enabled, false);
    assert.equal(good.progressDeadlineSeconds, 30);
    assert.equal(good.maxSidecarRestarts, 0);
    assert.equal(good.unhealthyPodsToPause, '10%');
    assert.deepEqual(good.resumedAt, seconds(300));
    const bad = healthSettings(
      sidecarSet({
        'sidecarset.dev/health-gate': 'maybe',
        'sidecarset.dev/progress-deadline-seconds': '0',
        'sidecarset.dev/max-sidecar-restarts': '-1',
        'sidecarset.dev/unhealthy-pods-to-pause': '101%',
        'sidecarset.dev/resumed-at': 'yesterday',
      }),
    );
    assert.equal(bad.enabled, true);
    assert.equal(bad.progressDeadlineSeconds, 600);
    assert.equal(bad.maxSidecarRestarts, 3);
    assert.equal(bad.unhealthyPodsToPause, '1');
    assert.equal(bad.resumedAt, undefined);
    assert.equal(bad.problems.length, 5);
    assert.match(
      bad.problems[0] ?? '',
      /health-gate: "maybe" is not valid \(must be "on" or "off"\); using on/,
    );
  });

  it('the threshold: a count, or a percentage of matched pods rounded up, at least 1', () => {
    assert.equal(pauseThreshold('3', 20), 3);
    assert.equal(pauseThreshold('10%', 20), 2);
    assert.equal(pauseThreshold('10%', 21), 3);
    assert.equal(pauseThreshold('1%', 5), 1);
  });
});

describe('the upgrade baseline', () => {
  it('is written with the upgrade: hash, time, readiness and restarts before', () => {
    const pod = upgraded(sidecarSet(), 0, 'pending');
    const baseline = readUpgradeBaselines(pod.metadata.annotations?.[UPGRADE_BASELINE])[SET];
    assert.deepEqual(baseline, {
      hash: 'bbb',
      upgradedAt: '2026-07-02T10:00:00Z',
      podReady: true,
      restarts: { [SIDECAR]: 2 },
    });
  });

  it('keeps other SidecarSets entries; unreadable values and entries are no record', () => {
    const other = { other: { hash: 'x', upgradedAt: '2026-01-01T00:00:00Z', restarts: {} } };
    const pod = upgradePod(0);
    pod.metadata.annotations = {
      ...pod.metadata.annotations,
      [UPGRADE_BASELINE]: JSON.stringify(other),
    };
    const ctx = sidecarSetContext(sidecarSet());
    const change = buildPodUpgrade(ctx, pod, [], T0, false);
    const all = readUpgradeBaselines(change.annotations[UPGRADE_BASELINE]);
    assert.deepEqual(Object.keys(all).sort(), ['other', SET]);
    assert.equal(all[SET]?.podReady, false);
    assert.deepEqual(readUpgradeBaselines('{'), {});
    assert.deepEqual(readUpgradeBaselines('[]'), {});
    assert.deepEqual(readUpgradeBaselines(''), {});
    assert.deepEqual(
      readUpgradeBaselines('{"a":1,"b":{"hash":"h","upgradedAt":"never"},"c":{"hash":1}}'),
      {},
    );
  });
});

describe('judgePod', () => {
  const ss = sidecarSet();
  const ctx = sidecarSetContext(ss);
  const settings = healthSettings(ss);
  const judge = (pod: Pod, at: Date) => judgePod(ctx, pod, settings, at);

  it('healthy once the new sidecar runs ready and the pod is Ready', () => {
    assert.equal(judge(upgraded(ss, 0, 'ready'), seconds(5))?.state, 'Healthy');
  });

  it('progressing before the deadline, failed after it, with what is wrong', () => {
    const pending = upgraded(ss, 0, 'pending');
    assert.equal(judge(pending, seconds(599))?.state, 'Progressing');
    const late = judge(pending, seconds(600));
    assert.ok(late?.state === 'Failed');
    assert.equal(late.failure, 'ImageNotRunning');
    assert.equal(
      late.message,
      `sidecar ${SIDECAR} does not run test-sidecar:v2 600s after the upgrade`,
    );
    const notReady = judge(upgraded(ss, 0, 'notReady'), seconds(601));
    assert.ok(notReady?.state === 'Failed');
    assert.equal(notReady.failure, 'SidecarNotReady');
    const podNotReady = judge(upgraded(ss, 0, 'podNotReady'), seconds(601));
    assert.ok(podNotReady?.state === 'Failed');
    assert.equal(podNotReady.failure, 'PodNotReady');
  });

  it('a pod that was not Ready before need not be Ready after, only its sidecar', () => {
    const pod = upgraded(ss, 0, 'podNotReady', { readyBefore: false });
    assert.equal(judge(pod, seconds(601))?.state, 'Healthy');
  });

  it('a crash loop fails at once: more restarts than tolerated since the upgrade', () => {
    // The in-place restart itself is not counted: 3 more tolerated, the 4th fails.
    assert.equal(
      judge(upgraded(ss, 0, 'notReady', { restartsAfter: 3 }), seconds(1))?.state,
      'Progressing',
    );
    const crash = judge(upgraded(ss, 0, 'notReady', { restartsAfter: 4 }), seconds(1));
    assert.ok(crash?.state === 'Failed');
    assert.equal(crash.failure, 'CrashLoop');
    assert.match(crash.message, /restarted 4 times since the upgrade/);
  });

  it('not judged: never upgraded, an older version, being deleted, or gone inactive', () => {
    assert.equal(judge(upgradePod(0, { done: true }), seconds(900)), undefined);
    const stale = upgraded(sidecarSet(), 0, 'pending');
    const next = upgradeSidecarSet();
    next.metadata.annotations = {
      ...next.metadata.annotations,
      'kruise.io/sidecarset-hash': 'ccc',
    };
    assert.equal(judgePod(sidecarSetContext(next), stale, settings, seconds(900)), undefined);
    const deleting = upgraded(ss, 0, 'pending');
    deleting.metadata.deletionTimestamp = '2026-07-02T10:01:00Z';
    assert.equal(judge(deleting, seconds(900)), undefined);
    const other = upgraded(ss, 0, 'pending');
    other.metadata.annotations = {
      ...other.metadata.annotations,
      [UPGRADE_BASELINE]: JSON.stringify({
        [SET]: { hash: 'old', upgradedAt: '2026-07-02T10:00:00Z' },
      }),
    };
    assert.equal(judge(other, seconds(900)), undefined);
  });
});

describe('hot upgrade', () => {
  it('the working slot is judged: the new image in the slot the upgrade made working', () => {
    const ss = hotSidecarSet('hot:2');
    const ctx = sidecarSetContext(ss);
    assert.deepEqual(judgedContainers(ctx, hotPod()), [{ name: 'hot-1', image: 'hot:2' }]);
    const before = hotPod();
    const pod = applied(applyPodUpgrade(before, buildPodUpgrade(ctx, before, [], T0)));
    assert.deepEqual(judgedContainers(ctx, pod), [{ name: 'hot-2', image: 'hot:2' }]);
    assert.equal(judgePod(ctx, pod, healthSettings(ss), seconds(1))?.state, 'Healthy');
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

describe('the RolloutPaused condition', () => {
  const ss = sidecarSet();
  const failing = rolloutHealth(
    sidecarSetContext(ss),
    [upgraded(ss, 0, 'notReady')],
    3,
    healthSettings(ss),
    seconds(600),
  );
  const healthy = rolloutHealth(sidecarSetContext(ss), [], 3, healthSettings(ss), seconds(600));

  it('True/UnhealthyPods with the message; unchanged stays undefined; then False/Resumed', () => {
    const paused = nextRolloutPausedConditions(
      undefined,
      { health: failing, userPaused: false, generation: 2 },
      T0,
    );
    assert.deepEqual(paused, [
      {
        type: ROLLOUT_PAUSED,
        status: 'True',
        reason: 'UnhealthyPods',
        message: failing.message,
        observedGeneration: 2,
        lastTransitionTime: '2026-07-02T10:00:00Z',
      },
    ]);
    assert.equal(
      nextRolloutPausedConditions(
        paused,
        { health: failing, userPaused: false, generation: 2 },
        seconds(5),
      ),
      undefined,
    );
    const resumed = nextRolloutPausedConditions(
      paused,
      { health: healthy, userPaused: false, generation: 2 },
      seconds(9),
    );
    const [condition] = resumed ?? [];
    assert.ok(condition);
    assert.equal(condition.status, 'False');
    assert.equal(condition.reason, 'Resumed');
    assert.equal(condition.lastTransitionTime, '2026-07-02T10:00:09Z');
    assert.equal(
      nextRolloutPausedConditions(
        resumed,
        { health: healthy, userPaused: false, generation: 2 },
        seconds(20),
      ),
      undefined,
    );
  });

  it("a user's pause shows as True/Paused; a never-paused SidecarSet gets no condition", () => {
    assert.equal(
      nextRolloutPausedConditions([], { health: healthy, userPaused: false, generation: 2 }, T0),
      undefined,
    );
    const user = nextRolloutPausedConditions(
      [{ type: 'Other', status: 'True' }],
      { health: undefined, userPaused: true, generation: 2 },
      T0,
    );
    assert.deepEqual(
      user?.map((c) => [c.type, c.status, c.reason]),
      [
        ['Other', 'True', undefined],
        [ROLLOUT_PAUSED, 'True', 'Paused'],
      ],
    );
    const lifted = nextRolloutPausedConditions(
      user,
      { health: healthy, userPaused: false, generation: 2 },
      seconds(1),
    );
    assert.equal(lifted?.[1]?.message, 'updateStrategy.paused is false');
    // The status stays True from a user's pause to an automatic one: the time is kept.
    const both = nextRolloutPausedConditions(
      user,
      { health: failing, userPaused: true, generation: 2 },
      seconds(2),
    );
    const [, automatic] = both ?? [];
    assert.ok(automatic);
    assert.equal(automatic.reason, 'UnhealthyPods');
    assert.equal(automatic.lastTransitionTime, '2026-07-02T10:00:00Z');
  });

  it('rolloutPause: the automatic pause first, then the user pause, else not paused', () => {
    const conditions = nextRolloutPausedConditions(
      undefined,
      { health: failing, userPaused: false, generation: 2 },
      T0,
    );
    const auto = { ...ss, status: { conditions: conditions ?? [] } };
    assert.deepEqual(rolloutPause(auto), {
      paused: true,
      by: 'health',
      reason: 'UnhealthyPods',
      message: failing.message,
      since: '2026-07-02T10:00:00Z',
    });
    const user = upgradeSidecarSet({ paused: true });
    assert.deepEqual(rolloutPause(user), {
      paused: true,
      by: 'user',
      message: 'updateStrategy.paused is true',
    });
    assert.deepEqual(rolloutPause(ss), { paused: false });
  });
});
