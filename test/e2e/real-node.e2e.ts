/**
 * In-place sidecar upgrades on a real node: the stock kubelet, containerd and runc
 * (test/node-fixture), with the controller-manager and the scheduler, so pods come from real
 * Deployments and real kubelets restart real containers. `sidecarset serve` runs as the
 * manifests' ServiceAccount, as in the other e2e files. Images are the node fixture's
 * (test/node-fixture/images.ts); pods use the host's network and exec readiness probes, so no
 * traffic leaves 127.0.0.1; logs are read from the kubelet's log folder.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { TestContext } from 'node:test';

import {
  AdmissionregistrationV1Api,
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';

import { TEST_IMAGES } from '../node-fixture/images.js';
import {
  must,
  nameOf,
  uidOf,
  statusOf,
  specImage,
  isReady,
  runsReady,
  envList,
  sidecarContainer,
  appContainer,
  gateOf,
  mostClosedGates,
  PodWatch,
} from './pods.js';
import { eventually } from '../support/eventually.js';
import { replaceSidecarSet } from '../support/replace-sidecarset.js';
import type { ProcessRun, SidecarsetProcess } from './processes.js';
import { errors, lastWords, runProcess } from './processes.js';
import type { Installation } from './support.js';
import { install, scopeIncludes, useControlPlane } from './support.js';

const SIDECARSETS = { group: 'apps.kruise.io', version: 'v1beta1', plural: 'sidecarsets' };
/** A real node is slower than the test kubelet: image restarts, probes, a 2-core machine. */
const SLOW = 120_000;

interface SidecarSetStatus {
  observedGeneration?: number;
  matchedPods?: number;
  updatedPods?: number;
  readyPods?: number;
  updatedReadyPods?: number;
  missedPods?: number;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
}

interface SidecarSetJson {
  metadata: { generation?: number };
  spec: { containers: { image: string }[] };
  status?: SidecarSetStatus;
}

