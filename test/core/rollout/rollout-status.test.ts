import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ANY_NAMESPACE } from '../../../src/core/matching/match.js';
import type {
  SidecarSet,
  SidecarSetUpdateStrategy,
} from '../../../src/core/api/sidecarset-types.js';
import { buildPodUpgrade } from '../../../src/core/upgrade/change.js';
import { applyPodUpgrade } from '../../../src/core/rollout/simulate.js';
import { sidecarSetContext } from '../../../src/core/upgrade/context.js';
import { rolloutStatus } from '../../../src/core/rollout/rollout-status.js';
import { podFleet, upgradePod, upgradeSidecarSet } from '../../support/upgrade-pods.js';

const now = new Date('2026-01-01T00:01:00Z');

function status(strategy: SidecarSetUpdateStrategy, pods = podFleet(4), ss?: SidecarSet) {
  return rolloutStatus(ss ?? upgradeSidecarSet(strategy), pods, ANY_NAMESPACE, now);
}

describe('rolloutStatus', () => {
  it('a rollout under way: the counts, this round, and the pods the budget holds back', () => {
    const s = status({ maxUnavailable: 1 });
    assert.equal(s.phase, 'Progressing');
    assert.equal(s.done, false);
    assert.equal(
      s.summary,
      'Waiting for SidecarSet "test-sidecarset" rollout to finish: 0 of 4 pods updated, 0 updated and ready',
    );
    assert.equal(s.plan.upgrade.length, 1);
    assert.deepEqual(
      s.held.map((h) => [h.reason, h.pods.length]),
      [['MaxUnavailable', 3]],
    );
    assert.match(s.held[0]?.message ?? '', /1 pods may be unavailable at once/);
    assert.deepEqual(s.pause, { paused: false });
  });

  it('done when every matched pod is updated and ready', () => {
    const s = status({}, podFleet(3, 3, 3));
    assert.equal(s.phase, 'Complete');
    assert.equal(s.done, true);
    assert.equal(
      s.summary,
      'SidecarSet "test-sidecarset" successfully rolled out: 3 of 3 pods updated, 3 updated and ready',
    );
    assert.deepEqual(s.held, []);
  });

  it('not done while an updated pod is not ready yet', () => {
    const s = status({}, podFleet(3, 3, 2));
    assert.equal(s.phase, 'Progressing');
    assert.equal(s.done, false);
  });

  it('done up to the partition: the rest is kept on the old version on purpose', () => {
    const s = status({ partition: 2, maxUnavailable: 4 }, podFleet(4, 2, 2));
    assert.equal(s.phase, 'PartitionComplete');
    assert.equal(s.done, true);
    assert.match(s.summary, /^partitioned roll out complete: 2 of 4 pods updated.*keeps 2/);
  });

  it("paused by a user: every outdated pod held, resume's hint given", () => {
    const s = status({ paused: true });
    assert.equal(s.phase, 'Paused');
    assert.deepEqual(s.pause, {
      paused: true,
      by: 'user',
      message: 'updateStrategy.paused is true',
    });
    assert.match(s.summary, /paused by spec.updateStrategy.paused \(sidecarset rollout resume/);
    assert.deepEqual(
      s.held.map((h) => [h.reason, h.pods.length]),
      [['Paused', 4]],
    );
  });

  it("paused by the controller: the RolloutPaused condition's message", () => {
    const ss = upgradeSidecarSet({});
    ss.status = {
      conditions: [
        {
          type: 'RolloutPaused',
          status: 'True',
          reason: 'UnhealthyPods',
          message: '1 upgraded pod(s) failed',
          lastTransitionTime: '2026-01-01T00:00:30Z',
        },
      ],
    };
    const s = status({}, podFleet(4), ss);
    assert.equal(s.phase, 'Paused');
    assert.ok(s.pause.paused && s.pause.by === 'health');
    assert.equal(s.pause.message, '1 upgraded pod(s) failed');
    assert.match(s.summary, /paused by the controller: failed upgraded pods/);
  });

  it('paused by the health gate the planner computes, before the controller wrote its condition', () => {
    const ss = upgradeSidecarSet({ maxUnavailable: 4 });
    const at = new Date('2026-01-01T00:00:00Z');
    // pod-0 upgraded in place (as the controller writes it), never ready: failed after the deadline.
    const before = upgradePod(0);
    const failed = applyPodUpgrade(before, buildPodUpgrade(sidecarSetContext(ss), before, [], at));
    const sidecar = failed.status?.containerStatuses?.[0];
    assert.ok(sidecar);
    Object.assign(sidecar, { image: 'test-sidecar:v2', imageID: 'sha256:2222', ready: false });
    const pods = [failed, upgradePod(1), upgradePod(2)];
    const s = rolloutStatus(ss, pods, ANY_NAMESPACE, new Date('2026-01-01T01:00:00Z'));
    assert.equal(s.plan.stopped, 'UnhealthyPods');
    assert.equal(s.phase, 'Paused');
    assert.deepEqual(s.pause, { paused: false });
    assert.match(s.summary, /paused by the controller: failed upgraded pods/);
    assert.deepEqual(
      s.held.map((h) => [h.reason, h.pods.length]),
      [['UnhealthyPods', 2]],
    );
  });

  it('NotUpdate: nothing will move', () => {
    const s = status({ type: 'NotUpdate' });
    assert.equal(s.phase, 'NotUpdate');
    assert.equal(s.done, false);
    assert.match(s.summary, /does not update pods \(updateStrategy.type is NotUpdate\)/);
  });

  it('says when the controller has not seen the latest spec', () => {
    const ss = upgradeSidecarSet({});
    assert.equal(status({}, podFleet(1), ss).specNotObserved, true);
    ss.status = { observedGeneration: 1 };
    assert.equal(status({}, podFleet(1), ss).specNotObserved, true);
    ss.status = { observedGeneration: 2 };
    assert.equal(status({}, podFleet(1), ss).specNotObserved, false);
    delete ss.metadata.generation;
    assert.equal(status({}, podFleet(1), ss).specNotObserved, false);
  });

  it('says why the API server refuses pod updates (condition PodUpdateFailure)', () => {
    const ss = upgradeSidecarSet({});
    assert.equal(status({}, podFleet(1), ss).updateFailure, undefined);
    const message = 'updating pod default/pod-0 failed: denied by policy';
    ss.status = {
      conditions: [{ type: 'PodUpdateFailure', status: 'True', reason: 'FailedUpdate', message }],
    };
    assert.equal(status({}, podFleet(1), ss).updateFailure, message);
  });

  it('counts only the pods the SidecarSet matches', () => {
    const other = upgradePod(9, { labels: { app: 'other' } });
    const s = status({ maxUnavailable: 10 }, [...podFleet(2), other]);
    assert.equal(s.plan.status.matchedPods, 2);
  });

  it('groups held pods by reason and message', () => {
    const pods = [...podFleet(2), upgradePod(5, { labels: { app: 'web', canary: 'no' } })];
    const s = status({ maxUnavailable: 1, selector: { matchLabels: { canary: 'yes' } } }, pods);
    assert.deepEqual(
      s.held.map((h) => [h.reason, h.pods.map((p) => p.name)]),
      [['NotSelected', ['pod-0', 'pod-1', 'pod-5']]],
    );
  });
});
