import assert from 'node:assert/strict';
import { test } from 'node:test';

import { planOutdated } from '../../../src/core/upgrade/plan-outdated.js';
import type { SidecarSet } from '../../../src/core/api/sidecarset-types.js';
import { makeSidecarSet } from '../../support/factories.js';

const planned = (): SidecarSet => {
  const ss = makeSidecarSet('agent');
  ss.metadata.uid = 'u-1';
  ss.metadata.generation = 4;
  return ss;
};

test('the plan holds while the SidecarSet keeps its uid and generation', () => {
  const current = planned();
  current.metadata.resourceVersion = '99'; // a status write
  current.status = { matchedPods: 3, updatedPods: 1, readyPods: 3 };
  assert.equal(planOutdated(planned(), current), undefined);
});

test('a spec change (paused, partition, selector), a deletion or a new object ends it', () => {
  const changed = planned();
  changed.metadata.generation = 5;
  assert.equal(planOutdated(planned(), changed), "the SidecarSet's spec changed (generation 5)");
  const deleting = planned();
  deleting.metadata.deletionTimestamp = '2026-12-07T12:00:00Z';
  assert.equal(planOutdated(planned(), deleting), 'the SidecarSet is being deleted');
  assert.equal(planOutdated(planned(), undefined), 'the SidecarSet was deleted');
  const recreated = planned();
  recreated.metadata.uid = 'u-2';
  assert.equal(planOutdated(planned(), recreated), 'the SidecarSet was deleted');
});
