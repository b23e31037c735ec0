/** The gray-release rules, end to end through the controller against the test cluster. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';

import type { KubeObject } from '../fake-apiserver/index.js';
import { EVENTS } from '../fake-apiserver/index.js';
import type { TestCluster } from './cluster.js';
import {
  container,
  createPods,
  createSidecarSet,
  eventSent,
  nginxPod,
  pods,
  sidecarSet,
  startTestCluster,
  status,
  updateSidecarSet,
  eventually,
  reconcileCount,
  waitFor,
  waitForLog,
  withCluster,
  setUpAgent,
} from './cluster.js';

const fast = { flags: { qps: 1000, burst: 1000 } };
/** Per-pod events are off by default (docs/adr/0014-health-gated-rollouts.md). */
const fastWithPodEvents = { flags: { ...fast.flags, podEvents: true } };

const agentImage = (pod: KubeObject): unknown => container(pod, 'agent')?.['image'];
const onImage = (cluster: TestCluster, image: string): KubeObject[] =>
  pods(cluster).filter((p) => agentImage(p) === image);

async function setImage(
  cluster: TestCluster,
  image: string,
  strategy?: (s: Record<string, unknown>) => void,
): Promise<void> {
  await updateSidecarSet(cluster, 'agent', (spec) => {
    ((spec['containers'] as { image: string }[])[0] as { image: string }).image = image;
    if (strategy) strategy(spec['updateStrategy'] as Record<string, unknown>);
  });
}

/** Waits until the controller has observed the last spec change and has nothing left to do. */
async function settled(cluster: TestCluster, generation: number, updated: number): Promise<void> {
  await waitFor(
    cluster,
    () => {
      const s = status(cluster, 'agent');
      return (
        s?.['observedGeneration'] === generation &&
        s['updatedPods'] === updated &&
        s['updatedReadyPods'] === updated
      );
    },
    `${updated} pods updated at generation ${generation}`,
  );
}

