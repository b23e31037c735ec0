/**
 * Recreation through evictions (docs/adr/0024-recreation-through-evictions.md): with the opt-in
 * annotation, pods whose sidecars cannot change in place are evicted under the same strategy rules
 * as in-place upgrades; their replacements are judged by the health gate.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Pod } from '../../../src/core/api/k8s-types.js';
import { simulateRollout } from '../../../src/core/rollout/simulate.js';
import { rolloutState } from '../../../src/core/status/status-conditions.js';
import { planUpgrade } from '../../../src/core/upgrade/plan.js';
import { RECREATE_PODS } from '../../../src/core/api/annotations.js';
import { EVICTION_REFUSED, withRefusal } from '../../../src/core/pod-annotations/refusals.js';
import type { Version } from '../../support/injected-pods.js';
import { injected, now, ownedPod, sidecarSet } from '../../support/injected-pods.js';

const optIn = { [RECREATE_PODS]: 'true' };
const v1 = sidecarSet();

/** v1 with another env value (not changeable in place); recreation as given. */
function envChange(recreate: boolean, v: Version = {}) {
  return sidecarSet({
    env: 'b',
    ...v,
    annotations: { ...(recreate ? optIn : {}), ...v.annotations },
  });
}

/** A pod injected with v1 whose ReplicaSet recreates it. */
function owned(i: number, labels: Record<string, string> = {}): Pod {
  return ownedPod(i, v1, labels);
}

/** The replacement of pod `i`: injected with `ss`, created now, not ready yet. */
function replacement(i: number, ss = envChange(true)): Pod {
  const pod = injected(i, ss);
  pod.metadata.name = `web-${i}-new`;
  pod.metadata.uid = `uid-${i}-new`;
  pod.metadata.creationTimestamp = now.toISOString().replace('.000Z', 'Z');
  const ready = pod.status?.conditions?.[0];
  if (ready !== undefined) ready.status = 'False';
  return pod;
}

function terminating(pod: Pod): Pod {
  return { ...pod, metadata: { ...pod.metadata, deletionTimestamp: '2026-07-02T09:59:00Z' } };
}

const names = (refs: readonly { pod: { name: string } }[]): string[] => refs.map((r) => r.pod.name);

