/** judgePod: the health of upgraded pods, hot slots too (src/core/upgrade/health-judge.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Pod } from '../../../src/core/api/k8s-types.js';
import { healthSettings } from '../../../src/core/api/health-gate-annotations.js';
import { UPGRADE_BASELINE } from '../../../src/core/pod-annotations/upgrade-baseline.js';
import { applyPodUpgrade } from '../../../src/core/rollout/simulate.js';
import { buildPodUpgrade } from '../../../src/core/upgrade/change.js';
import { sidecarSetContext } from '../../../src/core/upgrade/context.js';
import { judgePod, judgedContainers } from '../../../src/core/upgrade/health-judge.js';
import { T0, seconds, sidecarSet, upgraded } from '../../support/health-gate.js';
import {
  SET,
  SIDECAR,
  applied,
  hotPod,
  hotSidecarSet,
  upgradePod,
  upgradeSidecarSet,
} from '../../support/upgrade-pods.js';

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
