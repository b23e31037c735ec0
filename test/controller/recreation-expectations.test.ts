/**
 * Evictions awaiting their replacement (src/controller/recreation-expectations.ts): counted from
 * when the pod is gone until a new pod of its controller shows, or five minutes pass.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Pod } from '../../src/core/api/k8s-types.js';
import { createRecreationExpectations } from '../../src/controller/recreation-expectations.js';
import { makePod } from '../support/factories.js';

const T0 = new Date('2026-12-07T12:00:00Z');
const later = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);

function owned(name: string, uid: string, owner = 'db'): Pod {
  const pod = makePod({ name, namespace: 'shop', labels: { app: 'db' } });
  pod.metadata.uid = uid;
  pod.metadata.ownerReferences = [
    {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      name: owner,
      uid: `${owner}-uid`,
      controller: true,
    },
  ];
  return pod;
}

describe('createRecreationExpectations', () => {
  it('counts an eviction from when its pod is gone until a new pod of its controller shows', () => {
    const expectations = createRecreationExpectations();
    const [db0, db1] = [owned('db-0', 'u0'), owned('db-1', 'u1')];
    expectations.evicted('agent', db0, [db0, db1], T0);
    const deleting: Pod = {
      ...db0,
      metadata: { ...db0.metadata, deletionTimestamp: '2026-12-07T12:00:00Z' },
    };
    assert.equal(
      expectations.awaiting('agent', [deleting, db1], later(1)),
      0,
      'terminating: counted by the plan',
    );
    const stopped: Pod = { ...deleting, status: { ...deleting.status, phase: 'Succeeded' } };
    assert.equal(
      expectations.awaiting('agent', [stopped, db1], later(1)),
      1,
      'its containers stopped, not yet removed: the plan no longer counts it',
    );
    assert.equal(expectations.awaiting('agent', [db1], later(2)), 1, 'gone, not replaced');
    const other = owned('cache-0', 'c0', 'cache');
    assert.equal(
      expectations.awaiting('agent', [db1, other], later(3)),
      1,
      'another controller’s pod',
    );
    assert.equal(expectations.awaiting('other', [db1], later(3)), 0, 'per SidecarSet');
    const replacement = owned('db-0', 'u0b');
    assert.equal(expectations.awaiting('agent', [replacement, db1], later(4)), 0, 'replaced');
    assert.equal(expectations.awaiting('agent', [db1], later(5)), 0, 'and forgotten');
  });

  it('one new pod replaces one eviction; a pod never replaced stops counting after 5 minutes', () => {
    const expectations = createRecreationExpectations();
    const [db0, db1, db2] = [owned('db-0', 'u0'), owned('db-1', 'u1'), owned('db-2', 'u2')];
    expectations.evicted('agent', db0, [db0, db1, db2], T0);
    expectations.evicted('agent', db1, [db0, db1, db2], later(1));
    assert.equal(expectations.awaiting('agent', [db2], later(2)), 2);
    assert.equal(expectations.awaiting('agent', [owned('db-0', 'u0b'), db2], later(3)), 1);
    assert.equal(expectations.awaiting('agent', [db2], later(299)), 1);
    assert.equal(expectations.awaiting('agent', [db2], later(302)), 0);
  });

  it('a pod without a controller is not expected back', () => {
    const expectations = createRecreationExpectations();
    const bare = makePod({ name: 'bare', namespace: 'shop' });
    expectations.evicted('agent', bare, [bare], T0);
    assert.equal(expectations.awaiting('agent', [], later(1)), 0);
  });
});
