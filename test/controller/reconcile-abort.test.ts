/**
 * A round whose leadership ends while it waits writes no status and reports nothing to the
 * metrics: the new leader owns both. Plain caches, a writer that records what it is asked.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ReconcileDeps } from '../../src/controller/reconcile.js';
import { reconcileSidecarSet } from '../../src/controller/reconcile.js';
import type { RegisteredRevision } from '../../src/controller/revisions.js';
import type { ClusterWriter } from '../../src/controller/ports.js';
import { ANY_NAMESPACE } from '../../src/core/matching/match.js';
import { reconcileDeps } from '../support/reconcile-deps.js';
import { makeSidecarSet } from '../support/factories.js';

function round(registerRevision: () => Promise<RegisteredRevision>): {
  deps: ReconcileDeps;
  calls: string[];
} {
  const calls: string[] = [];
  const writer: ClusterWriter = {
    getPod: () => Promise.resolve(undefined),
    patchPod: () => Promise.resolve(),
    canResizePods: () => Promise.resolve(true),
    resizePod: () => Promise.resolve(),
    evictPod: () => Promise.resolve(false),
    setPodConditions: () => Promise.resolve(),
    writeSidecarSetStatus: (name) => {
      calls.push(`status ${name}`);
      return Promise.resolve();
    },
    event: (_about, _type, reason) => {
      calls.push(`event ${reason}`);
      return Promise.resolve();
    },
  };
  const ss = makeSidecarSet('agent');
  const view = {
    sidecarSet: (name: string) => (name === 'agent' ? ss : undefined),
    podsInjectedBy: () => [],
    namespaces: ANY_NAMESPACE,
  };
  const deps = reconcileDeps(view, writer, {
    observer: {
      status: (name, status) => calls.push(`observed status ${name} ${status ? 'set' : 'gone'}`),
      rolloutPaused: (name) => calls.push(`observed paused ${name}`),
    },
    registerRevision,
  });
  return { deps, calls };
}

const revision: RegisteredRevision = { latestRevision: 'agent-1', collisionCount: 0 };

describe('reconcileSidecarSet and the end of leadership', () => {
  it('a round that keeps its leadership writes the status and reports it', async () => {
    const { deps, calls } = round(() => Promise.resolve(revision));
    await reconcileSidecarSet('agent', deps, new AbortController().signal);
    assert.deepEqual(calls, ['status agent', 'observed status agent set', 'observed paused agent']);
  });

  it('a round whose leadership ends while it waits writes and reports nothing', async () => {
    const leadership = new AbortController();
    const { deps, calls } = round(() => {
      leadership.abort(new Error('lease lost'));
      return Promise.resolve(revision);
    });
    await assert.rejects(reconcileSidecarSet('agent', deps, leadership.signal), /lease lost/);
    assert.deepEqual(calls, []);
  });

  it('a round started after the end reports no deleted SidecarSet either', async () => {
    const leadership = new AbortController();
    leadership.abort(new Error('lease lost'));
    const { deps, calls } = round(() => Promise.resolve(revision));
    await assert.rejects(reconcileSidecarSet('gone', deps, leadership.signal), /lease lost/);
    assert.deepEqual(calls, []);
  });
});
