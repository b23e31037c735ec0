import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { PodCondition } from '../../../src/core/api/k8s-types.js';
import { nextUpgradableCondition } from '../../../src/core/status/upgradable-condition.js';

const now = new Date('2026-07-02T10:00:00Z');
const later = new Date('2026-07-02T11:00:00Z');

describe('nextUpgradableCondition', () => {
  it('creates the condition', () => {
    assert.deepEqual(nextUpgradableCondition(undefined, 's', false, now), {
      type: 'SidecarSetUpgradable',
      status: 'False',
      reason: 'UpdateImmutableField',
      message: '{"s":false}',
      lastTransitionTime: '2026-07-02T10:00:00Z',
    });
  });

  it('a pod without the condition gets none to say it is upgradable (one write per upgrade)', () => {
    assert.equal(nextUpgradableCondition(undefined, 's', true, now), undefined);
    assert.equal(nextUpgradableCondition([], 's', true, now), undefined);
  });

  it('is True only when every SidecarSet is upgradable; transition time moves with the status', () => {
    const first: PodCondition = {
      type: 'SidecarSetUpgradable',
      status: 'True',
      reason: 'AllSidecarsetUpgradable',
      message: '{"b":true}',
      lastTransitionTime: '2026-07-02T10:00:00Z',
    };
    const second = nextUpgradableCondition([first], 'a', false, later);
    assert.deepEqual(second, {
      type: 'SidecarSetUpgradable',
      status: 'False',
      reason: 'UpdateImmutableField',
      message: '{"a":false,"b":true}',
      lastTransitionTime: '2026-07-02T11:00:00Z',
    });
    const third = nextUpgradableCondition([second], 'b', true, later);
    assert.equal(third, undefined, 'unchanged entry, no write');
    const fourth = nextUpgradableCondition([second], 'a', true, new Date('2026-07-03T00:00:00Z'));
    assert.equal(fourth?.status, 'True');
    assert.equal(fourth.reason, 'AllSidecarsetUpgradable');
  });

  it('keeps the transition time when the status stays', () => {
    const existing: PodCondition = {
      type: 'SidecarSetUpgradable',
      status: 'True',
      message: '{"a":true}',
      lastTransitionTime: 'T0',
    };
    assert.equal(nextUpgradableCondition([existing], 'b', true, now)?.lastTransitionTime, 'T0');
  });

  it('reads a garbage message as empty', () => {
    const existing: PodCondition = {
      type: 'SidecarSetUpgradable',
      status: 'True',
      message: 'not json',
    };
    assert.equal(nextUpgradableCondition([existing], 'a', true, now)?.message, '{"a":true}');
    const list: PodCondition = { type: 'SidecarSetUpgradable', status: 'True', message: '[1]' };
    assert.equal(nextUpgradableCondition([list], 'a', true, now)?.message, '{"a":true}');
  });
});
