/**
 * The InPlaceUpdateReady readiness gate under failure (src/core/upgrade/readiness-gate.ts): a
 * write the API server refuses reopens the gate, closed gates use the budget, a failing round
 * backs off and says why, and gates are opened from the pod's state, not from the memory of the
 * process that closed them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';

import type { JsonObject, KubeObject } from '../fake-apiserver/index.js';
import { runClusterCli } from '../support/cli.js';
import type { TestCluster } from './cluster.js';
import {
  container,
  createPods,
  createSidecarSet,
  eventSent,
  nginxPod,
  pods,
  sidecarSet,
  status,
  updateSidecarSet,
  waitFor,
  withCluster,
} from './cluster.js';

const fast = { flags: { qps: 1000, burst: 1000 } };

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

const conditionsOf = (pod: KubeObject): Condition[] =>
  (pod['status'] as { conditions?: Condition[] } | undefined)?.conditions ?? [];
const gateOf = (pod: KubeObject | undefined): Condition | undefined =>
  pod === undefined ? undefined : conditionsOf(pod).find((c) => c.type === 'InPlaceUpdateReady');
const closedGates = (cluster: TestCluster): number =>
  pods(cluster).filter((p) => gateOf(p)?.status === 'False').length;
const agentImage = (pod: KubeObject): unknown => container(pod, 'agent')?.['image'];
const sidecarSetConditions = (cluster: TestCluster): Condition[] =>
  (status(cluster, 'agent')?.['conditions'] as Condition[] | undefined) ?? [];

/** The SidecarSet "agent" (agent:1) and `count` gated nginx pods, ready. */
async function startGatedPods(
  cluster: TestCluster,
  count: number,
  pod: (i: number) => JsonObject = (i) => nginxPod(`web-${i}`),
): Promise<void> {
  await createSidecarSet(
    cluster,
    sidecarSet('agent', {
      selector: { matchLabels: { app: 'nginx' } },
      containers: [{ name: 'agent', image: 'agent:1' }],
      updateStrategy: { maxUnavailable: 1 },
    }),
  );
  await createPods(cluster, count, (i) => {
    const body = pod(i);
    (body['spec'] as Record<string, unknown>)['readinessGates'] = [
      { conditionType: 'InPlaceUpdateReady' },
    ];
    return body;
  });
  await waitFor(
    cluster,
    () => status(cluster, 'agent')?.['readyPods'] === count,
    'the gates opened and the pods ready',
  );
}

async function setImage(cluster: TestCluster, image: string): Promise<void> {
  await updateSidecarSet(cluster, 'agent', (spec) => {
    ((spec['containers'] as { image: string }[])[0] as { image: string }).image = image;
  });
}

