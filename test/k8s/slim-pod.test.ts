/**
 * slimPod: what it keeps, that the planner decides the same on slim pods as on full ones, and
 * what a cached pod costs (the approximateBytes model, and the heap measured over a fleet).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';

import { CoreV1Api } from '@kubernetes/client-node';
import { parse } from 'yaml';

import type { Pod } from '../../src/core/api/k8s-types.js';
import { withHashes } from '../../src/core/api/hash.js';
import type { SidecarSet, SidecarSetUpdateStrategy } from '../../src/core/api/sidecarset-types.js';
import { buildPodUpgrade } from '../../src/core/upgrade/change.js';
import { sidecarSetContext } from '../../src/core/upgrade/context.js';
import { planUpgrade } from '../../src/core/upgrade/plan.js';
import type { PodUpgrade, UpgradePlan } from '../../src/core/upgrade/types.js';
import { StringPool, approximateBytes, slimPod } from '../../src/k8s/slim-pod.js';
import type { JsonValue } from '../fake-apiserver/index.js';
import { NAMESPACES, PODS } from '../fake-apiserver/index.js';
import { withServer } from '../fake-apiserver/harness.js';
import { grayReleasePods } from '../fixtures/plan/gray-release-pods.js';
import {
  hotPod,
  hotSidecarSet,
  podFleet,
  shuffled,
  upgradePod,
  upgradeSidecarSet,
} from '../support/upgrade-pods.js';

const fixtures = new URL('../fixtures/', import.meta.url);
const realistic = parse(readFileSync(new URL('realistic-pod.yaml', fixtures), 'utf8')) as Pod;
const NOW = { now: new Date('2026-03-05T12:00:00Z') };

function logtail(image: string): SidecarSet {
  const doc = parse(
    readFileSync(new URL('logtail-sidecarset.yaml', fixtures), 'utf8'),
  ) as SidecarSet;
  const first = doc.spec.containers?.[0];
  if (first) first.image = image;
  return withHashes(doc);
}

function samePlan(sidecarSet: SidecarSet, pods: readonly Pod[]): UpgradePlan {
  const full = planUpgrade(sidecarSet, pods, NOW);
  const slim = planUpgrade(
    sidecarSet,
    pods.map((p) => slimPod(p)),
    NOW,
  );
  assert.deepEqual(slim, full);
  return full;
}

describe('slimPod', () => {
  it('keeps only the fields the matcher, the planner and the controller read', () => {
    const slim = slimPod(realistic);
    const logtailResources = {
      requests: { cpu: '10m', memory: '30Mi' },
      limits: { memory: '512Mi' },
    };
    const nginxResources = {
      requests: { cpu: '250m', memory: '256Mi' },
      limits: { cpu: '1', memory: '512Mi' },
    };
    const annotations = realistic.metadata.annotations ?? {};
    assert.deepEqual(slim, {
      metadata: {
        name: 'nginx-web-7d9c5b6f4-x2k8p',
        namespace: 'shop',
        uid: '8e3c1a5f-2b7d-4e9a-b6c4-0f1d2e3a4b5c',
        resourceVersion: '48213377',
        ownerReferences: [{ kind: 'ReplicaSet', name: 'nginx-web-7d9c5b6f4', controller: true }],
        creationTimestamp: '2026-03-02T09:14:05Z',
        labels: realistic.metadata.labels,
        annotations: {
          'kruise.io/sidecarset-hash': annotations['kruise.io/sidecarset-hash'],
          'kruise.io/sidecarset-hash-without-image':
            annotations['kruise.io/sidecarset-hash-without-image'],
          'kruise.io/sidecarset-injected-list': 'logtail-sidecarset',
          'kruise.io/sidecarset-inplace-update-state':
            annotations['kruise.io/sidecarset-inplace-update-state'],
        },
      },
      spec: {
        containers: [
          { name: 'logtail', image: 'log-service/logtail:0.16.16', resources: logtailResources },
          {
            name: 'nginx',
            image: 'registry.example.com/storefront/nginx-web:1.25.4-r3',
            resources: nginxResources,
          },
        ],
        // Resources for resizes and the pod's QoS class; init containers for native sidecars.
        initContainers: [
          {
            name: 'render-config',
            image: 'registry.example.com/platform/config-renderer:2.3.1',
            resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '64Mi' } },
          },
        ],
        nodeName: 'ip-10-42-7-18.eu-west-1.compute.internal',
        readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
      },
      status: {
        phase: 'Running',
        conditions: [
          { type: 'InPlaceUpdateReady', status: 'True' },
          { type: 'Ready', status: 'True', lastTransitionTime: '2026-03-02T10:21:58Z' },
          { type: 'ContainersReady', status: 'True' },
        ],
        containerStatuses: [
          {
            name: 'logtail',
            image: 'log-service/logtail:0.16.16',
            imageID:
              'registry.example.com/log-service/logtail@sha256:2e4c6a8f0b1d3f5e7a9c2b4d6f8e0a1c3e5b7d9f2a4c6e8b0d1f3a5c7e9b2d4f',
            ready: true,
            restartCount: 1,
            resources: logtailResources,
          },
          {
            name: 'nginx',
            image: 'registry.example.com/storefront/nginx-web:1.25.4-r3',
            imageID:
              'registry.example.com/storefront/nginx-web@sha256:6d8f0a2c4e6b8d1f3a5c7e9b2d4f6a8c0e2b4d6f8a1c3e5b7d9f0a2c4e6b8d1f',
            ready: true,
            restartCount: 0,
            resources: nginxResources,
          },
        ],
        initContainerStatuses: [
          {
            name: 'render-config',
            image: 'registry.example.com/platform/config-renderer:2.3.1',
            imageID:
              'registry.example.com/platform/config-renderer@sha256:4b7e1d9a3c6f2e8b5a1d4c7f0e3b6a9d2c5f8e1b4a7d0c3f6e9b2a5d8c1f4e7b',
            ready: true,
            restartCount: 0,
          },
        ],
      },
    });
  });

  it('keeps a deletionTimestamp and generation, and tolerates missing or malformed parts', () => {
    const deleting = slimPod({
      metadata: { name: 'x', generation: 3, deletionTimestamp: '2026-03-02T09:00:00Z' },
      spec: { containers: [{ name: 'a' }, 'junk'] },
      status: {
        conditions: [
          { type: 'PodScheduled', status: 'True' },
          {
            type: 'SidecarSetUpgradable',
            status: 'False',
            reason: 'UpdateImmutableField',
            message: '{"a":true,"b":false}',
            lastTransitionTime: '2026-03-02T09:00:00Z',
            lastProbeTime: null,
          },
        ],
      },
    });
    assert.deepEqual(deleting.status?.conditions, [
      {
        type: 'SidecarSetUpgradable',
        status: 'False',
        reason: 'UpdateImmutableField',
        message: '{"a":true,"b":false}',
        lastTransitionTime: '2026-03-02T09:00:00Z',
      },
    ]);
    deleting.status = { conditions: [] };
    assert.deepEqual(deleting, {
      metadata: { name: 'x', generation: 3, deletionTimestamp: '2026-03-02T09:00:00Z' },
      spec: { containers: [{ name: 'a' }] },
      status: { conditions: [] },
    });
    assert.deepEqual(slimPod(null), { metadata: {}, spec: { containers: [] } });
    assert.deepEqual(slimPod({ metadata: { annotations: { other: 'x' }, labels: {} } }).metadata, {
      labels: {},
    });
  });

  it('gives the same slim pod from client-node typed lists (Date times) as from watch JSON', async () => {
    await withServer(async (server) => {
      server.store.create(NAMESPACES, '', { metadata: { name: 'shop' } });
      const created = server.store.create(PODS, 'shop', realistic as unknown as JsonValue);
      const core = server.kubeConfig().makeApiClient(CoreV1Api);
      const listed = (await core.listNamespacedPod({ namespace: 'shop' })).items[0];
      assert.ok(
        listed?.metadata?.creationTimestamp instanceof Date,
        'the typed client gives a Date',
      );
      assert.deepEqual(slimPod(listed), slimPod(created));
      assert.match(
        slimPod(listed).metadata.creationTimestamp ?? '',
        /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
      );
    });
  });

  it('shares equal strings across pods through the pool, which stays bounded', () => {
    const pool = new StringPool(4);
    const a = slimPod(JSON.parse(JSON.stringify(realistic)), pool);
    assert.ok(pool.size() <= 4);
    const big = new StringPool();
    const b = slimPod(JSON.parse(JSON.stringify(realistic)), big);
    const c = slimPod(JSON.parse(JSON.stringify(realistic)), big);
    assert.deepEqual(a, b);
    assert.equal(b.spec.nodeName, c.spec.nodeName);
    assert.ok(big.size() > 10);
  });
});

describe('planUpgrade on slim pods', () => {
  const strategies: [string, SidecarSetUpdateStrategy][] = [
    ['default', {}],
    ['maxUnavailable 3', { maxUnavailable: 3 }],
    ['partition', { partition: '40%', maxUnavailable: 5 }],
    ['canary selector', { selector: { matchLabels: { canary: 'true' } }, maxUnavailable: 10 }],
    [
      'priority',
      {
        maxUnavailable: 4,
        priorityStrategy: {
          weightPriority: [{ weight: 50, matchSelector: { matchLabels: { canary: 'true' } } }],
        },
      },
    ],
    [
      'order priority',
      { maxUnavailable: 4, priorityStrategy: { orderPriority: [{ orderedKey: 'rank' }] } },
    ],
    [
      'scatter',
      { maxUnavailable: 6, scatterStrategy: [{ key: 'zone', value: 'a' }, { key: 'rank' }] },
    ],
    ['paused', { paused: true }],
    ['NotUpdate', { type: 'NotUpdate' }],
  ];

  /** A mixed fleet: upgraded, done, not ready, pending, unscheduled, deleting, not upgradable. */
  function fleet(): Pod[] {
    const pods = podFleet(30, 8, 4).map((p, i) => {
      p.metadata.labels = {
        app: 'web',
        zone: ['a', 'b', 'c'][i % 3] ?? 'a',
        rank: `r-${i % 7}`,
        ...(i % 4 === 0 ? { canary: 'true' } : {}),
      };
      p.metadata.uid = `uid-${i}`;
      return p;
    });
    pods.push(upgradePod(40, { ready: false, restarts: 3 }));
    pods.push(upgradePod(41, { phase: 'Pending', nodeName: '' }));
    pods.push(upgradePod(42, { withoutImage: 'other' }));
    pods.push(upgradePod(43, { upgraded: true, ready: false }));
    const deleting = upgradePod(44);
    deleting.metadata.deletionTimestamp = '2026-03-05T11:00:00Z';
    pods.push(deleting, upgradePod(45, { phase: 'Succeeded' }));
    return shuffled(pods);
  }

  for (const [name, strategy] of strategies) {
    it(`gives the identical plan (${name})`, () => {
      samePlan(upgradeSidecarSet(strategy, { latestRevision: 'rev-2' }), fleet());
    });
  }

  it('gives the identical plan for the gray-release fixture and the realistic pod', () => {
    const doc = parse(
      readFileSync(new URL('plan/gray-release-sidecarset.yaml', fixtures), 'utf8'),
    ) as SidecarSet;
    const grayRelease = withHashes(doc);
    const plan = samePlan(grayRelease, grayReleasePods(grayRelease, 1000, 'busybox:1.35'));
    assert.equal(plan.upgrade.length, 20);
    const realisticPlan = samePlan(logtail('log-service/logtail:0.16.18'), [realistic]);
    assert.equal(realisticPlan.upgrade.length, 1);
  });

  it('gives the identical plan for hot-upgrade sidecars: the new slot learns the old version', () => {
    const pods = [hotPod(0), hotPod(1)];
    const plan = samePlan(hotSidecarSet('hot:2'), pods);
    const [upgrade] = plan.upgrade;
    assert.ok(upgrade !== undefined && plan.upgrade.length === 1, 'maxUnavailable 1');
    const before = pods.find((p) => p.metadata.name === upgrade.pod.name)?.metadata.annotations;
    const after = { ...before, ...upgrade.annotations };
    // SIDECARSET_VERSION_ALT of the container that starts in hot-2 is hot-1's version.
    assert.equal(after['version.sidecarset.kruise.io/hot-2'], '42');
    assert.equal(after['versionalt.sidecarset.kruise.io/hot-2'], '1');
  });

  it('with patchPodMetadata, picks the same pods; the upgrade is rebuilt from the full pod', () => {
    const sidecarSet = upgradeSidecarSet(
      { maxUnavailable: 5 },
      {
        spec: {
          patchPodMetadata: [
            {
              annotations: { 'example.com/config': '{"sidecar":"v2"}' },
              patchPolicy: 'MergePatchJson',
            },
          ],
        },
      },
    );
    const pods = podFleet(10).map((p) => {
      p.metadata.annotations = { ...p.metadata.annotations, 'example.com/config': '{"app":"x"}' };
      return p;
    });
    const full = planUpgrade(sidecarSet, pods, NOW);
    const slim = planUpgrade(
      sidecarSet,
      pods.map((p) => slimPod(p)),
      NOW,
    );
    const refs = (plan: UpgradePlan): string[] => plan.upgrade.map((u) => u.pod.name);
    assert.deepEqual(refs(slim), refs(full));
    assert.deepEqual(slim.held, full.held);
    assert.deepEqual(slim.status, full.status);
    assert.notDeepEqual(slim.upgrade, full.upgrade, 'the merge needs the annotation slimPod drops');
    // What the controller does before writing: rebuild each upgrade from the full pod.
    const ctx = sidecarSetContext(sidecarSet);
    const rebuilt = slim.upgrade.map((u): PodUpgrade => {
      const pod = pods.find((p) => p.metadata.name === u.pod.name);
      assert.ok(pod);
      return buildPodUpgrade(ctx, pod, sidecarSet.spec.patchPodMetadata ?? [], NOW.now);
    });
    assert.deepEqual(rebuilt, full.upgrade);
  });
});