describe('gray release in a cluster', () => {
  it('partition stops the rollout at the right count; lowering it resumes', async () => {
    await withCluster(async (cluster) => {
      await setUpAgent(cluster, 10, { partition: 7, maxUnavailable: 2 });
      await setImage(cluster, 'agent:2');
      await settled(cluster, 2, 3);
      assert.equal(onImage(cluster, 'agent:2').length, 3);
      await updateSidecarSet(cluster, 'agent', (spec) => {
        (spec['updateStrategy'] as Record<string, unknown>)['partition'] = 2;
      });
      await settled(cluster, 3, 8);
      assert.equal(onImage(cluster, 'agent:2').length, 8);
    }, fast);
  });

  it('the canary selector limits the rollout; removing it continues over all pods', async () => {
    await withCluster(async (cluster) => {
      await setUpAgent(cluster, 6, { maxUnavailable: 3 }, (i) =>
        i < 2 ? { 'canary.release': 'true' } : {},
      );
      await setImage(cluster, 'agent:2', (s) => {
        s['selector'] = { matchLabels: { 'canary.release': 'true' } };
      });
      await settled(cluster, 2, 2);
      assert.deepEqual(
        onImage(cluster, 'agent:2').map((p) => p.metadata.name),
        ['web-00', 'web-01'],
      );
      await updateSidecarSet(cluster, 'agent', (spec) => {
        delete (spec['updateStrategy'] as Record<string, unknown>)['selector'];
      });
      await settled(cluster, 3, 6);
    }, fast);
  });

  it('a pod whose labels no longer match the selector is neither counted nor upgraded', async () => {
    // getMatchingPods (sidecarset_processor.go) lists by spec.selector: an injected pod relabelled
    // out of it leaves the status and the rollout.
    await withCluster(async (cluster) => {
      await setUpAgent(cluster, 4, { maxUnavailable: 4 });
      await cluster.core.patchNamespacedPod(
        { name: 'web-03', namespace: 'default', body: { metadata: { labels: { app: 'other' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
      await waitFor(cluster, () => status(cluster, 'agent')?.['matchedPods'] === 3, '3 matched');
      await setImage(cluster, 'agent:2');
      await settled(cluster, 2, 3);
      assert.deepEqual(
        onImage(cluster, 'agent:1').map((p) => p.metadata.name),
        ['web-03'],
      );
    }, fast);
  });

  it('paused holds every pod; unpausing upgrades them', async () => {
    await withCluster(async (cluster) => {
      await setUpAgent(cluster, 3, { paused: true });
      await setImage(cluster, 'agent:2');
      await settled(cluster, 2, 0);
      assert.equal(onImage(cluster, 'agent:2').length, 0);
      await updateSidecarSet(cluster, 'agent', (spec) => {
        (spec['updateStrategy'] as Record<string, unknown>)['paused'] = false;
      });
      await settled(cluster, 3, 3);
    }, fast);
  });

  it('writes still waiting for their token are dropped once the SidecarSet is paused', async () => {
    // One pod write every 2 s: the round's last writes start seconds after its plan.
    await withCluster(
      async (cluster) => {
        await setUpAgent(cluster, 4, { maxUnavailable: 4 });
        await setImage(cluster, 'agent:2');
        await waitFor(cluster, () => onImage(cluster, 'agent:2').length === 1, 'one pod written');
        await updateSidecarSet(cluster, 'agent', (spec) => {
          (spec['updateStrategy'] as Record<string, unknown>)['paused'] = true;
        });
        // Long enough for two more tokens.
        await new Promise((resolve) => setTimeout(resolve, 5000));
        assert.equal(onImage(cluster, 'agent:2').length, 1, 'no write after the pause');
      },
      { flags: { qps: 0.5, burst: 1 } },
    );
  });

  it('NotUpdate never touches running pods', async () => {
    await withCluster(async (cluster) => {
      await setUpAgent(cluster, 3, { type: 'NotUpdate' });
      await setImage(cluster, 'agent:2');
      await settled(cluster, 2, 0);
      assert.equal(onImage(cluster, 'agent:2').length, 0);
      const patches = cluster.api.control.requests(
        (r) => r.method === 'PATCH' && r.resource === 'pods' && r.subresource === undefined,
      );
      assert.equal(patches.length, 0);
    }, fast);
  });

  it('reports a change beyond the image, and does not apply it', async () => {
    await withCluster(async (cluster) => {
      await setUpAgent(cluster, 2, {});
      await updateSidecarSet(cluster, 'agent', (spec) => {
        const c = (spec['containers'] as Record<string, unknown>[])[0] as Record<string, unknown>;
        c['image'] = 'agent:2';
        c['args'] = ['--verbose'];
      });
      await waitFor(
        cluster,
        () =>
          pods(cluster).every((p) => {
            const conditions =
              (p['status'] as { conditions?: { type: string; status: string; message?: string }[] })
                .conditions ?? [];
            return conditions.some(
              (c) =>
                c.type === 'SidecarSetUpgradable' &&
                c.status === 'False' &&
                c.message === '{"agent":false}',
            );
          }),
        'SidecarSetUpgradable=False on both pods',
      );
      await eventSent(cluster, 'NotUpgradablePods');
      assert.equal(onImage(cluster, 'agent:2').length, 0);
      assert.equal(status(cluster, 'agent')?.['updatedPods'], 0);
    }, fast);
  });

  it('writes the not-upgradable condition once, keeping the entries of other SidecarSets', async () => {
    await withCluster(async (cluster) => {
      await setUpAgent(cluster, 1, {});
      const name = (pods(cluster)[0]?.['metadata'] as { name: string }).name;
      await cluster.core.patchNamespacedPodStatus(
        {
          name,
          namespace: 'default',
          body: {
            status: {
              conditions: [
                {
                  type: 'SidecarSetUpgradable',
                  status: 'True',
                  reason: 'AllSidecarsetUpgradable',
                  message: '{"other":true}',
                  lastTransitionTime: '2026-01-01T00:00:00Z',
                },
              ],
            },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
      await updateSidecarSet(cluster, 'agent', (spec) => {
        const c = (spec['containers'] as Record<string, unknown>[])[0] as Record<string, unknown>;
        c['image'] = 'agent:2';
        c['args'] = ['--verbose'];
      });
      const condition = (): { status: string; message?: string } | undefined =>
        (
          (
            pods(cluster)[0]?.['status'] as {
              conditions?: { type: string; status: string; message?: string }[];
            }
          ).conditions ?? []
        ).find((c) => c.type === 'SidecarSetUpgradable');
      await waitFor(
        cluster,
        () => condition()?.message === '{"agent":false,"other":true}',
        'both entries in the condition',
      );
      assert.equal(condition()?.status, 'False');
      // More rounds (a pod label change enqueues the SidecarSet) write nothing more.
      for (const round of ['a', 'b']) {
        const before = await reconcileCount(cluster);
        await cluster.core.patchNamespacedPod(
          { name, namespace: 'default', body: { metadata: { labels: { round } } } },
          setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
        );
        await eventually(
          async () => (await reconcileCount(cluster)) > before,
          `a round after the label ${round}`,
        );
      }
      const writes = cluster.api.control.requests(
        (r) =>
          r.method === 'PATCH' &&
          r.subresource === 'status' &&
          JSON.stringify(r.body).includes('"agent\\":false'),
      );
      assert.equal(writes.length, 1);
    }, fast);
  });

  it('hot-upgrades: the new image in the empty slot, then the old slot back on the empty image', async () => {
    await withCluster(async (cluster) => {
      await createSidecarSet(
        cluster,
        sidecarSet('agent', {
          selector: { matchLabels: { app: 'nginx' } },
          containers: [
            {
              name: 'agent',
              image: 'agent:1',
              upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' },
            },
          ],
          updateStrategy: { maxUnavailable: 2 },
        }),
      );
      // One pod declares the InPlaceUpdateReady gate: a hot upgrade never closes it.
      await createPods(cluster, 3, (i) => {
        const pod = nginxPod(`web-${i}`);
        if (i === 0) {
          (pod['spec'] as Record<string, unknown>)['readinessGates'] = [
            { conditionType: 'InPlaceUpdateReady' },
          ];
        }
        return pod;
      });
      await waitFor(cluster, () => status(cluster, 'agent')?.['readyPods'] === 3, 'pods ready');
      const gates: (string | undefined)[] = [];
      const unsubscribe = cluster.api.store.subscribe(() => {
        const now = gateStatus(cluster);
        if (gates.at(-1) !== now) gates.push(now);
      });
      const slots = (pod: KubeObject): string[] => [
        String(container(pod, 'agent-1')?.['image']),
        String(container(pod, 'agent-2')?.['image']),
      ];
      assert.deepEqual(pods(cluster).map(slots), Array(3).fill(['agent:1', 'empty:1']));
      await setImage(cluster, 'agent:2');
      await settled(cluster, 2, 3);
      await waitFor(
        cluster,
        () => pods(cluster).every((p) => slots(p).join() === 'empty:1,agent:2'),
        'every pod on agent:2 in the second slot, the first back on the empty image',
      );
      for (const pod of pods(cluster)) {
        const annotations = (pod['metadata'] as { annotations: Record<string, string> })
          .annotations;
        assert.equal(
          annotations['kruise.io/sidecarset-working-hotupgrade-container'],
          '{"agent":"agent-2"}',
        );
        assert.equal(annotations['version.sidecarset.kruise.io/agent-1'], '0');
        assert.equal(annotations['versionalt.sidecarset.kruise.io/agent-2'], '0');
      }
      await eventSent(cluster, 'ResetContainerSucceed');
      unsubscribe();
      assert.deepEqual(gates, ['True']);
      // And back: the empty first slot takes agent:3.
      await setImage(cluster, 'agent:3');
      await settled(cluster, 3, 3);
      await waitFor(
        cluster,
        () => pods(cluster).every((p) => slots(p).join() === 'agent:3,empty:1'),
        'every pod on agent:3 in the first slot',
      );
    }, fastWithPodEvents);
  });

  it('stops within the budget when the new sidecar fails to start, and recovers with a good image', async () => {
    await withCluster(async (cluster) => {
      await setUpAgent(cluster, 6, { maxUnavailable: 2 });
      cluster.kubelet.failImage('agent:bad');
      await setImage(cluster, 'agent:bad');
      await waitFor(
        cluster,
        () => onImage(cluster, 'agent:bad').length === 2,
        'two pods on the bad image',
      );
      // Give the controller every chance to overspend: more pod events, more rounds.
      await cluster.kubelet.whenIdle();
      await waitFor(
        cluster,
        () =>
          status(cluster, 'agent')?.['updatedPods'] === 2 &&
          status(cluster, 'agent')?.['readyPods'] === 4,
        'status 6/2/4',
      );
      assert.equal(
        onImage(cluster, 'agent:bad').length,
        2,
        'no more than maxUnavailable pods took the bad image',
      );
      await setImage(cluster, 'agent:3');
      await settled(cluster, 3, 6);
    }, fast);
  });

  it('writes each pod from the cache, and reads it first only for patchPodMetadata', async () => {
    await withCluster(async (cluster) => {
      await setUpAgent(cluster, 3, { maxUnavailable: 3 });
      const reads = (): number =>
        cluster.api.control.requests(
          (r) => r.method === 'GET' && r.resource === 'pods' && r.name !== undefined,
        ).length;
      await setImage(cluster, 'agent:2');
      await settled(cluster, 2, 3);
      assert.equal(reads(), 0, 'no pod read before its write');
      await updateSidecarSet(cluster, 'agent', (spec) => {
        ((spec['containers'] as { image: string }[])[0] as { image: string }).image = 'agent:3';
        spec['patchPodMetadata'] = [
          { annotations: { 'example.com/upgraded': 'yes' }, patchPolicy: 'Overwrite' },
        ];
      });
      await settled(cluster, 3, 3);
      assert.equal(reads(), 3, 'each pod read once: the cache lacks the annotations to merge');
      for (const pod of pods(cluster)) {
        const annotations = (pod['metadata'] as { annotations?: Record<string, string> })
          .annotations;
        assert.equal(annotations?.['example.com/upgraded'], 'yes');
      }
    }, fast);
  });

  it('retries a pod write that meets a 409 conflict', async () => {
    await withCluster(async (cluster) => {
      await setUpAgent(cluster, 2, { maxUnavailable: 2 });
      cluster.api.control.failNext({
        match: (r) => r.verb === 'patch' && r.resource === 'pods' && r.subresource === undefined,
        status: 409,
        times: 2,
      });
      await setImage(cluster, 'agent:2');
      await settled(cluster, 2, 2);
      const conflicts = cluster.api.control.requests(
        (r) => r.method === 'PATCH' && r.resource === 'pods' && r.status === 409,
      );
      assert.equal(conflicts.length, 2);
    }, fast);
  });
});

/** The SidecarSet "agent" (agent:1) and one nginx pod with the InPlaceUpdateReady gate, ready. */
async function startGatedPod(cluster: TestCluster): Promise<void> {
  await createSidecarSet(
    cluster,
    sidecarSet('agent', {
      selector: { matchLabels: { app: 'nginx' } },
      containers: [{ name: 'agent', image: 'agent:1' }],
    }),
  );
  const pod = nginxPod('gated');
  (pod['spec'] as Record<string, unknown>)['readinessGates'] = [
    { conditionType: 'InPlaceUpdateReady' },
  ];
  await cluster.core.createNamespacedPod({ namespace: 'default', body: pod });
  await waitFor(
    cluster,
    () => status(cluster, 'agent')?.['readyPods'] === 1,
    'the gate opened and the pod ready',
  );
}

/** The first pod's InPlaceUpdateReady condition status. */
function gateStatus(cluster: TestCluster): string | undefined {
  const conditions =
    (pods(cluster)[0]?.['status'] as { conditions?: { type: string; status: string }[] })
      .conditions ?? [];
  return conditions.find((c) => c.type === 'InPlaceUpdateReady')?.status;
}

describe('optional behaviour', () => {
  it('drains traffic first for pods with the InPlaceUpdateReady readiness gate', async () => {
    await withCluster(async (cluster) => {
      await startGatedPod(cluster);
      const gate = (): string | undefined => gateStatus(cluster);
      const history: string[] = [];
      let imageWhenClosed: unknown;
      const unsubscribe = cluster.api.store.subscribe(() => {
        const now = gate() ?? '';
        if (history.at(-1) !== now) {
          history.push(now);
          if (now === 'False') imageWhenClosed = agentImage(pods(cluster)[0] as KubeObject);
        }
      });
      await setImage(cluster, 'agent:2');
      await settled(cluster, 2, 1);
      await waitFor(
        cluster,
        () => gate() === 'True' && history.includes('False'),
        'the gate open again',
      );
      unsubscribe();
      assert.equal(imageWhenClosed, 'agent:1', 'the gate closed before the image changed');
      assert.deepEqual(history, ['True', 'False', 'True']);
    }, fast);
  });

  it('opens the readiness gate again after a failed write', async () => {
    await withCluster(async (cluster) => {
      await startGatedPod(cluster);
      const reopen = cluster.api.control.failNext({
        match: (r) =>
          r.method === 'PATCH' &&
          r.resource === 'pods' &&
          r.subresource === 'status' &&
          JSON.stringify(r.body).includes('InPlaceUpdateFinished'),
        status: 500,
      });
      const gate = (): string | undefined => gateStatus(cluster);
      await setImage(cluster, 'agent:2');
      await waitFor(
        cluster,
        () => reopen.hits() === 1 && gate() === 'True',
        'the gate open again after a failed write',
      );
      assert.equal(agentImage(pods(cluster)[0] as KubeObject), 'agent:2');
    }, fast);
  });

  it('with pod events off, only the SidecarSet gets events', async () => {
    const cluster = await startTestCluster({ flags: { podEvents: false, qps: 1000, burst: 1000 } });
    try {
      await setUpAgent(cluster, 2, { maxUnavailable: 2 });
      await setImage(cluster, 'agent:2');
      await settled(cluster, 2, 2);
      await eventSent(cluster, 'UpgradeStarted');
      const reasons = cluster.api.control
        .requests((r) => r.method === 'POST' && r.resource === 'events')
        .map((r) => (r.body as { reason?: string }).reason);
      assert.deepEqual([...new Set(reasons)], ['UpgradeStarted']);
    } finally {
      await cluster.close();
    }
  });

  it('events are aggregated: one UpgradeStarted Event per SidecarSet, its count the rounds', async () => {
    const cluster = await startTestCluster({ flags: { qps: 1000, burst: 1000 } });
    try {
      await setUpAgent(cluster, 3, { maxUnavailable: 1 });
      await setImage(cluster, 'agent:2');
      await settled(cluster, 2, 3);
      const started = (): KubeObject[] =>
        cluster.api.store.list(EVENTS).items.filter((e) => e['reason'] === 'UpgradeStarted');
      await waitFor(cluster, () => started()[0]?.['count'] === 3, 'UpgradeStarted counted 3 times');
      assert.equal(started().length, 1, 'one Event object');
      const posts = cluster.api.control.requests(
        (r) => r.method === 'POST' && r.resource === 'events',
      );
      assert.deepEqual(
        posts.map((r) => (r.body as { reason?: string }).reason),
        ['UpgradeStarted'],
        'pod events are off by default; repeats are PATCHes',
      );
      // An Event deleted (expired) meanwhile is created anew.
      const [event] = started();
      assert.ok(event);
      cluster.api.store.delete(EVENTS, 'default', event.metadata.name ?? '');
      await setImage(cluster, 'agent:3');
      await settled(cluster, 3, 3);
      await waitFor(cluster, () => started()[0]?.['count'] === 3, 'a new Event, counted again');
      assert.equal(started().length, 1);
    } finally {
      await cluster.close();
    }
  });

  it('plans but writes nothing in a dry run', async () => {
    const cluster = await startTestCluster({
      flags: { dryRun: true, qps: 1000, burst: 1000 },
      logLevel: 'info',
    });
    try {
      await createSidecarSet(
        cluster,
        sidecarSet('agent', {
          selector: { matchLabels: { app: 'nginx' } },
          containers: [{ name: 'agent', image: 'agent:1' }],
        }),
      );
      await createPods(cluster, 2, (i) => nginxPod(`web-${i}`));
      await updateSidecarSet(cluster, 'agent', (spec) => {
        ((spec['containers'] as { image: string }[])[0] as { image: string }).image = 'agent:2';
      });
      await cluster.kubelet.whenIdle();
      // The dry run plans and says what it would write; then nothing has been written.
      await waitForLog(cluster, 'dry run: would patch pod');
      const writes = cluster.api.control.requests(
        (r) =>
          (r.method === 'PATCH' && (r.resource === 'pods' || r.resource === 'sidecarsets')) ||
          (r.method === 'POST' && r.resource === 'events'),
      );
      assert.deepEqual(writes, []);
      assert.equal(onImage(cluster, 'agent:2').length, 0);
    } finally {
      await cluster.close();
    }
  });
});
