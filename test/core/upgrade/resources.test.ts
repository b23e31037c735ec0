/**
 * Beyond the image (docs/adr/0022-resources-and-native-sidecars-in-place.md): native sidecars
 * upgraded in place, resources changed through pods/resize, each under the same strategy rules.
 * Pods are injected by the real injector and given the status a kubelet reports.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { withHashes } from '../../../src/core/api/hash.js';
import type { Container, Pod } from '../../../src/core/api/k8s-types.js';
import type { StoredRevision } from '../../../src/core/revisions/history.js';
import { revisionData } from '../../../src/core/revisions/history.js';
import type { SidecarSet } from '../../../src/core/api/sidecarset-types.js';
import { applyPodUpgrade } from '../../../src/core/rollout/simulate.js';
import { planUpgrade } from '../../../src/core/upgrade/plan.js';
import { resizableVersions } from '../../../src/core/revisions/history.js';
import type { PlanOptions, PodUpgrade } from '../../../src/core/upgrade/types.js';
import { injected, now, sidecarSet } from '../../support/injected-pods.js';

const later = new Date('2026-07-02T10:30:00Z');

/** `ss` with its first sidecar's resources replaced, hashed again. */
function withResources(ss: SidecarSet, resources: Container['resources']): SidecarSet {
  const edited = structuredClone(ss);
  edited.metadata.annotations = {};
  const proxy = edited.spec.containers?.[0];
  if (proxy !== undefined && resources !== undefined) proxy.resources = resources;
  return withHashes(edited);
}

/** What the controller passes: the versions its ControllerRevisions record. */
function recorded(...versions: SidecarSet[]): PlanOptions {
  const revisions = versions.map((ss, k): StoredRevision => ({
    name: `proxy-set-${k}`,
    revision: k + 1,
    data: revisionData(ss),
    labels: { 'kruise.io/sidecarset-name': 'proxy-set' },
    annotations: {},
  }));
  return { now, versions: resizableVersions(revisions) };
}

const names = (refs: readonly { pod: { name: string } }[]): string[] => refs.map((r) => r.pod.name);

describe('native sidecars in place', () => {
  const v1 = sidecarSet({ native: true });
  const v2 = sidecarSet({ native: true, image: 'proxy:2' });
  const pods = [0, 1, 2, 3].map((i) => injected(i, v1));

  it('injection puts the sidecar among the init containers', () => {
    assert.equal(pods[0]?.spec.initContainers?.[0]?.name, 'proxy');
    assert.equal(pods[0].spec.containers.length, 1);
  });

  it('an image change is upgraded in place, maxUnavailable at a time', () => {
    const plan = planUpgrade(v2, pods, { now });
    assert.deepEqual(names(plan.upgrade), ['web-0', 'web-1']);
    assert.deepEqual(plan.upgrade[0]?.images, [
      { container: 'proxy', from: 'proxy:1', to: 'proxy:2' },
    ]);
    assert.deepEqual(plan.upgrade[0].resources, []);
    assert.deepEqual(
      plan.held.map((h) => h.reason),
      ['MaxUnavailable', 'MaxUnavailable'],
    );
    const after = applyPodUpgrade(pods[0] as Pod, plan.upgrade[0]);
    assert.equal(after.spec.initContainers?.[0]?.image, 'proxy:2');
    assert.equal(after.spec.containers[0]?.image, 'app:1');
  });

  it('an upgraded pod is unavailable until its init container status runs the new image', () => {
    const plan = planUpgrade(v2, pods, { now });
    const upgraded = [0, 1].map((k) =>
      applyPodUpgrade(pods[k] as Pod, plan.upgrade[k] as PodUpgrade),
    );
    const next = planUpgrade(v2, [...upgraded, ...pods.slice(2)], { now });
    assert.equal(next.budget.unavailable, 2);
    assert.deepEqual(names(next.upgrade), []);
    for (const pod of upgraded) {
      const status = pod.status?.initContainerStatuses?.[0];
      if (status) Object.assign(status, { image: 'proxy:2', imageID: 'sha256:proxy:2' });
    }
    const done = planUpgrade(v2, [...upgraded, ...pods.slice(2)], { now });
    assert.equal(done.budget.unavailable, 0);
    assert.deepEqual(names(done.upgrade), ['web-2', 'web-3']);
  });

  it('the partition and the canary selector apply as to containers', () => {
    const canary = sidecarSet({
      native: true,
      image: 'proxy:2',
      strategy: { partition: 1, selector: { matchLabels: { canary: 'true' } } },
    });
    const mixed = [
      injected(0, v1, { canary: 'true' }),
      injected(1, v1),
      injected(2, v1, { canary: 'true' }),
    ];
    const plan = planUpgrade(canary, mixed, { now });
    assert.deepEqual(names(plan.upgrade), ['web-0']);
    assert.deepEqual(
      plan.held.map((h) => [h.pod.name, h.reason]),
      [
        ['web-2', 'Partition'],
        ['web-1', 'NotSelected'],
      ],
    );
  });
});

