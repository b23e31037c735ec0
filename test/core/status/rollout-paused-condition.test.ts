/** The RolloutPaused condition and rolloutPause (src/core/status/rollout-paused-condition.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { healthSettings } from '../../../src/core/api/health-gate-annotations.js';
import { ROLLOUT_PAUSED } from '../../../src/core/api/sidecarset-types.js';
import {
  nextRolloutPausedConditions,
  rolloutPause,
} from '../../../src/core/status/rollout-paused-condition.js';
import { sidecarSetContext } from '../../../src/core/upgrade/context.js';
import { rolloutHealth } from '../../../src/core/upgrade/rollout-health.js';
import { T0, seconds, sidecarSet, upgraded } from '../../support/health-gate.js';
import { upgradeSidecarSet } from '../../support/upgrade-pods.js';

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