describe('memory per cached pod', () => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;

  /** Heap bytes per object kept, over `count` objects made by `make` from distinct JSON texts. */
  function measure(texts: readonly string[], make: (text: string) => unknown): number {
    const kept: unknown[] = [];
    gc();
    gc();
    const before = process.memoryUsage().heapUsed;
    for (const text of texts) kept.push(make(text));
    gc();
    gc();
    const after = process.memoryUsage().heapUsed;
    assert.equal(kept.length, texts.length);
    return (after - before) / texts.length;
  }

  const iso = (second: number): string =>
    new Date(Date.parse('2026-03-02T09:00:00Z') + second * 1000)
      .toISOString()
      .replace('.000Z', 'Z');

  /**
   * `count` copies of the realistic pod as watch lines: each with its own name, uid and
   * resourceVersion; creation, injection, readiness and upgrade times shared by `perSecond` pods.
   */
  function fleetTexts(count: number, perSecond: number): string[] {
    const text = JSON.stringify(realistic);
    const times = ['2026-03-02T09:14:05Z', '2026-03-02T10:21:44Z', '2026-03-02T10:21:58Z'] as const;
    return Array.from({ length: count }, (_, i) => {
      const second = Math.floor(i / perSecond);
      let out = text
        .replaceAll('x2k8p', `p${String(i).padStart(5, '0')}`)
        .replace('8e3c1a5f', (0x10000000 + i).toString(16))
        .replace('48213377', String(48213377 + i));
      times.forEach((t, k) => {
        out = out.replaceAll(t, iso(second + k * 100_000));
      });
      return out;
    });
  }

  it('the realistic fixture: the model against its JSON size, and slim against full', (t) => {
    const full = approximateBytes(realistic);
    const slim = approximateBytes(slimPod(realistic));
    t.diagnostic(
      `realistic pod: full ${full} B, slim ${slim} B (model, nothing shared); JSON ${JSON.stringify(realistic).length} → ${JSON.stringify(slimPod(realistic)).length} chars`,
    );
    // Each container's resources (resizes, QoS) and the controller reference (recreation) are
    // kept: shared between replicas in a cache.
    assert.ok(slim * 8 < full, 'slimming removes more than 87.5%');
    assert.ok(slim < 5500);
  });

  it('the approximateBytes model is within 25% of the measured heap', (t) => {
    const texts = fleetTexts(1000, 1);
    const measuredFull = measure(texts, (text) => JSON.parse(text) as unknown);
    const measuredSlim = measure(texts, (text) => slimPod(JSON.parse(text), new StringPool(0)));
    const modelFull = approximateBytes(realistic);
    const modelSlim = approximateBytes(slimPod(realistic));
    t.diagnostic(
      `heap per pod, nothing pooled: full ${Math.round(measuredFull)} B (model ${modelFull}), slim ${Math.round(measuredSlim)} B (model ${modelSlim})`,
    );
    for (const [measured, model] of [
      [measuredFull, modelFull],
      [measuredSlim, modelSlim],
    ] as const) {
      assert.ok(
        Math.abs(model - measured) / measured < 0.25,
        `model ${model}, measured ${measured}`,
      );
    }
  });

  it('a fleet of cached slim pods takes at most 2 KB a pod', (t) => {
    const shared = new StringPool();
    const typical = measure(fleetTexts(2000, 20), (text) => slimPod(JSON.parse(text), shared));
    const own = new StringPool();
    const worst = measure(fleetTexts(2000, 1), (text) => slimPod(JSON.parse(text), own));
    t.diagnostic(
      `heap per cached realistic pod: ${Math.round(typical)} B with 20 pods a second sharing times, ${Math.round(worst)} B when every pod has its own times`,
    );
    assert.ok(typical <= 2048, `${typical} B a pod`);
  });
});
