/** The PodUpdateFailure condition (src/core/status/update-failure-condition.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { SidecarSetCondition } from '../../../src/core/api/sidecarset-types.js';
import {
  nextUpdateFailureConditions,
  podUpdateFailure,
} from '../../../src/core/status/update-failure-condition.js';

const now = new Date('2026-07-02T10:00:00Z');
const later = new Date('2026-07-02T10:05:00Z');
const ready: SidecarSetCondition = { type: 'Ready', status: 'False', reason: 'Progressing' };
const failed = { failed: true as const, message: 'updating pod default/web-0 failed: denied' };

describe('PodUpdateFailure', () => {
  it('is set True with the failure, beside the other conditions', () => {
    const next = nextUpdateFailureConditions([ready], { outcome: failed, complete: false }, now);
    assert.deepEqual(next, [
      ready,
      {
        type: 'PodUpdateFailure',
        status: 'True',
        reason: 'FailedUpdate',
        message: failed.message,
        lastTransitionTime: '2026-07-02T10:00:00Z',
      },
    ]);
    assert.equal(podUpdateFailure(next), failed.message);
  });

  it('keeps its transition time when the message changes, and needs no write when it does not', () => {
    const first = nextUpdateFailureConditions([], { outcome: failed, complete: false }, now);
    const again = nextUpdateFailureConditions(first, { outcome: failed, complete: false }, later);
    assert.equal(again, undefined);
    const other = { failed: true as const, message: 'updating pod default/web-1 failed: denied' };
    const changed = nextUpdateFailureConditions(first, { outcome: other, complete: false }, later);
    const [condition] = changed ?? [];
    assert.equal(condition?.lastTransitionTime, '2026-07-02T10:00:00Z');
    assert.equal(condition.message, other.message);
  });

  it('is removed once writes go through or the rollout is complete', () => {
    const set = nextUpdateFailureConditions([ready], { outcome: failed, complete: false }, now);
    const ok = { failed: false as const };
    assert.deepEqual(nextUpdateFailureConditions(set, { outcome: ok, complete: false }, later), [
      ready,
    ]);
    assert.deepEqual(
      nextUpdateFailureConditions(set, { outcome: undefined, complete: true }, later),
      [ready],
    );
    assert.equal(
      nextUpdateFailureConditions([ready], { outcome: ok, complete: false }, later),
      undefined,
    );
  });

  it('is kept as stored by a process that has not written to pods yet (a new leader)', () => {
    const set = nextUpdateFailureConditions([], { outcome: failed, complete: false }, now);
    assert.equal(
      nextUpdateFailureConditions(set, { outcome: undefined, complete: false }, later),
      undefined,
    );
    assert.equal(podUpdateFailure(set), failed.message);
  });
});