describe('in-place sidecar upgrades on a real node (kubelet, containerd, runc)', () => {
  const cluster = useControlPlane({ node: true });
  const plane = cluster.plane;
  let installation: Installation;
  let serve: SidecarsetProcess;
  let core: CoreV1Api;
  let apps: AppsV1Api;
  let custom: CustomObjectsApi;

  before(async () => {
    installation = await install(plane());
    serve = await installation.serve();
    cluster.defer(async () => {
      await serve.stop();
    });
    const kubeConfig = plane().kubeConfig();
    core = kubeConfig.makeApiClient(CoreV1Api);
    apps = kubeConfig.makeApiClient(AppsV1Api);
    custom = kubeConfig.makeApiClient(CustomObjectsApi);
  });

  const pods = async (namespace: string): Promise<V1Pod[]> =>
    (await core.listNamespacedPod({ namespace })).items.filter(
      (p) => p.metadata?.deletionTimestamp === undefined,
    );

  const sidecarSet = async (name: string): Promise<SidecarSetJson> =>
    (await custom.getClusterCustomObject({ ...SIDECARSETS, name })) as SidecarSetJson;

  async function createSidecarSet(
    name: string,
    namespace: string,
    spec: Record<string, unknown>,
    annotations: Record<string, string> = {},
  ): Promise<void> {
    await custom.createClusterCustomObject({
      ...SIDECARSETS,
      body: {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'SidecarSet',
        metadata: { name, annotations },
        spec: {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
          selector: { matchLabels: { app: 'nginx' } },
          ...spec,
        },
      },
    });
    await scopeIncludes(plane(), namespace);
  }

  /** A Deployment of hostNetwork pods running the app image; waits until they are all Ready. */
  /** The pods `app: nginx` of a workload: the app container, quick to stop; `spec` added. */
  const nginxTemplate = (spec: Record<string, unknown> = {}) => ({
    metadata: { labels: { app: 'nginx' } },
    spec: {
      hostNetwork: true,
      terminationGracePeriodSeconds: 2,
      containers: [appContainer()],
      ...spec,
    },
  });

  async function createDeployment(
    namespace: string,
    replicas: number,
    template: Record<string, unknown> = {},
  ): Promise<V1Pod[]> {
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: 'nginx' },
        spec: {
          replicas,
          selector: { matchLabels: { app: 'nginx' } },
          template: nginxTemplate(template),
        },
      },
    });
    let ready: V1Pod[] = [];
    await eventually(
      async () => {
        ready = (await pods(namespace)).filter(isReady);
        return ready.length === replicas;
      },
      `${replicas} pods of the Deployment Ready in ${namespace}`,
      SLOW,
    );
    return ready;
  }

  /**
   * Scales the Deployment of `namespace` to zero when the test ends. Every sidecar here has an exec
   * readiness probe each second (a `runc exec`); pods left running by finished tests would load the
   * two cores the node shares with the control plane, and slow the tests still running.
   */
  function stopPodsAfter(t: TestContext, namespace: string): void {
    t.after(() => scaleDeployment(namespace, 0));
  }

  async function scaleDeployment(namespace: string, replicas: number): Promise<void> {
    await apps.patchNamespacedDeploymentScale(
      { namespace, name: 'nginx', body: { spec: { replicas } } },
      // A merge patch, as `kubectl scale` sends.
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  async function setImage(name: string, image: string, container = 0): Promise<void> {
    await replaceSidecarSet(custom, name, (spec) => {
      must((spec['containers'] as { image: string }[])[container], 'container').image = image;
    });
  }

  async function waitStatus(name: string, expected: SidecarSetStatus): Promise<SidecarSetJson> {
    let last: SidecarSetJson | undefined;
    await eventually(
      async () => {
        last = await sidecarSet(name);
        return (
          last.status?.observedGeneration === last.metadata.generation &&
          Object.entries(expected).every(
            ([key, value]) => last?.status?.[key as keyof SidecarSetStatus] === value,
          )
        );
      },
      () => `status ${JSON.stringify(expected)} of ${name} (last: ${JSON.stringify(last?.status)})`,
      SLOW,
    );
    return must(last, 'SidecarSet');
  }

  async function rolloutPaused(name: string) {
    return (await sidecarSet(name)).status?.conditions?.find((c) => c.type === 'RolloutPaused');
  }

  /**
   * A ValidatingAdmissionPolicy and its binding that refuse pod updates in `namespace` putting
   * `image` in a container, as an image policy would (in-process CEL: no webhook); resolves once
   * the API server enforces it (a server-side dry run is refused).
   */
  async function refuseImage(namespace: string, image: string) {
    const admission = plane().kubeConfig().makeApiClient(AdmissionregistrationV1Api);
    const policy = `refuse-${namespace}`;
    await admission.createValidatingAdmissionPolicy({
      body: {
        metadata: { name: policy },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
            resourceRules: [
              { apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['pods'] },
            ],
          },
          validations: [
            {
              expression: `object.spec.containers.all(c, c.image != '${image}')`,
              message: `${image} is not allowed here`,
            },
          ],
        },
      },
    });
    await admission.createValidatingAdmissionPolicyBinding({
      body: {
        metadata: { name: policy },
        spec: { policyName: policy, validationActions: ['Deny'] },
      },
    });
    const [pod] = await pods(namespace);
    const podName = nameOf(must(pod, 'pod'));
    await eventually(
      async () => {
        try {
          await core.patchNamespacedPod(
            {
              namespace,
              name: podName,
              dryRun: 'All',
              body: { spec: { containers: [{ name: 'agent', image }] } },
            },
            setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
          );
          return false;
        } catch (err) {
          return String(err).includes(policy);
        }
      },
      `the policy ${policy} enforced`,
      SLOW,
    );
    let removed = false;
    return {
      policy,
      async remove() {
        if (removed) return;
        removed = true;
        await admission.deleteValidatingAdmissionPolicyBinding({ name: policy });
        await admission.deleteValidatingAdmissionPolicy({ name: policy });
      },
    };
  }

  /** `sidecarset ARGS` as the admin, as a person runs it. */
  const cli = (args: readonly string[]): Promise<ProcessRun> =>
    runProcess(process.execPath, ['bin/sidecarset.js', ...args], {
      KUBECONFIG: plane().adminKubeconfig,
    });

  it('the node is Ready with containerd 2 and the kubelet of the control plane', async () => {
    const node = await core.readNode({ name: cluster.node().name });
    const info = must(node.status?.nodeInfo, 'nodeInfo');
    assert.equal(info.kubeletVersion, await plane().version());
    assert.match(info.containerRuntimeVersion, /^containerd:\/\/2\./);
  });

  // Each in a namespace and SidecarSet of its own: side by side, as a cluster runs them.
  describe('rollouts side by side', { concurrency: true }, () => {
    it("the seed's story: 6 pods of a Deployment injected at creation, then v1→v2 in place with partition and maxUnavailable", async (t) => {
      const namespace = 'shop';
      const name = 'logtail-sidecarset';
      await plane().createNamespace(namespace);
      await createSidecarSet(name, namespace, {
        updateStrategy: { type: 'RollingUpdate', partition: 2, maxUnavailable: 2 },
        containers: [
          {
            ...sidecarContainer('logtail', TEST_IMAGES.sidecarV1, {
              TESTD_SHARE_DIR: '/var/log/nginx',
            }),
            volumeMounts: [{ name: 'nginx-log', mountPath: '/var/log/nginx' }],
            transferEnv: [{ sourceContainerName: 'nginx', envName: 'TZ' }],
          },
        ],
        volumes: [{ name: 'nginx-log', emptyDir: {} }],
      });
      const created = await createDeployment(namespace, 6, {
        containers: [
          {
            ...appContainer({ TESTD_SHARE_DIR: '/var/log/nginx' }),
            volumeMounts: [{ name: 'nginx-log', mountPath: '/var/log/nginx' }],
          },
        ],
        volumes: [{ name: 'nginx-log', emptyDir: {} }],
      });
      stopPodsAfter(t, namespace);
      const node = cluster.node();

      // Injected at creation: the sidecar first, started before the app, sharing the volume, with
      // the app's TZ.
      for (const pod of created) {
        const podName = nameOf(pod);
        assert.deepEqual(
          pod.spec?.containers.map((c) => c.name),
          ['logtail', 'nginx'],
        );
        const startedAt = (container: string): number =>
          new Date(
            must(statusOf(pod, container)?.state?.running?.startedAt, 'startedAt'),
          ).getTime();
        const sidecarStarted = startedAt('logtail');
        const appStarted = startedAt('nginx');
        assert.ok(sidecarStarted <= appStarted, `${podName}: the sidecar started first`);
        await eventually(
          async () => {
            const runs = await node.containerLogs(namespace, podName, 'logtail');
            return runs[0]?.some((l) => l.includes('share=logtail,nginx')) === true;
          },
          `${podName}: both containers writing in the shared volume`,
          SLOW,
        );
        const [firstRun] = await node.containerLogs(namespace, podName, 'logtail');
        assert.match(firstRun?.[0] ?? '', /name=logtail version=v1 started .* TZ=Asia\/Shanghai$/);
      }
      await waitStatus(name, { matchedPods: 6, updatedPods: 6, readyPods: 6, updatedReadyPods: 6 });

      const before = new Map(created.map((p) => [nameOf(p), p]));
      const watch = await PodWatch.start(plane().kubeConfig(), namespace);
      try {
        await setImage(name, TEST_IMAGES.sidecarV2);
        // The partition keeps 2 pods on v1.
        await waitStatus(name, {
          matchedPods: 6,
          updatedPods: 4,
          updatedReadyPods: 4,
          readyPods: 6,
        });
        await new Promise((resolve) => setTimeout(resolve, 3000));
        const held = (await pods(namespace)).filter((p) =>
          runsReady(p, 'logtail', TEST_IMAGES.sidecarV1),
        );
        assert.equal(held.length, 2, 'the partition held 2 pods on v1');
        for (const pod of held) assert.equal(statusOf(pod, 'logtail')?.restartCount, 0);

        await replaceSidecarSet(custom, name, (spec) => {
          (spec['updateStrategy'] as Record<string, unknown>)['partition'] = 0;
        });
        const done = await waitStatus(name, {
          matchedPods: 6,
          updatedPods: 6,
          readyPods: 6,
          updatedReadyPods: 6,
        });
        assert.ok(
          watch.worstUnready <= 2,
          `at most 2 pods unready at once, saw ${watch.worstUnready}`,
        );
        assert.ok(watch.worstUnready >= 1, 'the restarts were seen (pods unready for a moment)');

        const after = await pods(namespace);
        assert.equal(after.length, 6);
        // What the kubelet reports agrees with the SidecarSet's status.
        assert.equal(after.filter(isReady).length, done.status?.readyPods);
        assert.equal(
          after.filter((p) => runsReady(p, 'logtail', TEST_IMAGES.sidecarV2)).length,
          done.status?.updatedReadyPods,
        );
        for (const pod of after) {
          const podName = nameOf(pod);
          const old = before.get(podName);
          assert.ok(old !== undefined, `${podName} is the same pod (no pod was recreated)`);
          assert.equal(uidOf(pod), uidOf(old));
          const sidecarNow = must(statusOf(pod, 'logtail'), 'sidecar status');
          const sidecarThen = must(statusOf(old, 'logtail'), 'sidecar status');
          assert.equal(sidecarNow.restartCount, 1, `${podName}: the sidecar restarted once`);
          assert.notEqual(sidecarNow.containerID, sidecarThen.containerID);
          assert.notEqual(sidecarNow.imageID, sidecarThen.imageID);
          assert.equal(sidecarNow.image, TEST_IMAGES.sidecarV2);
          const appNow = statusOf(pod, 'nginx');
          assert.equal(
            appNow?.containerID,
            statusOf(old, 'nginx')?.containerID,
            `${podName}: app untouched`,
          );
          assert.equal(appNow?.restartCount, 0);
          // The latest run's log (the first run's may be gone: the kubelet keeps one stopped
          // container per container, and its garbage collection counts a created, not yet
          // started, one among them).
          const runs = await node.containerLogs(namespace, podName, 'logtail');
          assert.match(
            runs.at(-1)?.[0] ?? '',
            /name=logtail version=v2 started .* TZ=Asia\/Shanghai$/,
          );
        }
      } finally {
        watch.stop();
      }
    });

    it('a second image change while the first rollout restarts pods stays within maxUnavailable', async (t) => {
      const namespace = 'twice';
      const name = 'twice-agent';
      await plane().createNamespace(namespace);
      await createSidecarSet(name, namespace, {
        updateStrategy: { maxUnavailable: 2 },
        containers: [sidecarContainer('agent', TEST_IMAGES.sidecarV1, { TESTD_READY_AFTER: '4s' })],
      });
      await createDeployment(namespace, 6);
      stopPodsAfter(t, namespace);
      await waitStatus(name, { matchedPods: 6, updatedReadyPods: 6 });
      const watch = await PodWatch.start(plane().kubeConfig(), namespace);
      try {
        await setImage(name, TEST_IMAGES.sidecarV2);
        await eventually(
          async () =>
            (await pods(namespace)).some(
              (p) => specImage(p, 'agent') === TEST_IMAGES.sidecarV2 && !isReady(p),
            ),
          'the first pods restarting for v2',
          SLOW,
        );
        await setImage(name, TEST_IMAGES.sidecarV3);
        await waitStatus(name, {
          matchedPods: 6,
          updatedPods: 6,
          updatedReadyPods: 6,
          readyPods: 6,
        });
        assert.ok(
          watch.worstUnready <= 2,
          `at most 2 pods unready at once, saw ${watch.worstUnready}`,
        );
        for (const pod of await pods(namespace)) {
          assert.ok(runsReady(pod, 'agent', TEST_IMAGES.sidecarV3), pod.metadata?.name);
          assert.equal(statusOf(pod, 'nginx')?.restartCount, 0);
        }
      } finally {
        watch.stop();
      }
    });

    for (const failure of [
      { image: TEST_IMAGES.missing, what: 'an image the node does not have' },
      { image: TEST_IMAGES.sidecarCrash, what: 'an image that crash-loops' },
    ]) {
      it(`the health gate pauses on ${failure.what}; rollout undo brings the pods back in place`, async (t) => {
        const namespace = failure.image === TEST_IMAGES.missing ? 'gate-missing' : 'gate-crash';
        const name = `${namespace}-agent`;
        await plane().createNamespace(namespace);
        await createSidecarSet(
          name,
          namespace,
          {
            updateStrategy: { maxUnavailable: 1 },
            containers: [sidecarContainer('agent', TEST_IMAGES.sidecarV1)],
          },
          {
            'sidecarset.dev/progress-deadline-seconds': '10',
            'sidecarset.dev/max-sidecar-restarts': '1',
          },
        );
        const created = await createDeployment(namespace, 3);
        stopPodsAfter(t, namespace);
        await waitStatus(name, { matchedPods: 3, updatedReadyPods: 3 });
        const uids = new Map(created.map((p) => [uidOf(p), statusOf(p, 'nginx')?.containerID]));

        await setImage(name, failure.image);
        await eventually(
          async () => (await rolloutPaused(name))?.status === 'True',
          'RolloutPaused',
          SLOW,
        );
        const paused = await rolloutPaused(name);
        assert.equal(paused?.reason, 'UnhealthyPods');
        const broken = (await pods(namespace)).filter(
          (p) => specImage(p, 'agent') === failure.image,
        );
        assert.equal(broken.length, 1, 'maxUnavailable 1: one pod tried the image, then the pause');
        assert.ok(
          paused.message?.includes(nameOf(must(broken[0], 'broken pod'))),
          `the condition names the pod: ${paused.message ?? ''}`,
        );

        const undo = await cli(['rollout', 'undo', name]);
        assert.equal(undo.code, 0, undo.out);
        await waitStatus(name, {
          matchedPods: 3,
          updatedPods: 3,
          updatedReadyPods: 3,
          readyPods: 3,
        });
        const after = await pods(namespace);
        assert.deepEqual(
          after.map(uidOf).sort(),
          [...uids.keys()].sort(),
          'the same pods, upgraded back in place',
        );
        for (const pod of after) {
          assert.ok(runsReady(pod, 'agent', TEST_IMAGES.sidecarV1), pod.metadata?.name);
          assert.equal(statusOf(pod, 'nginx')?.containerID, uids.get(uidOf(pod)));
          assert.equal(statusOf(pod, 'nginx')?.restartCount, 0);
        }
      });
    }

    it('a hot upgrade with real containers: the new image in the empty slot, then the flip; the app never loses its sidecar', async (t) => {
      const namespace = 'hot';
      const name = 'hot-agent';
      await plane().createNamespace(namespace);
      await createSidecarSet(name, namespace, {
        updateStrategy: { maxUnavailable: 2 },
        containers: [
          {
            ...sidecarContainer('agent', TEST_IMAGES.sidecarV1),
            upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: TEST_IMAGES.empty },
          },
        ],
      });
      const created = await createDeployment(namespace, 2);
      stopPodsAfter(t, namespace);
      const slots = (pod: V1Pod): string =>
        ['agent-1', 'agent-2'].map((c) => specImage(pod, c) ?? '').join();
      for (const pod of created) {
        assert.equal(slots(pod), `${TEST_IMAGES.sidecarV1},${TEST_IMAGES.empty}`);
      }
      const appIds = new Map(created.map((p) => [uidOf(p), statusOf(p, 'nginx')?.containerID]));
      const watch = await PodWatch.start(plane().kubeConfig(), namespace);
      try {
        await setImage(name, TEST_IMAGES.sidecarV2);
        await eventually(
          async () =>
            (await pods(namespace)).every(
              (p) =>
                slots(p) === `${TEST_IMAGES.empty},${TEST_IMAGES.sidecarV2}` &&
                runsReady(p, 'agent-2', TEST_IMAGES.sidecarV2) &&
                runsReady(p, 'agent-1', TEST_IMAGES.empty),
            ),
          'v2 in the second slot, the first back on the empty image',
          SLOW,
        );
        const describe = (p: V1Pod): string =>
          `${p.metadata?.name ?? ''}@${p.metadata?.resourceVersion ?? ''} ` +
          JSON.stringify(
            (p.status?.containerStatuses ?? []).map((s) => [s.name, s.image, s.ready, s.state]),
          );
        // At every moment the kubelet reported, one slot ran a real sidecar. (Running, not
        // ready: a readiness probe may time out on a loaded machine, which the controller does
        // not cause; what it decides is checked next.)
        const running = (pod: V1Pod): boolean =>
          ['agent-1', 'agent-2'].some((c) => {
            const status = statusOf(pod, c);
            return status?.state?.running !== undefined && status.image !== TEST_IMAGES.empty;
          });
        const lost = watch.history.filter((p) => p.status?.phase === 'Running' && !running(p));
        assert.deepEqual(lost.map(describe), [], 'pod versions without a running sidecar');
        // The flip (the old slot back on the empty image) was written, guarded by the version the
        // controller read, only when that version showed the new slot running v2, ready.
        for (const uid of appIds.keys()) {
          const versions = watch.history.filter((p) => uidOf(p) === uid);
          const flip = versions.findIndex(
            (p) =>
              specImage(p, 'agent-1') === TEST_IMAGES.empty &&
              specImage(p, 'agent-2') === TEST_IMAGES.sidecarV2,
          );
          assert.ok(flip > 0, `the flip of ${uid} was seen`);
          const read = versions[flip - 1] as V1Pod;
          assert.ok(runsReady(read, 'agent-2', TEST_IMAGES.sidecarV2), describe(read));
        }
      } finally {
        watch.stop();
      }
      for (const pod of await pods(namespace)) {
        assert.equal(
          pod.metadata?.annotations?.['kruise.io/sidecarset-working-hotupgrade-container'],
          '{"agent":"agent-2"}',
        );
        assert.equal(statusOf(pod, 'nginx')?.containerID, appIds.get(uidOf(pod)));
      }
    });
  });

  // Beyond the image (docs/adr/0022-resources-and-native-sidecars-in-place.md, ADR 21).
  describe('beyond the image', { concurrency: true }, () => {
    const resources = (cpu: string, memory: string) => ({
      limits: { cpu, memory },
      requests: { cpu, memory },
    });

    it('resources change in place through pods/resize: nothing restarts, the cgroups follow, maxUnavailable at a time', async (t) => {
      const namespace = 'resize';
      const name = 'resize-sidecarset';
      await plane().createNamespace(namespace);
      await createSidecarSet(name, namespace, {
        updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1 },
        containers: [
          {
            ...sidecarContainer('agent', TEST_IMAGES.sidecarV1),
            resources: resources('100m', '64Mi'),
          },
        ],
      });
      const created = await createDeployment(namespace, 3);
      stopPodsAfter(t, namespace);
      const before = new Map(created.map((p) => [nameOf(p), must(statusOf(p, 'agent'), 'agent')]));
      const node = cluster.node();
      for (const pod of created) {
        const id = must(statusOf(pod, 'agent')?.containerID, 'containerID');
        assert.equal(await node.containerCgroupFile(id, 'cpu.cfs_quota_us'), '10000');
      }
      const watch = await PodWatch.start(plane().kubeConfig(), namespace);
      try {
        await replaceSidecarSet(custom, name, (spec) => {
          const agent = must((spec['containers'] as Record<string, unknown>[])[0], 'agent');
          agent['resources'] = resources('200m', '96Mi');
        });
        await waitStatus(name, { matchedPods: 3, updatedPods: 3, updatedReadyPods: 3 });
        for (const pod of await pods(namespace)) {
          const podName = nameOf(pod);
          const was = must(before.get(podName), `${podName} before`);
          const agent = must(statusOf(pod, 'agent'), 'agent status');
          assert.equal(agent.containerID, was.containerID, `${podName}: the same container`);
          assert.equal(agent.restartCount, was.restartCount, `${podName}: not restarted`);
          assert.deepEqual(agent.resources?.limits, { cpu: '200m', memory: '96Mi' });
          const id = must(agent.containerID, 'containerID');
          assert.equal(await node.containerCgroupFile(id, 'cpu.cfs_quota_us'), '20000');
          assert.equal(
            await node.containerCgroupFile(id, 'memory.limit_in_bytes'),
            String(96 * 1024 * 1024),
          );
        }
        // Paced: never two pods asked for the new resources before the kubelet applied them.
        const resizing = new Map<string, boolean>();
        let worst = 0;
        for (const pod of watch.history) {
          const spec = pod.spec?.containers.find((c) => c.name === 'agent')?.resources?.limits;
          const applied = statusOf(pod, 'agent')?.resources?.limits;
          resizing.set(nameOf(pod), spec?.['cpu'] === '200m' && applied?.['cpu'] !== '200m');
          worst = Math.max(worst, [...resizing.values()].filter(Boolean).length);
        }
        assert.ok(worst <= 1, `${worst} pods resizing at once`);
        assert.equal(watch.worstUnready, 0, 'a resize restarts nothing, so no pod left Ready');
      } finally {
        watch.stop();
      }
    });

    it('a resize the node cannot fit is Infeasible: the health gate pauses; rollout undo resizes back', async (t) => {
      const namespace = 'resize-infeasible';
      const name = `${namespace}-agent`;
      await plane().createNamespace(namespace);
      await createSidecarSet(name, namespace, {
        updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1 },
        containers: [
          {
            ...sidecarContainer('agent', TEST_IMAGES.sidecarV1),
            resources: resources('100m', '64Mi'),
          },
        ],
      });
      const created = await createDeployment(namespace, 2);
      stopPodsAfter(t, namespace);
      await waitStatus(name, { matchedPods: 2, updatedReadyPods: 2 });
      const agents = new Map(created.map((p) => [uidOf(p), statusOf(p, 'agent')?.containerID]));
      const cpuLimit = (pod: V1Pod) =>
        pod.spec?.containers.find((c) => c.name === 'agent')?.resources?.limits?.['cpu'];

      await replaceSidecarSet(custom, name, (spec) => {
        const agent = must((spec['containers'] as Record<string, unknown>[])[0], 'agent');
        agent['resources'] = resources('64', '64Mi'); // more cpus than the node has
      });
      await eventually(
        async () => (await rolloutPaused(name))?.status === 'True',
        'RolloutPaused',
        SLOW,
      ).catch(async (err: unknown) => {
        const seen = (await pods(namespace)).map((p) => ({
          resources: p.spec?.containers.find((c) => c.name === 'agent')?.resources,
          status: statusOf(p, 'agent')?.resources,
          conditions: p.status?.conditions,
          annotations: p.metadata?.annotations,
        }));
        throw new Error(`${String(err)}\n${JSON.stringify(seen)}\n${lastWords(serve, 20)}`);
      });
      // The API server refuses a resize the node cannot fit (403, NodeCapacity): the pod records
      // it, is not tried again, and counts as failed.
      const paused = must(await rolloutPaused(name), 'RolloutPaused');
      assert.equal(paused.reason, 'UnhealthyPods');
      assert.match(paused.message ?? '', /refused the resize: .*allocatable/);
      const refused = (await pods(namespace)).filter(
        (p) => p.metadata?.annotations?.['sidecarset.dev/resize-refused'] !== undefined,
      );
      assert.equal(refused.length, 1, 'maxUnavailable 1: one pod tried, then the pause');
      assert.ok((await pods(namespace)).every((p) => cpuLimit(p) === '100m'));

      const undo = await cli(['rollout', 'undo', name]);
      assert.equal(undo.code, 0, undo.out);
      await waitStatus(name, { matchedPods: 2, updatedPods: 2, updatedReadyPods: 2, readyPods: 2 });
      for (const pod of await pods(namespace)) {
        assert.equal(cpuLimit(pod), '100m', `${nameOf(pod)} resized back`);
        assert.equal(statusOf(pod, 'agent')?.resources?.limits?.['cpu'], '100m');
        assert.equal(
          statusOf(pod, 'agent')?.containerID,
          agents.get(uidOf(pod)),
          'never restarted',
        );
      }
    });

    it('a native sidecar (init container, restartPolicy Always) is upgraded in place; the app is untouched', async (t) => {
      const namespace = 'native';
      const name = 'native-sidecarset';
      await plane().createNamespace(namespace);
      await createSidecarSet(name, namespace, {
        updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1 },
        initContainers: [
          { ...sidecarContainer('proxy', TEST_IMAGES.sidecarV1), restartPolicy: 'Always' },
        ],
      });
      const created = await createDeployment(namespace, 2);
      stopPodsAfter(t, namespace);
      for (const pod of created) {
        assert.deepEqual(
          pod.spec?.initContainers?.map((c) => [c.name, c.restartPolicy]),
          [['proxy', 'Always']],
        );
      }
      const before = new Map(created.map((p) => [nameOf(p), p]));
      await replaceSidecarSet(custom, name, (spec) => {
        const proxy = must((spec['initContainers'] as Record<string, unknown>[])[0], 'proxy');
        proxy['image'] = TEST_IMAGES.sidecarV2;
      });
      await waitStatus(name, { matchedPods: 2, updatedPods: 2, updatedReadyPods: 2 });
      for (const pod of await pods(namespace)) {
        const was = must(before.get(nameOf(pod)), 'the pod before');
        assert.ok(runsReady(pod, 'proxy', TEST_IMAGES.sidecarV2), `${nameOf(pod)} runs proxy v2`);
        assert.equal(
          statusOf(pod, 'proxy')?.restartCount,
          (statusOf(was, 'proxy')?.restartCount ?? 0) + 1,
        );
        assert.equal(statusOf(pod, 'nginx')?.containerID, statusOf(was, 'nginx')?.containerID);
        assert.equal(statusOf(pod, 'nginx')?.restartCount, statusOf(was, 'nginx')?.restartCount);
      }
    });

    it('a Job whose sidecar has KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT completes: the sidecar is native', async () => {
      const namespace = 'jobs';
      await plane().createNamespace(namespace);
      await createSidecarSet('job-sidecarset', namespace, {
        containers: [
          sidecarContainer('logger', TEST_IMAGES.sidecarV1, {
            KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT: 'true',
          }),
        ],
      });
      const batch = plane().kubeConfig().makeApiClient(BatchV1Api);
      await batch.createNamespacedJob({
        namespace,
        body: {
          metadata: { name: 'report' },
          spec: {
            backoffLimit: 0,
            template: {
              metadata: { labels: { app: 'nginx' } },
              spec: {
                hostNetwork: true,
                restartPolicy: 'Never',
                terminationGracePeriodSeconds: 2,
                containers: [{ ...appContainer({ TESTD_EXIT_AFTER: '3s' }), name: 'work' }],
              },
            },
          },
        },
      });
      await eventually(
        async () =>
          (await batch.readNamespacedJob({ namespace, name: 'report' })).status?.succeeded === 1,
        'the Job succeeded',
        SLOW,
      );
      const [pod] = (await core.listNamespacedPod({ namespace })).items;
      assert.deepEqual(
        pod?.spec?.initContainers?.map((c) => [c.name, c.restartPolicy]),
        [['logger', 'Always']],
      );
      assert.equal(pod.status?.phase, 'Succeeded');
    });

    /** `<namespace>-agent` in a new namespace: one sidecar, maxUnavailable 1, recreation on. */
    async function recreatingSidecarSet(
      namespace: string,
      env: Record<string, string>,
      annotations: Record<string, string> = {},
    ): Promise<string> {
      const name = `${namespace}-agent`;
      await plane().createNamespace(namespace);
      await createSidecarSet(
        name,
        namespace,
        {
          updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1 },
          containers: [sidecarContainer('agent', TEST_IMAGES.sidecarV1, env)],
        },
        { 'sidecarset.dev/recreate-pods': 'true', ...annotations },
      );
      return name;
    }

    it('an opted-in env change recreates pods through evictions; a PDB allowing no disruption stops it, with the reason', async (t) => {
      const namespace = 'recreate';
      const name = await recreatingSidecarSet(namespace, { MODE: 'a' });
      const created = await createDeployment(namespace, 3);
      stopPodsAfter(t, namespace);
      await waitStatus(name, { matchedPods: 3, updatedPods: 3, updatedReadyPods: 3 });
      const policy = plane().kubeConfig().makeApiClient(PolicyV1Api);
      await policy.createNamespacedPodDisruptionBudget({
        namespace,
        body: {
          metadata: { name: 'nginx' },
          spec: { minAvailable: 3, selector: { matchLabels: { app: 'nginx' } } },
        },
      });
      await eventually(
        async () => {
          const pdb = await policy.readNamespacedPodDisruptionBudget({ namespace, name: 'nginx' });
          return pdb.status?.currentHealthy === 3 && pdb.status.disruptionsAllowed === 0;
        },
        'the disruption controller counts 3 healthy pods, allowing no disruption',
        SLOW,
      );
      const agentMode = (pod: V1Pod) =>
        pod.spec?.containers.find((c) => c.name === 'agent')?.env?.find((e) => e.name === 'MODE')
          ?.value;

      await replaceSidecarSet(custom, name, (spec) => {
        const agent = must((spec['containers'] as Record<string, unknown>[])[0], 'agent');
        agent['env'] = envList({ MODE: 'b' });
      });
      // Stopped by the budget: the reason on the pod, in an event and in the status.
      let refused: V1Pod | undefined;
      await eventually(
        async () => {
          refused = (await pods(namespace)).find(
            (p) => p.metadata?.annotations?.['sidecarset.dev/eviction-refused'] !== undefined,
          );
          return refused !== undefined;
        },
        'a pod records the refused eviction',
        SLOW,
      );
      const refusal = must(refused?.metadata?.annotations, 'annotations')[
        'sidecarset.dev/eviction-refused'
      ];
      assert.match(refusal ?? '', /disruption budget/);
      // The event follows the pod's annotation: look until it is there.
      let warning: CoreV1Event | undefined;
      await eventually(
        async () => {
          const events = await core.listNamespacedEvent({
            namespace,
            fieldSelector: `involvedObject.name=${nameOf(must(refused, 'pod'))},reason=EvictionRefused`,
          });
          warning = events.items[0];
          return warning !== undefined;
        },
        'the EvictionRefused event',
        SLOW,
      );
      assert.equal(warning?.type, 'Warning');
      assert.match(warning.message ?? '', /cannot be evicted to be recreated: .*disruption budget/);
      await eventually(
        async () =>
          /cannot be evicted now: .*disruption budget/.test(
            (await sidecarSet(name)).status?.conditions?.find((c) => c.type === 'Reconciling')
              ?.message ?? '',
          ),
        'the Reconciling condition says why',
        SLOW,
      );
      const status = await cli(['rollout', 'status', name]);
      assert.match(status.out, /eviction refused.*disruption budget/);
      const remaining = await pods(namespace);
      assert.deepEqual(
        remaining.map(uidOf).sort(),
        created.map(uidOf).sort(),
        'no pod was evicted while the budget allows none',
      );

      // Without the budget the controller paces the recreation itself.
      const watch = await PodWatch.start(plane().kubeConfig(), namespace);
      try {
        await policy.deleteNamespacedPodDisruptionBudget({ namespace, name: 'nginx' });
        await waitStatus(name, { matchedPods: 3, updatedPods: 3, updatedReadyPods: 3 });
        const now = await pods(namespace);
        assert.equal(now.length, 3);
        for (const pod of now) {
          assert.ok(!created.some((c) => uidOf(c) === uidOf(pod)), `${nameOf(pod)} is new`);
          assert.equal(agentMode(pod), 'b', `${nameOf(pod)} has the new sidecar`);
          assert.ok(isReady(pod), `${nameOf(pod)} Ready`);
        }
        assert.ok(watch.worstUnready <= 1, `${watch.worstUnready} pods not Ready at once`);
      } finally {
        watch.stop();
      }
      // One eviction a round (maxUnavailable 1): the SidecarSet's event, repeated three times.
      const started = await core.listNamespacedEvent({
        namespace: 'default',
        fieldSelector: `involvedObject.name=${name},reason=RecreateStarted`,
      });
      assert.equal(started.items.length, 1);
      assert.match(
        started.items[0]?.message ?? '',
        /^evicted 1 pod\(s\) so that their controllers recreate them/,
      );
      assert.equal(started.items[0]?.count, 3);
    });

    it('a StatefulSet: a pod evicted counts until the StatefulSet has created it again', async (t) => {
      // A StatefulSet creates a pod again only once the old one is gone: in between, the
      // eviction must still count against maxUnavailable (issue 37, point 6).
      const namespace = 'recreate-sts';
      const name = await recreatingSidecarSet(namespace, { MODE: 'a' });
      await apps.createNamespacedStatefulSet({
        namespace,
        body: {
          metadata: { name: 'db' },
          spec: {
            replicas: 3,
            serviceName: 'db',
            podManagementPolicy: 'Parallel',
            selector: { matchLabels: { app: 'nginx' } },
            template: nginxTemplate(),
          },
        },
      });
      t.after(() =>
        apps.patchNamespacedStatefulSetScale(
          { namespace, name: 'db', body: { spec: { replicas: 0 } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      );
      await waitStatus(name, { matchedPods: 3, updatedPods: 3, updatedReadyPods: 3 });
      const created = await pods(namespace);
      const watch = await PodWatch.start(plane().kubeConfig(), namespace);
      try {
        await eventually(
          () => Promise.resolve(watch.pods.size === 3 && [...watch.pods.values()].every(isReady)),
          'the watch holds the 3 Ready pods',
          SLOW,
        );
        watch.fewestPresent = 3;
        await replaceSidecarSet(custom, name, (spec) => {
          const agent = must((spec['containers'] as Record<string, unknown>[])[0], 'agent');
          agent['env'] = envList({ MODE: 'b' });
        });
        await waitStatus(name, { matchedPods: 3, updatedPods: 3, updatedReadyPods: 3 });
        const now = await pods(namespace);
        assert.deepEqual(now.map(nameOf).sort(), ['db-0', 'db-1', 'db-2']);
        for (const pod of now) {
          assert.ok(!created.some((c) => uidOf(c) === uidOf(pod)), `${nameOf(pod)} is new`);
          assert.ok(isReady(pod), `${nameOf(pod)} Ready`);
        }
        // Evicted pods are deleted and gone until the StatefulSet creates them again: one at a time.
        assert.ok(watch.fewestPresent >= 2, `${watch.fewestPresent} of 3 pods there at the worst`);
      } finally {
        watch.stop();
      }
    });

    it('recreated pods whose new sidecar crash-loops pause the rollout; rollout undo recreates them back', async (t) => {
      const namespace = 'recreate-gate';
      const name = await recreatingSidecarSet(
        namespace,
        {},
        {
          'sidecarset.dev/progress-deadline-seconds': '10',
          'sidecarset.dev/max-sidecar-restarts': '1',
        },
      );
      const created = await createDeployment(namespace, 3);
      stopPodsAfter(t, namespace);
      await waitStatus(name, { matchedPods: 3, updatedReadyPods: 3 });
      const original = new Set(created.map(uidOf));

      await replaceSidecarSet(custom, name, (spec) => {
        const agent = must((spec['containers'] as Record<string, unknown>[])[0], 'agent');
        // It exits before it would be ready: never Ready between restarts, so the broken pod holds
        // the budget (a pod Ready for a moment would rightly free it for the next eviction).
        agent['env'] = envList({ NAME: 'agent', TESTD_READY_AFTER: '2s', TESTD_EXIT_AFTER: '1s' });
      });
      await eventually(
        async () => (await rolloutPaused(name))?.status === 'True',
        'RolloutPaused',
        SLOW,
      );
      const paused = must(await rolloutPaused(name), 'RolloutPaused');
      assert.equal(paused.reason, 'UnhealthyPods');
      const recreated = (await pods(namespace)).filter((p) => !original.has(uidOf(p)));
      // What each new pod is, should there be more than one: phase, readiness, injected version.
      const described = recreated.map((p) => ({
        name: nameOf(p),
        phase: p.status?.phase,
        ready: isReady(p),
        hash: p.metadata?.annotations?.['kruise.io/sidecarset-hash'],
      }));
      assert.equal(
        recreated.length,
        1,
        `maxUnavailable 1: one pod recreated, then the pause: ${JSON.stringify(described)}`,
      );
      const broken = must(recreated[0], 'recreated pod');
      assert.ok(
        paused.message?.includes(nameOf(broken)),
        `the condition names the pod: ${paused.message ?? ''}`,
      );
      assert.equal((await pods(namespace)).filter((p) => original.has(uidOf(p))).length, 2);

      const undo = await cli(['rollout', 'undo', name]);
      assert.equal(undo.code, 0, undo.out);
      await waitStatus(name, { matchedPods: 3, updatedPods: 3, updatedReadyPods: 3, readyPods: 3 });
      const after = await pods(namespace);
      assert.equal(after.filter((p) => original.has(uidOf(p))).length, 2, 'the others untouched');
      assert.ok(!after.some((p) => uidOf(p) === uidOf(broken)), 'the broken pod recreated back');
      assert.ok(after.every((p) => runsReady(p, 'agent', TEST_IMAGES.sidecarV1) && isReady(p)));
    });
  });

  describe('the InPlaceUpdateReady gate under failure (docs/rollouts.md)', () => {
    const gated = { readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] };

    it('a ValidatingAdmissionPolicy refuses the image change: gates reopen, never more than maxUnavailable closed; the rollout completes once it goes', async (t) => {
      const namespace = 'guarded';
      const name = 'guarded-agent';
      await plane().createNamespace(namespace);
      await createSidecarSet(name, namespace, {
        updateStrategy: { maxUnavailable: 1 },
        containers: [sidecarContainer('agent', TEST_IMAGES.sidecarV1)],
      });
      await createDeployment(namespace, 3, gated);
      stopPodsAfter(t, namespace);
      await waitStatus(name, { matchedPods: 3, updatedReadyPods: 3, readyPods: 3 });
      const refusal = await refuseImage(namespace, TEST_IMAGES.sidecarV2);
      t.after(() => refusal.remove());

      const watch = await PodWatch.start(plane().kubeConfig(), namespace);
      try {
        await setImage(name, TEST_IMAGES.sidecarV2);
        let failure: string | undefined;
        await eventually(
          async () => {
            failure = (await sidecarSet(name)).status?.conditions?.find(
              (c) => c.type === 'PodUpdateFailure' && c.status === 'True',
            )?.message;
            return failure?.includes(refusal.policy) === true;
          },
          'the PodUpdateFailure condition naming the policy',
          SLOW,
        );
        const events = await core.listEventForAllNamespaces({
          fieldSelector: `involvedObject.name=${name},reason=PodUpdateFailed`,
        });
        assert.equal(events.items[0]?.type, 'Warning');
        const shown = await cli(['rollout', 'status', name]);
        assert.match(
          shown.out,
          new RegExp(
            `\n  pod updates fail: updating pod ${namespace}/\\S+ failed: .*${refusal.policy}`,
          ),
        );
        // Refused again and again for a while: every gate open, no image changed.
        await new Promise((resolve) => setTimeout(resolve, 10_000));
        await eventually(
          async () =>
            (await pods(namespace)).every((p) => gateOf(p)?.status === 'True' && isReady(p)),
          'every gate open and every pod Ready while updates are refused',
          SLOW,
        );
        assert.ok(
          (await pods(namespace)).every((p) => specImage(p, 'agent') === TEST_IMAGES.sidecarV1),
        );
        assert.ok((await pods(namespace)).some((p) => gateOf(p)?.reason === 'InPlaceUpdateFailed'));

        await refusal.remove();
        await waitStatus(name, {
          matchedPods: 3,
          updatedPods: 3,
          updatedReadyPods: 3,
          readyPods: 3,
        });
        const after = await pods(namespace);
        assert.ok(after.every((p) => runsReady(p, 'agent', TEST_IMAGES.sidecarV2)));
        assert.ok(after.every((p) => gateOf(p)?.status === 'True'));
        await eventually(
          async () =>
            !(await sidecarSet(name)).status?.conditions?.some(
              (c) => c.type === 'PodUpdateFailure',
            ),
          'the PodUpdateFailure condition gone',
          SLOW,
        );
        const closed = mostClosedGates(watch.history);
        assert.equal(closed, 1, `at most maxUnavailable (1) gates closed at once, saw ${closed}`);
      } finally {
        watch.stop();
      }
    });

    it('the controller killed between closing a gate and the new sidecar ready: the next one opens it', async (t) => {
      const namespace = 'restarted';
      const name = 'restarted-agent';
      await plane().createNamespace(namespace);
      // Ready 15 s after each start: the window in which the controller dies.
      const slowStart = { TESTD_READY_AFTER: '15s' };
      await createSidecarSet(name, namespace, {
        containers: [sidecarContainer('agent', TEST_IMAGES.sidecarV1, slowStart)],
      });
      const [pod] = await createDeployment(namespace, 1, gated);
      stopPodsAfter(t, namespace);
      const podName = nameOf(must(pod, 'pod'));
      await waitStatus(name, { matchedPods: 1, updatedReadyPods: 1 });
      await setImage(name, TEST_IMAGES.sidecarV2);
      await eventually(
        async () => {
          const now = await core.readNamespacedPod({ namespace, name: podName });
          return (
            gateOf(now)?.status === 'False' && specImage(now, 'agent') === TEST_IMAGES.sidecarV2
          );
        },
        'the gate closed and the image written',
        SLOW,
      );
      assert.equal(await serve.stop('SIGKILL'), null);
      serve = await installation.serve();
      await eventually(
        async () => {
          const now = await core.readNamespacedPod({ namespace, name: podName });
          return (
            gateOf(now)?.status === 'True' &&
            isReady(now) &&
            runsReady(now, 'agent', TEST_IMAGES.sidecarV2)
          );
        },
        'the gate open and the pod Ready on v2',
        SLOW,
      );
      await waitStatus(name, { matchedPods: 1, updatedPods: 1, updatedReadyPods: 1, readyPods: 1 });
    });
  });

  it('with the webhook down (failurePolicy Ignore) a pod starts without its sidecar and is reported missed', async () => {
    const namespace = 'down';
    const name = 'down-agent';
    await plane().createNamespace(namespace);
    await createSidecarSet(name, namespace, {
      containers: [sidecarContainer('agent', TEST_IMAGES.sidecarV1)],
    });
    await createDeployment(namespace, 1);
    assert.equal(await serve.stop('SIGTERM'), 0, lastWords(serve));
    await scaleDeployment(namespace, 2);
    await eventually(
      async () =>
        (await pods(namespace)).some((p) => p.spec?.containers.length === 1 && isReady(p)),
      'the new pod running without its sidecar',
      SLOW,
    );
    serve = await installation.serve();
    await waitStatus(name, { missedPods: 1 });
  });

  it('a whole cluster: a Job completes on the node, a deleted SidecarSet takes its revisions, a deleted namespace its pods', async () => {
    const namespace = 'batch';
    await plane().createNamespace(namespace);
    const batch = plane().kubeConfig().makeApiClient(BatchV1Api);
    await batch.createNamespacedJob({
      namespace,
      body: {
        metadata: { name: 'once' },
        spec: {
          backoffLimit: 0,
          template: {
            spec: {
              hostNetwork: true,
              restartPolicy: 'Never',
              containers: [{ ...appContainer({ TESTD_EXIT_AFTER: '1s' }), name: 'work' }],
            },
          },
        },
      },
    });
    await eventually(
      async () =>
        (await batch.readNamespacedJob({ namespace, name: 'once' })).status?.succeeded === 1,
      'the Job succeeded',
      SLOW,
    );

    const revisions = async (): Promise<number> =>
      (
        await apps.listNamespacedControllerRevision({
          namespace: 'sidecarset-system',
          labelSelector: 'kruise.io/sidecarset-name=logtail-sidecarset',
        })
      ).items.length;
    assert.ok((await revisions()) >= 2, 'the seed story left revisions v1 and v2');
    await custom.deleteClusterCustomObject({ ...SIDECARSETS, name: 'logtail-sidecarset' });
    await eventually(async () => (await revisions()) === 0, 'revisions garbage-collected', SLOW);

    // The pods of the test before, one with its sidecar and one missed.
    await core.deleteNamespace({ name: 'down' });
    await eventually(
      async () => {
        try {
          await core.readNamespace({ name: 'down' });
          return false;
        } catch {
          return true;
        }
      },
      'namespace down deleted with its pods',
      SLOW,
    );
  });

  it('serve logged no errors', () => {
    assert.deepEqual(errors(serve), []);
  });
});
