import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { SidecarSetCondition } from '../../../src/core/api/sidecarset-types.js';
import {
  nextRevisionFailureConditions,
  revisionFailureMessage,
  revisionHistoryFailure,
} from '../../../src/core/status/revision-failure-condition.js';

const NOW = new Date('2026-12-07T12:00:00Z');
const READY: SidecarSetCondition = { type: 'Ready', status: 'True', reason: 'Current' };

test('set while recording fails, its first time kept while the message stays', () => {
  const message = revisionFailureMessage(new Error('namespaces "x" not found (HTTP 404)'));
  assert.match(message, /^cannot record the ControllerRevision: namespaces "x" not found/);
  const set = nextRevisionFailureConditions([READY], message, NOW);
  assert.deepEqual(set, [
    READY,
    {
      type: 'RevisionHistoryFailure',
      status: 'True',
      reason: 'CannotRecordRevision',
      message,
      lastTransitionTime: '2026-12-07T12:00:00Z',
    },
  ]);
  assert.equal(revisionHistoryFailure(set), message);
  assert.equal(
    nextRevisionFailureConditions(set, message, new Date('2026-12-08T00:00:00Z')),
    undefined,
  );
  const other = nextRevisionFailureConditions(set, 'forbidden', new Date('2026-12-08T00:00:00Z'));
  const changed = other?.find((c) => c.type === 'RevisionHistoryFailure');
  assert.equal(changed?.lastTransitionTime, '2026-12-07T12:00:00Z');
  assert.equal(changed.message, 'forbidden');
});

test('removed once recording works; nothing to change when it was not there', () => {
  const set = nextRevisionFailureConditions([READY], 'forbidden', NOW);
  assert.deepEqual(nextRevisionFailureConditions(set, undefined, NOW), [READY]);
  assert.equal(nextRevisionFailureConditions([READY], undefined, NOW), undefined);
  assert.equal(revisionHistoryFailure([READY]), undefined);
});
