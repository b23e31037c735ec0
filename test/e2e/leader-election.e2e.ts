/**
 * Two `sidecarset controller --leader-elect` processes on a real Lease, as the manifests'
 * ServiceAccount: the leader is killed (SIGKILL, the Lease left to expire) mid-rollout, the other
 * takes over and finishes; no pod is upgraded twice and maxUnavailable holds throughout. A leader
 * frozen until the other takes over exports none of the leader-only metrics once it thaws.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { CoreV1Api, CustomObjectsApi, Watch } from '@kubernetes/client-node';

import { ApiKubelet } from '../support/api-kubelet.js';
import type { PodJson } from '../scenarios/rollout.js';
import { sidecar } from '../scenarios/rollout.js';
import { replaceSidecarSet } from '../support/replace-sidecarset.js';
import { readAudit } from './audit.js';
import type { SidecarsetProcess } from './processes.js';
import type { Installation } from './support.js';
import { eventually } from '../support/eventually.js';
import { OUR_USER, install, scopeIncludes, useControlPlane } from './support.js';

const PODS = 12;
const MAX_UNAVAILABLE = 2;

const agent = (pod: PodJson): ReturnType<typeof sidecar> => sidecar(pod, 'agent');
const leading = (c: SidecarsetProcess): boolean =>
  c.logs.some((e) => e.msg === 'leading: reconciling SidecarSets');
/** The series only the leading replica exports (docs/monitoring.md). */
const LEADER_ONLY = /^sidecarset_(pods|rollout_paused|missed_pods)\{/m;
/** `sidecarset controller` flags for its metrics port. */
const WITH_METRICS = ['--metrics-port', '0', '--host', '127.0.0.1'];

/** The controller's /metrics, as text (the port it logged when it started listening). */
async function scrape(c: SidecarsetProcess): Promise<string> {
  const listening = await c.waitForLog(
    (e) => e.msg?.startsWith('Server listening at http://') === true,
    'the metrics port',
  );
  const url = (listening.msg ?? '').slice('Server listening at '.length);
  return (await fetch(`${url}/metrics`)).text();
}

describe('leader election on a real Lease', () => {
  const cluster = useControlPlane();
  const plane = cluster.plane;
  let installation: Installation;
  let kubelet: ApiKubelet;
  const controllers: SidecarsetProcess[] = [];
  /** Controllers killed by a test. */
  const killed = new Set<SidecarsetProcess>();

  before(async () => {
    installation = await install(plane());
    const serve = await installation.serve(['--controller', 'false']);
    cluster.defer(() => serve.stop());
    kubelet = new ApiKubelet(plane().kubeConfig(), { namespace: 'default', delayMs: 300 });
    cluster.defer(() => kubelet.stop());
    cluster.defer(() => Promise.all(controllers.map((c) => c.stop())));
  });

  it('the follower finishes the rollout of a killed leader: each pod upgraded once, the budget held', async () => {
    const kc = plane().kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const sidecarSets = { group: 'apps.kruise.io', version: 'v1beta1', plural: 'sidecarsets' };
    await custom.createClusterCustomObject({
      ...sidecarSets,
      body: {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'SidecarSet',
        metadata: { name: 'agent' },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          containers: [{ name: 'agent', image: 'agent:1' }],
          updateStrategy: { maxUnavailable: MAX_UNAVAILABLE },
        },
      },
    });
    for (let i = 0; i < PODS; i++) {
      await core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: `web-${String(i).padStart(2, '0')}`, labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
        },
      });
    }
    const list = async (): Promise<PodJson[]> =>
      (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' }))
        .items as unknown as PodJson[];
    await eventually(
      async () => (await list()).every((p) => agent(p).ready && agent(p).running === 'agent:1'),
      'pods injected and ready',
    );

    for (let replica = 0; replica < 2; replica++) {
      controllers.push(await installation.controller());
    }
    const leaderIndex = async (): Promise<number> => {
      let found = -1;
      await eventually(() => {
        found = controllers.findIndex((c) =>
          c.logs.some((e) => e.msg === 'leading: reconciling SidecarSets'),
        );
        return found >= 0;
      }, 'a leader');
      return found;
    };
    const first = await leaderIndex();

    // Unavailable: the sidecar's spec names the new image, but the new image is not running ready.
    const state = new Map<string, PodJson>();
    let worst = 0;
    const watch = await new Watch(kc).watch(
      '/api/v1/namespaces/default/pods',
      { labelSelector: 'app=web' },
      (_type: string, pod: PodJson) => {
        state.set(pod.metadata.name, pod);
        const unavailable = [...state.values()].filter((p) => {
          const a = agent(p);
          return a.spec === 'agent:2' && !(a.running === 'agent:2' && a.ready);
        }).length;
        worst = Math.max(worst, unavailable);
      },
      () => undefined,
    );
    try {
      await replaceSidecarSet(custom, 'agent', (spec) => {
        (spec.containers[0] as { image: string }).image = 'agent:2';
      });

      const onNew = async (): Promise<number> =>
        (await list()).filter((p) => agent(p).spec === 'agent:2').length;
      await eventually(async () => (await onNew()) >= 3, 'the rollout under way');
      const leader = controllers[first] as SidecarsetProcess;
      await leader.stop('SIGKILL');
      killed.add(leader);
      assert.ok((await onNew()) < PODS, 'the leader died mid-rollout');

      const follower = controllers[1 - first] as SidecarsetProcess;
      await eventually(
        async () => (await list()).every((p) => agent(p).running === 'agent:2' && agent(p).ready),
        'the follower to finish the rollout',
        90_000,
      );
      assert.ok(follower.logs.some((e) => e.msg === 'leading: reconciling SidecarSets'));
    } finally {
      watch.abort();
    }
    assert.ok(
      worst <= MAX_UNAVAILABLE,
      `never more than ${MAX_UNAVAILABLE} unavailable; saw ${worst}`,
    );

    // Each pod got the new image in exactly one patch, whichever replica sent it.
    const upgrades = new Map<string, number>();
    for (const event of await readAudit(plane().auditLog, OUR_USER)) {
      const ref = event.objectRef;
      if (event.verb !== 'patch' || ref?.resource !== 'pods' || ref.subresource !== undefined)
        continue;
      const body = event.requestObject as
        { spec?: { containers?: { image?: string }[] } } | undefined;
      if (body?.spec?.containers?.some((c) => c.image === 'agent:2') !== true) continue;
      upgrades.set(ref.name ?? '', (upgrades.get(ref.name ?? '') ?? 0) + 1);
    }
    assert.equal(upgrades.size, PODS, 'every pod was upgraded');
    assert.deepEqual([...new Set(upgrades.values())], [1], 'no pod was upgraded twice');
  });

  it('a rollout paused by failed pods stays paused across a failover, even once they recover', async () => {
    const kc = plane().kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const sidecarSets = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'sidecarsets' };
    await custom.createClusterCustomObject({
      ...sidecarSets,
      body: {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: {
          name: 'gated',
          annotations: { 'sidecarset.dev/progress-deadline-seconds': '2' },
        },
        spec: {
          selector: { matchLabels: { app: 'gated' } },
          containers: [{ name: 'gated', image: 'gated:1' }],
          updateStrategy: { maxUnavailable: 1 },
        },
      },
    });
    // Pods created before the leader's scope names the SidecarSet skip the webhook (ADR 12).
    await scopeIncludes(plane(), 'gated');
    for (let i = 0; i < 3; i++) {
      await core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: `gated-${i}`, labels: { app: 'gated' } },
          spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
        },
      });
    }
    const list = async (): Promise<PodJson[]> =>
      (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=gated' }))
        .items as unknown as PodJson[];
    const gated = (pod: PodJson): ReturnType<typeof sidecar> => sidecar(pod, 'gated');
    await eventually(
      async () => (await list()).every((p) => gated(p).ready && gated(p).running === 'gated:1'),
      'pods injected and ready',
    );
    const paused = async (): Promise<string | undefined> => {
      const ss = (await custom.getClusterCustomObject({ ...sidecarSets, name: 'gated' })) as {
        status?: { conditions?: { type: string; status: string; reason?: string }[] };
      };
      const c = ss.status?.conditions?.find((x) => x.type === 'RolloutPaused');
      return c === undefined ? undefined : `${c.status} ${c.reason ?? ''}`;
    };
    const alive = controllers.filter((c) => !killed.has(c));
    controllers.push(await installation.controller(WITH_METRICS));
    const leader = alive.find(leading);
    assert.ok(leader, 'a controller leads');

    kubelet.failImage('gated:never');
    try {
      await replaceSidecarSet(custom, 'gated', (spec) => {
        (spec.containers[0] as { image: string }).image = 'gated:never';
      });
      await eventually(async () => (await paused()) === 'True UnhealthyPods', 'paused');
    } finally {
      kubelet.healImage('gated:never');
    }
    // The failed pod recovers; the pause holds (it is in the status) through the failover.
    await eventually(
      async () => (await list()).some((p) => gated(p).running === 'gated:never' && gated(p).ready),
      'the pod recovered',
    );
    await leader.stop('SIGKILL');
    killed.add(leader);
    const next = controllers.at(-1) as SidecarsetProcess;
    await eventually(() => leading(next), 'the new controller leads', 60_000);
    await new Promise((resolve) => setTimeout(resolve, 4000));
    assert.equal(await paused(), 'True UnhealthyPods', 'still paused under the new leader');
    const onNew = (await list()).filter((p) => gated(p).spec === 'gated:never');
    assert.equal(onNew.length, 1, 'no more pods touched');
  });

  it('a leader frozen until another takes over exports no leader-only series once it thaws', async () => {
    // The leader of the previous test, with the pause of "gated" in its metrics.
    const leader = controllers.at(-1) as SidecarsetProcess;
    assert.ok(leading(leader) && !killed.has(leader), 'the previous test left a leader');
    const paused = 'sidecarset_rollout_paused{sidecarset="gated"} 1';
    await eventually(async () => (await scrape(leader)).includes(paused), 'the leader exports it');
    const other = await installation.controller(WITH_METRICS);
    controllers.push(other);
    await other.waitForLog((e) => e.msg === 'controller caches synced', 'the other synced');
    assert.doesNotMatch(await scrape(other), LEADER_ONLY, 'a follower exports none');

    // Frozen, the leader cannot renew; the other takes the Lease once it has expired.
    leader.freeze('SIGSTOP');
    try {
      await other.waitForLog(
        (e) => e.msg === 'leading: reconciling SidecarSets',
        'the other leads',
        60_000,
      );
    } finally {
      leader.freeze('SIGCONT');
    }
    await leader.waitForLog((e) => e.msg === 'stopped leading', 'the old leader steps down');
    const old = await scrape(leader);
    assert.doesNotMatch(old, LEADER_ONLY, 'the old leader exports none of its last values');
    assert.match(old, /^sidecarset_controller_leader 0$/m);
    await eventually(
      async () => (await scrape(other)).includes(paused),
      'the new leader exports it',
    );
  });
});
