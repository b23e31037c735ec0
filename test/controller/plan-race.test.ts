/**
 * A round's plan against the changes that arrive while its writes wait (issue 37, point 8): a pod
 * that becomes available between the plan and a retried write now costs the budget the plan did
 * not count, so the write is left to the next plan; a conflict is not a failure of the rollout;
 * a status computed from a SidecarSet that has changed since is refused, and the round stops.
 * Plain caches, a writer that records what it is asked.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ReconcileDeps } from '../../src/controller/reconcile.js';
import { reconcileSidecarSet } from '../../src/controller/reconcile.js';
import type { ClusterWriter } from '../../src/controller/ports.js';
import { ConflictError } from '../../src/controller/ports.js';
import type { Pod } from '../../src/core/api/k8s-types.js';
import { ANY_NAMESPACE } from '../../src/core/matching/match.js';
import { reconcileDeps } from '../support/reconcile-deps.js';
import { SET, upgradePod, upgradeSidecarSet } from '../support/upgrade-pods.js';

/**
 * One round over `pods`; pod-1's first patch meets a 409, and reading it then gives `fresh`.
 * `writer` replaces some of the writer's calls.
 */
function round(
  pods: Pod[],
  fresh: Pod,
  writer: Partial<ClusterWriter> = {},
): { deps: ReconcileDeps; calls: string[] } {
  const calls: string[] = [];
  let conflicted = false;
  const recorder: ClusterWriter = {
    getPod: (_namespace, name) => {
      calls.push(`get ${name}`);
      return Promise.resolve(name === fresh.metadata.name ? fresh : undefined);
    },
    patchPod: (_namespace, name) => {
      if (name === 'pod-1' && !conflicted) {
        conflicted = true;
        calls.push(`conflict ${name}`);
        return Promise.reject(new ConflictError('the object has been modified'));
      }
      calls.push(`patch ${name}`);
      return Promise.resolve();
    },
    canResizePods: () => Promise.resolve(true),
    resizePod: () => Promise.resolve(),
    evictPod: () => Promise.resolve(false),
    setPodConditions: () => Promise.resolve(),
    writeSidecarSetStatus: () => Promise.resolve(),
    event: (_about, type, reason) => {
      calls.push(`event ${type} ${reason}`);
      return Promise.resolve();
    },
    ...writer,
  };
  const ss = upgradeSidecarSet({ maxUnavailable: 1 });
  const view = {
    sidecarSet: (name: string) => (name === SET ? ss : undefined),
    podsInjectedBy: () => pods,
    namespaces: ANY_NAMESPACE,
  };
  return { deps: reconcileDeps(view, recorder), calls };
}

/** The calls but events, sorted: the pods are written concurrently. */
const writes = (calls: readonly string[]): string[] =>
  calls.filter((c) => !c.startsWith('event')).sort();

describe('a plan racing its writes', () => {
  it('a pod that turned available before its retried write is left to the next plan', async () => {
    // maxUnavailable 1: pod-0 (ready) takes the slot; pod-1 (not ready) costs nothing.
    const pods = [upgradePod(0), upgradePod(1, { ready: false })];
    const { deps, calls } = round(pods, upgradePod(1));
    const result = await reconcileSidecarSet(SET, deps, new AbortController().signal);
    assert.deepEqual(
      writes(calls),
      ['conflict pod-1', 'get pod-1', 'patch pod-0'],
      'pod-1, ready now, is not written: two pods would be down',
    );
    assert.deepEqual(result, { requeueAfterMs: 1000 }, 'the next plan comes soon');
    assert.equal(deps.podWrites.get(SET)?.failed, false, 'a race is not a failed update');
    assert.ok(!calls.some((c) => c.startsWith('event Warning')), calls.join());
  });

  it('a pod still costing what the plan counted is written on the retry', async () => {
    const pods = [upgradePod(0), upgradePod(1, { ready: false })];
    const { deps, calls } = round(pods, upgradePod(1, { ready: false }));
    const result = await reconcileSidecarSet(SET, deps, new AbortController().signal);
    assert.deepEqual(writes(calls), ['conflict pod-1', 'get pod-1', 'patch pod-0', 'patch pod-1']);
    assert.deepEqual(result, {});
  });

  it('a status computed from a SidecarSet that changed since is not written, nor is any pod', async () => {
    const pods = [upgradePod(0), upgradePod(1, { ready: false })];
    const { deps, calls } = round(pods, upgradePod(1), {
      writeSidecarSetStatus: () =>
        Promise.reject(new ConflictError('the object has been modified')),
    });
    const result = await reconcileSidecarSet(SET, deps, new AbortController().signal);
    assert.deepEqual(writes(calls), []);
    assert.deepEqual(result, { requeueAfterMs: 1000 });
  });
});