/** Writes the pod's InPlaceUpdateReady condition, as another process would have left it. */
async function writeGate(cluster: TestCluster, name: string, gate: Condition): Promise<void> {
  await cluster.core.patchNamespacedPodStatus(
    {
      name,
      namespace: 'default',
      body: { status: { conditions: [{ ...gate, lastTransitionTime: new Date().toISOString() }] } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
  );
}

/** A pod update the API server refuses: any pod PATCH that changes the agent's image. */
const imageChange = (r: {
  method: string;
  resource?: string | undefined;
  subresource?: string | undefined;
  body?: unknown;
}): boolean =>
  r.method === 'PATCH' &&
  r.resource === 'pods' &&
  r.subresource === undefined &&
  JSON.stringify(r.body).includes('agent:2');

describe('the readiness gate under failure', () => {
  it('a refused pod update reopens its gate, holds the budget, backs off and says why', async () => {
    await withCluster(async (cluster) => {
      await startGatedPods(cluster, 4);
      const refusal = cluster.api.control.failNext({
        match: imageChange,
        status: 403,
        message: 'ValidatingAdmissionPolicy "no-image-change" denied request',
        times: Number.MAX_SAFE_INTEGER,
      });
      let worst = 0;
      const unsubscribe = cluster.api.store.subscribe(() => {
        worst = Math.max(worst, closedGates(cluster));
      });
      try {
        await setImage(cluster, 'agent:2');
        await waitFor(
          cluster,
          () =>
            sidecarSetConditions(cluster).some(
              (c) =>
                c.type === 'PodUpdateFailure' &&
                c.status === 'True' &&
                (c.message ?? '').includes('no-image-change'),
            ),
          'the PodUpdateFailure condition',
        );
        await eventSent(cluster, 'PodUpdateFailed');
        const shown = await runClusterCli(cluster.kubeconfigFile, ['rollout', 'status', 'agent']);
        assert.match(
          shown.stdout,
          /\n {2}pod updates fail: updating pod default\/web-\d failed: .*no-image-change/,
        );
        // Backoff: retries double their wait (5 ms, 10 ms, …: about nine in 3 s), instead of
        // running again on the events of the round's own gate writes.
        const before = refusal.hits();
        await new Promise((resolve) => setTimeout(resolve, 3000));
        const retries = refusal.hits() - before;
        assert.ok(retries >= 1 && retries <= 12, `${retries} refused updates in 3 s`);
        await waitFor(cluster, () => closedGates(cluster) === 0, 'every gate open');
        assert.equal(worst, 1, 'at most maxUnavailable (1) gates closed at once');
        assert.equal(pods(cluster).filter((p) => agentImage(p) === 'agent:2').length, 0);
        const reopened = pods(cluster).filter((p) => gateOf(p)?.reason === 'InPlaceUpdateFailed');
        assert.ok(reopened.length >= 1, 'a gate reopened after the refusal');

        refusal.cancel();
        await waitFor(
          cluster,
          () =>
            pods(cluster).every(
              (p) => agentImage(p) === 'agent:2' && gateOf(p)?.status === 'True',
            ) && status(cluster, 'agent')?.['updatedReadyPods'] === 4,
          'the rollout complete once updates are allowed',
          60_000,
        );
        await waitFor(
          cluster,
          () => !sidecarSetConditions(cluster).some((c) => c.type === 'PodUpdateFailure'),
          'the PodUpdateFailure condition gone',
        );
        assert.equal(worst, 1, 'at most maxUnavailable (1) gates closed at once');
      } finally {
        unsubscribe();
      }
    }, fast);
  });

  it('opens a gate its SidecarSet closed from the pod, without memory of the upgrade', async () => {
    await withCluster(async (cluster) => {
      await startGatedPods(cluster, 4, (i) => {
        const pod = nginxPod(`web-${i}`);
        if (i === 3) {
          const meta = pod['metadata'] as Record<string, unknown>;
          meta['ownerReferences'] = [
            {
              apiVersion: 'apps.kruise.io/v1alpha1',
              kind: 'CloneSet',
              name: 'web',
              uid: 'u1',
              controller: true,
            },
          ];
        }
        return pod;
      });
      // As a process that died between closing the gates and the end of the upgrades left them.
      const closed = { type: 'InPlaceUpdateReady', status: 'False', reason: 'StartInPlaceUpdate' };
      await writeGate(cluster, 'web-0', {
        ...closed,
        message: 'SidecarSet agent: upgrading sidecars in place',
      });
      // Closed by another SidecarSet, whose upgrade this one knows nothing of: left to it.
      await writeGate(cluster, 'web-1', {
        ...closed,
        message: 'SidecarSet other: upgrading sidecars in place',
      });
      // Closed by version 0.1, which did not name itself: this SidecarSet's.
      await writeGate(cluster, 'web-2', { ...closed, message: '' });
      // Closed by a CloneSet's in-place update (same reason, no message): left to it.
      await writeGate(cluster, 'web-3', { ...closed, message: '' });
      const gate = (name: string): string | undefined =>
        gateOf(pods(cluster).find((p) => (p['metadata'] as { name: string }).name === name))
          ?.status;
      await waitFor(
        cluster,
        () => gate('web-0') === 'True' && gate('web-2') === 'True',
        'ours open',
      );
      assert.equal(gate('web-1'), 'False');
      assert.equal(gate('web-3'), 'False');
    }, fast);
  });

  it('opens the gates of a deleted SidecarSet', async () => {
    await withCluster(async (cluster) => {
      await startGatedPods(cluster, 1);
      await cluster.custom.deleteClusterCustomObject({
        group: 'apps.kruise.io',
        version: 'v1beta1',
        plural: 'sidecarsets',
        name: 'agent',
      });
      await writeGate(cluster, 'web-0', {
        type: 'InPlaceUpdateReady',
        status: 'False',
        reason: 'StartInPlaceUpdate',
        message: 'SidecarSet agent: upgrading sidecars in place',
      });
      await waitFor(
        cluster,
        () => gateOf(pods(cluster)[0])?.reason === 'SidecarSetDeleted',
        'the gate open',
      );
      assert.equal(gateOf(pods(cluster)[0])?.status, 'True');
    }, fast);
  });
});
