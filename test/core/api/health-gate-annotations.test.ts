/** healthSettings, read from annotations (src/core/api/health-gate-annotations.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { healthSettings } from '../../../src/core/api/health-gate-annotations.js';
import { seconds, sidecarSet } from '../../support/health-gate.js';

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
});