describe('resources in place', () => {
  const v1 = sidecarSet();
  const v2 = sidecarSet({ cpu: '200m', memory: '96Mi' });
  const pods = [0, 1, 2].map((i) => injected(i, v1));

  it('a ControllerRevision of the old spec tells its version apart', () => {
    const versions = recorded(v1).versions ?? new Map<string, string>();
    const withoutImage = v1.metadata.annotations?.['kruise.io/sidecarset-hash-without-image'];
    assert.ok(withoutImage !== undefined && versions.has(withoutImage));
  });

  it('a resources-only change resizes maxUnavailable pods, defaulting requests to limits', () => {
    const plan = planUpgrade(v2, pods, recorded(v1, v2));
    assert.deepEqual(plan.notUpgradable, []);
    assert.deepEqual(names(plan.upgrade), ['web-0', 'web-1']);
    const upgrade = plan.upgrade[0];
    assert.deepEqual(upgrade?.images, []);
    assert.deepEqual(upgrade.resources, [
      {
        container: 'proxy',
        from: pods[0]?.spec.containers.find((c) => c.name === 'proxy')?.resources,
        to: {
          limits: { cpu: '200m', memory: '96Mi' },
          requests: { cpu: '200m', memory: '96Mi' },
        },
      },
    ]);
    // The pod records the new without-image hash, so a later image change is image-only again.
    assert.match(
      upgrade.annotations['kruise.io/sidecarset-hash-without-image'] ?? '',
      new RegExp(v2.metadata.annotations?.['kruise.io/sidecarset-hash-without-image'] ?? 'x'),
    );
  });

  it('an image and resources change together', () => {
    const v3 = sidecarSet({ image: 'proxy:3', cpu: '200m' });
    const plan = planUpgrade(v3, pods, recorded(v1));
    assert.deepEqual(plan.upgrade[0]?.images, [
      { container: 'proxy', from: 'proxy:1', to: 'proxy:3' },
    ]);
    assert.equal(plan.upgrade[0].resources.length, 1);
  });

  it('without the old version in a ControllerRevision, nothing changes in place', () => {
    const plan = planUpgrade(v2, pods, { now });
    assert.deepEqual(names(plan.upgrade), []);
    assert.equal(plan.notUpgradable.length, 3);
    assert.match(plan.notUpgradable[0]?.message ?? '', /no ControllerRevision/);
  });

  it('an API server without pods/resize: not upgradable, with the reason', () => {
    const plan = planUpgrade(v2, pods, { ...recorded(v1), podResize: false });
    assert.deepEqual(names(plan.upgrade), []);
    assert.match(plan.notUpgradable[0]?.message ?? '', /cannot resize pods in place/);
  });

  it('a change beyond images and resources is not upgradable', () => {
    const plan = planUpgrade(sidecarSet({ cpu: '200m', env: 'b' }), pods, recorded(v1));
    assert.equal(plan.notUpgradable.length, 3);
    assert.match(plan.notUpgradable[0]?.message ?? '', /other than image and resources/);
  });

  it('what the API server refuses to resize is not upgradable: QoS class, other resources', () => {
    // Every container with equal requests and limits would make a BestEffort/Burstable pod
    // Guaranteed; here the app has none, so a sidecar cannot make the pod BestEffort either.
    const guaranteed = sidecarSet({ cpu: '100m' });
    const pod = injected(0, guaranteed);
    const app = pod.spec.containers.find((c) => c.name === 'app');
    if (app)
      app.resources = {
        limits: { cpu: '1', memory: '1Gi' },
        requests: { cpu: '1', memory: '1Gi' },
      };
    const burstable = withResources(v1, {
      limits: { cpu: '200m', memory: '64Mi' },
      requests: { cpu: '50m', memory: '64Mi' },
    });
    const qos = planUpgrade(burstable, [pod], recorded(guaranteed));
    assert.match(qos.notUpgradable[0]?.message ?? '', /Burstable instead of Guaranteed/);

    const storage = withResources(v1, {
      limits: { cpu: '100m', memory: '64Mi', 'ephemeral-storage': '1Gi' },
    });
    const other = planUpgrade(storage, pods, recorded(v1));
    assert.match(other.notUpgradable[0]?.message ?? '', /ephemeral-storage cannot change in place/);
  });

  it('a resized pod is unavailable until the kubelet reports its new resources', () => {
    const plan = planUpgrade(v2, pods, recorded(v1));
    const resized = plan.upgrade.map((u, k) => {
      const pod = applyPodUpgrade(pods[k] as Pod, u);
      return pod;
    });
    const next = planUpgrade(v2, [...resized, pods[2] as Pod], recorded(v1));
    assert.equal(next.budget.unavailable, 2);
    assert.equal(next.status.updatedPods, 2);
    assert.equal(next.status.readyPods, 1);
    assert.deepEqual(names(next.upgrade), []);
    for (const pod of resized) {
      const status = pod.status?.containerStatuses?.find((s) => s.name === 'proxy');
      if (status)
        status['resources'] = {
          limits: { cpu: '0.2', memory: '96Mi' },
          requests: { cpu: '200m', memory: '96Mi' },
        };
    }
    const done = planUpgrade(v2, [...resized, pods[2] as Pod], recorded(v1));
    assert.equal(done.budget.unavailable, 0);
    assert.deepEqual(names(done.upgrade), ['web-2']);
  });

  it('a resize the kubelet reports Infeasible fails the pod and pauses the rollout', () => {
    const gated = sidecarSet({
      cpu: '200m',
      memory: '96Mi',
      annotations: { 'sidecarset.dev/max-failed-pods': '1' },
    });
    const plan = planUpgrade(gated, pods, recorded(v1));
    const resized = plan.upgrade.map((u, k) => {
      const pod = applyPodUpgrade(pods[k] as Pod, u);
      pod.status?.conditions?.push({
        type: 'PodResizePending',
        status: 'True',
        reason: 'Infeasible',
        message: "Node didn't have enough capacity: cpu",
      });
      return pod;
    });
    const next = planUpgrade(gated, [...resized, pods[2] as Pod], { ...recorded(v1), now: later });
    assert.equal(next.health?.failed.length, 2);
    assert.match(next.health.message, /cannot resize sidecar proxy/);
    assert.equal(next.stopped, 'UnhealthyPods');
    // Undone: the pending resize does not hold the pod in flight; it is resized back.
    const undone = planUpgrade(v1, resized, recorded(v1, gated));
    assert.deepEqual(names(undone.upgrade), ['web-0', 'web-1']);
    assert.deepEqual(undone.upgrade[0]?.resources[0]?.to, {
      limits: { cpu: '100m', memory: '64Mi' },
      requests: { cpu: '100m', memory: '64Mi' },
    });
  });

  it('a resize the API server refused is not tried again and fails the pod', () => {
    const refused = structuredClone(pods[0]) as Pod;
    refused.metadata.annotations = {
      ...refused.metadata.annotations,
      'sidecarset.dev/resize-refused': JSON.stringify({
        'proxy-set': {
          hash: v2.metadata.annotations?.['kruise.io/sidecarset-hash'],
          message: 'node full',
        },
      }),
    };
    const plan = planUpgrade(v2, [refused, ...pods.slice(1)], recorded(v1));
    assert.equal(plan.stopped, 'UnhealthyPods');
    assert.match(plan.health?.message ?? '', /refused the resize: node full/);
    assert.deepEqual(names(plan.upgrade), []);
    // Resumed past the failure (or with the gate off), it is not upgradable, never tried again.
    const ungated = structuredClone(v2);
    ungated.metadata.annotations = {
      ...ungated.metadata.annotations,
      'sidecarset.dev/health-gate': 'off',
    };
    const next = planUpgrade(ungated, [refused, ...pods.slice(1)], recorded(v1));
    assert.deepEqual(names(next.notUpgradable), ['web-0']);
    assert.deepEqual(names(next.upgrade), ['web-1', 'web-2']);
  });
});