describe('recreation through evictions', () => {
  const pods = [0, 1, 2, 3].map((i) => owned(i));

  it('is off by default: an env change leaves pods not upgradable', () => {
    const plan = planUpgrade(envChange(false), pods, { now });
    assert.deepEqual(plan.recreate, []);
    assert.equal(plan.notUpgradable.length, 4);
    assert.match(plan.notUpgradable[0]?.message ?? '', /until recreated$/);
  });

  it('opted in, recreates maxUnavailable pods at a time, naming their controller', () => {
    const plan = planUpgrade(envChange(true), pods, { now });
    assert.deepEqual(names(plan.recreate), ['web-0', 'web-1']);
    assert.deepEqual(plan.upgrade, []);
    assert.deepEqual(plan.notUpgradable, []);
    assert.equal(plan.recreate[0]?.controller, 'ReplicaSet/web-5d8f');
    assert.equal(plan.recreate[0].pod.uid, 'uid-0');
    assert.match(plan.recreate[0].message, /other than image changed/);
    assert.deepEqual(
      plan.held.map((h) => [h.pod.name, h.reason]),
      [
        ['web-2', 'MaxUnavailable'],
        ['web-3', 'MaxUnavailable'],
      ],
    );
    assert.equal(plan.budget.unavailableAfter, 2);
  });

  it('an image change together with the env change recreates too: one change, not two', () => {
    const plan = planUpgrade(envChange(true, { image: 'proxy:2' }), pods, { now });
    assert.deepEqual(names(plan.recreate), ['web-0', 'web-1']);
    assert.deepEqual(plan.upgrade, []);
  });

  it('a pod without a controller is never evicted: it stays not upgradable, with the reason', () => {
    const bare = injected(9, v1);
    const plan = planUpgrade(envChange(true), [bare, ...pods.slice(0, 1)], { now });
    assert.deepEqual(names(plan.recreate), ['web-0']);
    assert.deepEqual(names(plan.notUpgradable), ['web-9']);
    assert.match(plan.notUpgradable[0]?.message ?? '', /no controller recreates the pod$/);
  });

  it("a Job's pod (restartPolicy Never or OnFailure) is not evicted: it would fail its work", () => {
    const job = owned(6);
    job.spec.restartPolicy = 'OnFailure';
    const plan = planUpgrade(envChange(true), [job], { now });
    assert.deepEqual(plan.recreate, []);
    assert.match(plan.notUpgradable[0]?.message ?? '', /restartPolicy OnFailure\) is not evicted$/);
  });

  it('a pod owned without controller: true is not recreated either', () => {
    const pod = owned(5);
    pod.metadata.ownerReferences = [{ kind: 'ReplicaSet', name: 'web-5d8f' }];
    const plan = planUpgrade(envChange(true), [pod], { now });
    assert.deepEqual(plan.recreate, []);
    assert.deepEqual(names(plan.notUpgradable), ['web-5']);
  });

  it('the partition, the canary selector and paused apply as to in-place upgrades', () => {
    const mixed = [owned(0, { canary: 'true' }), owned(1), owned(2, { canary: 'true' })];
    const strategy = { partition: 1, selector: { matchLabels: { canary: 'true' } } };
    const plan = planUpgrade(envChange(true, { strategy }), mixed, { now });
    assert.deepEqual(names(plan.recreate), ['web-0']);
    assert.deepEqual(
      plan.held.map((h) => [h.pod.name, h.reason]),
      [
        ['web-2', 'Partition'],
        ['web-1', 'NotSelected'],
      ],
    );
    const paused = planUpgrade(envChange(true, { strategy: { paused: true } }), pods, { now });
    assert.deepEqual(paused.recreate, []);
    assert.equal(paused.stopped, 'Paused');
  });

  it('evicted pods not yet replaced, and replacements not yet ready, use the budget', () => {
    const ss = envChange(true);
    const evicting = [terminating(pods[0] as Pod), terminating(pods[1] as Pod)];
    const waiting = planUpgrade(ss, [...evicting, ...pods.slice(2)], { now });
    assert.equal(waiting.budget.unavailable, 2);
    assert.deepEqual(waiting.recreate, []);
    assert.deepEqual(
      waiting.excluded.map((e) => [e.pod.name, e.reason]),
      [
        ['web-0', 'Recreating'],
        ['web-1', 'Recreating'],
      ],
    );

    const replaced = [replacement(0, ss), replacement(1, ss), ...pods.slice(2)];
    const starting = planUpgrade(ss, replaced, { now });
    assert.equal(starting.budget.unavailable, 2);
    assert.deepEqual(starting.recreate, []);

    for (const pod of replaced.slice(0, 2)) {
      const ready = pod.status?.conditions?.[0];
      if (ready !== undefined) ready.status = 'True';
    }
    const next = planUpgrade(ss, replaced, { now });
    assert.equal(next.budget.unavailable, 0);
    assert.deepEqual(names(next.recreate), ['web-2', 'web-3']);
    assert.equal(next.status.updatedPods, 2);
  });

  it('without recreation, pods being deleted use no budget (as in OpenKruise)', () => {
    const image = sidecarSet({ image: 'proxy:2' });
    const plan = planUpgrade(image, [terminating(pods[0] as Pod), ...pods.slice(1)], { now });
    assert.equal(plan.budget.unavailable, 0);
    assert.deepEqual(names(plan.upgrade), ['web-1', 'web-2']);
  });

  it('a refused eviction is shown on the pod’s entry and in the Reconciling message', () => {
    const ss = envChange(true);
    const hash = ss.metadata.annotations?.['kruise.io/sidecarset-hash'] ?? '';
    const message = "Cannot evict pod as it would violate the pod's disruption budget.";
    const blocked = owned(0);
    blocked.metadata.annotations = {
      ...blocked.metadata.annotations,
      [EVICTION_REFUSED]: withRefusal(blocked, EVICTION_REFUSED, 'proxy-set', { hash, message }),
    };
    const plan = planUpgrade(ss, [blocked, ...pods.slice(1)], { now });
    assert.deepEqual(names(plan.recreate), ['web-0', 'web-1']);
    assert.equal(plan.recreate[0]?.refused, message);
    assert.equal(plan.recreate[1]?.refused, undefined);
    const state = rolloutState(plan);
    assert.equal(state.reconciling, true);
    assert.match(state.message, /1 pod\(s\) cannot be evicted now: Cannot evict pod/);

    // A refusal of an earlier version says nothing about this one.
    const newer = envChange(true, { env: 'c' });
    assert.equal(planUpgrade(newer, [blocked], { now }).recreate[0]?.refused, undefined);
  });

  it('replacements that never become ready fail the health gate and pause the rollout', () => {
    const gated = envChange(true, {
      strategy: { maxUnavailable: 1 },
      annotations: {
        ...optIn,
        'sidecarset.dev/progress-deadline-seconds': '60',
        'sidecarset.dev/unhealthy-pods-to-pause': '1',
      },
    });
    const replaced = [replacement(0, gated), ...pods.slice(1)];
    const within = planUpgrade(gated, replaced, { now });
    assert.equal(within.health?.progressing, 1);
    assert.equal(within.health.pause, false);

    const later = new Date(now.getTime() + 120_000);
    const past = planUpgrade(gated, replaced, { now: later });
    assert.equal(past.health?.pause, true);
    assert.equal(past.stopped, 'UnhealthyPods');
    assert.deepEqual(past.recreate, []);
    assert.equal(past.health.failed[0]?.failure, 'PodNotReady');

    // Without recreation, pods injected at the version are not the controller's to judge.
    const off = {
      ...gated,
      metadata: { ...gated.metadata, annotations: { ...gated.metadata.annotations } },
    };
    delete off.metadata.annotations[RECREATE_PODS];
    assert.equal(planUpgrade(off, replaced, { now: later }).health?.judged, 0);
  });

  it('a simulation stops where pods would be evicted: it plays in-place upgrades only', () => {
    const sim = simulateRollout(envChange(true), pods, { now });
    assert.deepEqual(sim.waves, []);
    assert.equal(sim.end, 'Recreate');
    assert.match(sim.message, /^2 pods would be evicted next/);
  });
});
