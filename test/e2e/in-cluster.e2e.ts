/**
 * Installed as users install it: the image built by `npm run image` (test/e2e/run.ts) loaded onto
 * the real node, `helm install` with the chart's defaults but for the image (two replicas, the
 * webhooks through the Service, self-managed certificates), in the cluster's own network
 * (test/kube-fixture/network.ts), with no process of ours on the host. Then the seed's story
 * through the in-cluster webhook and controller, the leader deleted mid-rollout, a `helm upgrade`
 * of sidecarset itself while pods are being created, `helm uninstall`, `kubectl apply -k
 * manifests/` installing the same way, and the move from an OpenKruise before v1.9, whose
 * SidecarSets are stored as v1alpha1 (docs/migrating-from-openkruise.md).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { before, describe, it } from 'node:test';

import { AppsV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { parse, stringify } from 'yaml';

import { normalizedReference } from '../../scripts/image/oci-archive.js';
import { TEST_IMAGES } from '../node-fixture/images.js';
import { eventually } from '../support/eventually.js';
import { replaceSidecarSet } from '../support/replace-sidecarset.js';
import { readAudit } from './audit.js';
import { crdEstablished } from './apply-crd.js';
import { CHART, helm } from './helm.js';
import { runImage } from './image.js';
import { webhooksInUse } from './install.js';
import {
  PodWatch,
  appContainer,
  isReady,
  must,
  nameOf,
  sidecarContainer,
  specImage,
} from './pods.js';
import { runProcess } from './processes.js';
import { NAMESPACE, OUR_USER, scopeIncludes, useControlPlane } from './support.js';

const SIDECARSETS = { group: 'apps.kruise.io', version: 'v1beta1', plural: 'sidecarsets' };
const SLOW = 180_000;
const DEPLOYMENT = 'sidecarset-webhook';
const LEASE = 'sidecarset-controller';
const MANIFESTS = new URL('../../manifests/', import.meta.url).pathname;
const OPENKRUISE_CRD = new URL(
  '../fixtures/openkruise/apps.kruise.io_sidecarsets.yaml',
  import.meta.url,
).pathname;

/**
 * The SidecarSet CRD of an OpenKruise before v1.9: v1alpha1 only, stored, no conversion. It is
 * v1.9's (test/fixtures/openkruise) without v1beta1; v1alpha1's schema is the one v1.8 had.
 */
async function openKruiseV18Crd(): Promise<string> {
  const crd = parse(await readFile(OPENKRUISE_CRD, 'utf8')) as {
    spec: { versions: { name: string; storage: boolean }[]; conversion?: unknown };
  };
  crd.spec.versions = crd.spec.versions
    .filter((v) => v.name === 'v1alpha1')
    .map((v) => ({ ...v, storage: true }));
  delete crd.spec.conversion;
  return stringify(crd);
}

/** `repository:tag` split at the tag. */
function splitReference(reference: string): { repository: string; tag: string } {
  const at = reference.lastIndexOf(':');
  return { repository: reference.slice(0, at), tag: reference.slice(at + 1) };
}

/** The API server's counters of webhook calls that failed open or were rejected, ours only. */
function webhookFailures(metricsText: string): number {
  let total = 0;
  for (const line of metricsText.split('\n')) {
    if (
      /^apiserver_admission_webhook_(fail_open_count|rejection_count)\{/.test(line) &&
      /name="[^"]*sidecarset\.kruise\.io"/.test(line)
    ) {
      total += Number(line.split(' ').pop());
    }
  }
  return total;
}

describe('installed as users install it: the image, the chart, the cluster network', () => {
  const cluster = useControlPlane({ node: true });
  const plane = cluster.plane;
  const image = runImage();
  const { repository, tag } = splitReference(image.reference);
  const secondTag = `${tag}-second`;
  let core: CoreV1Api;
  let apps: AppsV1Api;
  let custom: CustomObjectsApi;
  let leases: CoordinationV1Api;

  before(async () => {
    await cluster.node().loadImage(image.archive);
    await cluster
      .node()
      .tagImage(
        normalizedReference({ repository, tag }),
        normalizedReference({ repository, tag: secondTag }),
      );
    const kubeConfig = plane().kubeConfig();
    core = kubeConfig.makeApiClient(CoreV1Api);
    apps = kubeConfig.makeApiClient(AppsV1Api);
    custom = kubeConfig.makeApiClient(CustomObjectsApi);
    leases = kubeConfig.makeApiClient(CoordinationV1Api);
  });

  const pods = async (namespace: string, labelSelector = ''): Promise<V1Pod[]> =>
    (await core.listNamespacedPod({ namespace, labelSelector })).items.filter(
      (p) => p.metadata?.deletionTimestamp === undefined,
    );
  const webhookPods = () => pods(NAMESPACE, 'app.kubernetes.io/component=webhook');

  /**
   * Removes an installation and waits until its namespace is gone. Its pods stop after their
   * RBAC is deleted (by helm or kubectl, in no order the pods wait for): what they are refused
   * meanwhile is forgiven.
   */
  async function uninstalled(remove: () => Promise<{ code: number | null; stderr: string }>) {
    const from = Date.now();
    const removed = await remove();
    assert.equal(removed.code, 0, removed.stderr);
    await eventually(
      async () => (await plane().kubectl(['get', 'namespace', NAMESPACE])).code !== 0,
      `the namespace ${NAMESPACE} gone`,
      SLOW,
    );
    cluster.forgiveForbidden({ from, to: Date.now() });
  }

  /** `sidecarset ARGS` on the host as the admin, as a person runs it. */
  const cli = (args: readonly string[]) =>
    runProcess(process.execPath, ['bin/sidecarset.js', ...args], {
      KUBECONFIG: plane().adminKubeconfig,
    });

  async function deploymentReady(replicas: number): Promise<void> {
    await eventually(
      async () => {
        const d = await apps.readNamespacedDeployment({ namespace: NAMESPACE, name: DEPLOYMENT });
        const s = d.status;
        return (
          s?.observedGeneration === d.metadata?.generation &&
          s?.updatedReplicas === replicas &&
          s.readyReplicas === replicas &&
          (s.replicas ?? 0) === replicas
        );
      },
      `the Deployment ${DEPLOYMENT} rolled out with ${replicas} ready replicas`,
      SLOW,
    );
  }

  async function leader(): Promise<string> {
    const lease = await leases.readNamespacedLease({ namespace: NAMESPACE, name: LEASE });
    return lease.spec?.holderIdentity ?? '';
  }

  it('helm install: the Deployment becomes Ready with 2 replicas of the image', async () => {
    const installed = await helm(plane(), [
      'install',
      'sidecarset',
      CHART,
      '--set',
      `image.repository=${repository},image.tag=${tag}`,
    ]);
    assert.equal(installed.code, 0, installed.stderr);
    await crdEstablished(plane());
    await deploymentReady(2);
    const running = await webhookPods();
    assert.equal(running.length, 2);
    for (const pod of running) {
      assert.equal(specImage(pod, 'webhook'), image.reference);
      // In the pod network, not the node's.
      assert.match(pod.status?.podIP ?? '', /^10\.244\.0\.\d+$/);
      assert.notEqual(pod.status?.podIP, pod.status?.hostIP);
    }
    await webhooksInUse(plane());
    await eventually(async () => (await leader()) !== '', 'a leader', SLOW);
  });

  it('helm test passes', async () => {
    const tested = await helm(plane(), ['test', 'sidecarset', '--logs', '--timeout', '3m']);
    assert.equal(tested.code, 0, `${tested.stdout}\n${tested.stderr}`);
    assert.match(tested.stdout, /Phase:\s+Succeeded/);
  });

  it('sidecarset check reports the installation OK', async () => {
    const checked = await cli(['check', '--namespace', NAMESPACE]);
    assert.equal(checked.code, 0, checked.out);
    assert.match(checked.out, / OK\b/);
  });

  const story = 'shop';
  const sidecarSetName = 'logtail-sidecarset';

  async function setSidecarImage(image: string): Promise<void> {
    await replaceSidecarSet(custom, sidecarSetName, (spec) => {
      must((spec['containers'] as { image: string }[])[0], 'container').image = image;
    });
  }

  /** Waits until every pod of the story runs `image` in its sidecar, Ready. */
  async function rolledOut(image: string, replicas: number): Promise<V1Pod[]> {
    let now: V1Pod[] = [];
    await eventually(
      async () => {
        now = await pods(story);
        return (
          now.length === replicas &&
          now.every(
            (p) =>
              isReady(p) &&
              p.status?.containerStatuses?.find((c) => c.name === 'logtail')?.image === image,
          )
        );
      },
      `every pod of ${story} running ${image}`,
      SLOW,
    );
    return now;
  }

  it("the seed's story: a Deployment's pods injected by the in-cluster webhook, then upgraded in place by its controller", async () => {
    await plane().createNamespace(story);
    await custom.createClusterCustomObject({
      ...SIDECARSETS,
      body: {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'SidecarSet',
        metadata: { name: sidecarSetName },
        spec: {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': story } },
          selector: { matchLabels: { app: 'nginx' } },
          updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1 },
          containers: [sidecarContainer('logtail', TEST_IMAGES.sidecarV1)],
        },
      },
    });
    await scopeIncludes(plane(), story);
    await apps.createNamespacedDeployment({
      namespace: story,
      body: {
        metadata: { name: 'nginx' },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'nginx' } },
          template: {
            metadata: { labels: { app: 'nginx' } },
            spec: { terminationGracePeriodSeconds: 2, containers: [appContainer()] },
          },
        },
      },
    });
    const created = await rolledOut(TEST_IMAGES.sidecarV1, 3);
    for (const pod of created) {
      assert.deepEqual(
        pod.spec?.containers.map((c) => c.name),
        ['logtail', 'nginx'],
      );
      assert.notEqual(pod.status?.podIP, pod.status?.hostIP, 'a pod IP of its own');
    }

    const watch = await PodWatch.start(plane().kubeConfig(), story);
    await setSidecarImage(TEST_IMAGES.sidecarV2);
    const upgraded = await rolledOut(TEST_IMAGES.sidecarV2, 3);
    watch.stop();
    // In place: the same pods, their sidecar restarted once.
    assert.deepEqual(
      upgraded.map((p) => p.metadata?.uid).sort(),
      created.map((p) => p.metadata?.uid).sort(),
    );
    assert.ok(watch.worstUnready <= 1, `${watch.worstUnready} pods not Ready at once`);
  });

  it('the leader pod deleted mid-rollout: the other replica takes over, no pod upgraded twice, maxUnavailable holds', async () => {
    const before = await leader();
    const leaderPod = before.split('_')[0] ?? '';
    assert.ok(
      (await pods(NAMESPACE)).some((p) => nameOf(p) === leaderPod),
      before,
    );
    const startedAt = Date.now();
    const watch = await PodWatch.start(plane().kubeConfig(), story);
    await setSidecarImage(TEST_IMAGES.sidecarV3);
    // Once the first pod has been upgraded.
    await eventually(
      async () =>
        (await pods(story)).some((p) => specImage(p, 'logtail') === TEST_IMAGES.sidecarV3),
      'the rollout under way',
      SLOW,
    );
    const deletedAt = Date.now();
    await core.deleteNamespacedPod({ namespace: NAMESPACE, name: leaderPod });
    await eventually(
      async () => {
        const now = await leader();
        return now !== '' && now !== before;
      },
      'another replica leading',
      SLOW,
    );
    const tookOverMs = Date.now() - deletedAt;
    // The lease lasts 15 s; the old leader releases it when it stops.
    assert.ok(tookOverMs < 30_000, `took over after ${tookOverMs} ms`);
    await rolledOut(TEST_IMAGES.sidecarV3, 3);
    watch.stop();
    assert.ok(watch.worstUnready <= 1, `${watch.worstUnready} pods not Ready at once`);
    // Each pod's sidecar was written to v3 once, whoever led.
    const writes = (await readAudit(plane().auditLog, OUR_USER)).filter(
      (e) =>
        Date.parse(e.requestReceivedTimestamp ?? '') >= startedAt &&
        e.objectRef?.resource === 'pods' &&
        e.objectRef.namespace === story &&
        e.objectRef.subresource === undefined &&
        ['patch', 'update'].includes(e.verb) &&
        JSON.stringify(e.requestObject ?? '').includes(TEST_IMAGES.sidecarV3),
    );
    const perPod = new Map<string, number>();
    for (const e of writes)
      perPod.set(e.objectRef?.name ?? '', (perPod.get(e.objectRef?.name ?? '') ?? 0) + 1);
    assert.deepEqual([...perPod.values()], [1, 1, 1], JSON.stringify([...perPod]));
    await deploymentReady(2);
  });

  it('helm upgrade to a second tag while pods are created: every pod has its sidecar, no webhook call fails', async () => {
    const metrics = async () => {
      const got = await plane().kubectl(['get', '--raw', '/metrics']);
      assert.equal(got.code, 0, got.stderr);
      return webhookFailures(got.stdout);
    };
    const failuresBefore = await metrics();
    const namespace = 'steady';
    await plane().createNamespace(namespace);
    await custom.createClusterCustomObject({
      ...SIDECARSETS,
      body: {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'SidecarSet',
        metadata: { name: 'steady-logtail' },
        spec: {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
          selector: { matchLabels: { app: 'steady' } },
          containers: [{ name: 'logtail', image: TEST_IMAGES.sidecarV1 }],
        },
      },
    });
    await scopeIncludes(plane(), namespace);

    // 2 pods a second for 60 s, kept Pending (no node matches): only admission is under test.
    const created: string[] = [];
    const errors: string[] = [];
    const upgrade = { done: false };
    const loop = (async () => {
      for (let i = 0; !upgrade.done || i < 120; i++) {
        const startedAt = Date.now();
        const name = `steady-${i}`;
        await core
          .createNamespacedPod({
            namespace,
            body: {
              metadata: { name, labels: { app: 'steady' } },
              spec: {
                nodeSelector: { 'sidecarset.test/nowhere': 'true' },
                containers: [{ name: 'app', image: TEST_IMAGES.app }],
              },
            },
          })
          .then(
            () => created.push(name),
            (err: unknown) => errors.push(`${name}: ${String(err)}`),
          );
        const wait = Math.max(0, 500 - (Date.now() - startedAt));
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const upgraded = await helm(plane(), [
      'upgrade',
      'sidecarset',
      CHART,
      '--reuse-values',
      '--set',
      `image.tag=${secondTag}`,
    ]);
    assert.equal(upgraded.code, 0, upgraded.stderr);
    await deploymentReady(2);
    upgrade.done = true;
    await loop;
    assert.deepEqual(errors, []);
    assert.ok(created.length >= 120, `${created.length} pods created`);
    for (const pod of await webhookPods()) {
      assert.equal(specImage(pod, 'webhook'), `${repository}:${secondTag}`);
    }
    const withoutSidecar = (await pods(namespace))
      .filter((p) => specImage(p, 'logtail') !== TEST_IMAGES.sidecarV1)
      .map(nameOf);
    assert.deepEqual(withoutSidecar, []);
    assert.equal(
      await metrics(),
      failuresBefore,
      'webhook calls that failed open or were rejected',
    );
    const removed = await plane().kubectl(['delete', 'namespace', namespace, '--wait=false']);
    assert.equal(removed.code, 0, removed.stderr);
  });

  it('helm uninstall keeps the CRD and the SidecarSets', async () => {
    // The story's pods first: nothing of ours may be left to manage them.
    await apps.deleteNamespacedDeployment({ namespace: story, name: 'nginx' });
    await uninstalled(() =>
      helm(plane(), ['uninstall', 'sidecarset', '--wait', '--timeout', '2m']),
    );
    const crd = await plane().kubectl(['get', 'crd', 'sidecarsets.apps.kruise.io', '-o', 'name']);
    assert.equal(crd.code, 0, crd.stderr);
    const kept = await plane().kubectl(['get', 'sidecarsets', '-o', 'name']);
    assert.match(kept.stdout, /logtail-sidecarset/);
  });

  it('kubectl apply -k manifests/ installs the same way and passes the same first check', async () => {
    // An overlay naming the image, as `kustomize edit set image` would.
    const dir = await mkdtemp(join(plane().dir, 'kustomize-'));
    await writeFile(
      join(dir, 'kustomization.yaml'),
      stringify({
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        resources: [relative(dir, MANIFESTS)],
        images: [{ name: 'sidecarset', newName: repository, newTag: tag }],
      }),
    );
    const applied = await plane().kubectl(['apply', '--server-side', '-k', dir]);
    assert.equal(applied.code, 0, applied.stderr);
    await deploymentReady(2);
    await webhooksInUse(plane());
    const checked = await cli(['check', '--namespace', NAMESPACE]);
    assert.equal(checked.code, 0, checked.out);
    await uninstalled(() => plane().kubectl(['delete', '-k', dir, '--wait=false']));
  });

  it('from an OpenKruise before v1.9 (SidecarSets stored as v1alpha1): the replicas become ready', async () => {
    // `kubectl delete -k` took the CRD and its SidecarSets: start as OpenKruise v1.8 left a cluster.
    await eventually(
      async () => (await plane().kubectl(['get', 'crd', 'sidecarsets.apps.kruise.io'])).code !== 0,
      'the CRD gone',
      SLOW,
    );
    const dir = await mkdtemp(join(plane().dir, 'v1alpha1-'));
    const oldCrd = join(dir, 'crd.yaml');
    await writeFile(oldCrd, await openKruiseV18Crd());
    const applied = await plane().kubectl(['apply', '-f', oldCrd]);
    assert.equal(applied.code, 0, applied.stderr);
    await crdEstablished(plane());
    const stored = join(dir, 'sidecarset.yaml');
    await writeFile(
      stored,
      stringify({
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name: 'stored-as-v1alpha1' },
        spec: {
          selector: { matchLabels: { app: 'legacy' } },
          containers: [{ name: 'logtail', image: TEST_IMAGES.sidecarV1 }],
        },
      }),
    );
    const created = await plane().kubectl(['create', '-f', stored]);
    assert.equal(created.code, 0, created.stderr);

    // docs/migrating-from-openkruise.md, step 3: our CRD in place, then the chart without it.
    const crd = join(MANIFESTS, 'base/crd/apps.kruise.io_sidecarsets.yaml');
    const replaced = await plane().kubectl(['replace', '--save-config', '-f', crd]);
    assert.equal(replaced.code, 0, replaced.stderr);
    const storedVersions = await plane().kubectl([
      'get',
      'crd',
      'sidecarsets.apps.kruise.io',
      '-o',
      'jsonpath={.status.storedVersions}',
    ]);
    assert.match(storedVersions.stdout, /v1alpha1/);
    const installed = await helm(plane(), [
      'install',
      'sidecarset',
      CHART,
      '--set',
      `image.repository=${repository},image.tag=${tag},crds.managed=false`,
    ]);
    assert.equal(installed.code, 0, installed.stderr);
    // Each replica lists SidecarSets through /convert before it is ready.
    await deploymentReady(2);
    const listed = await plane().kubectl([
      'get',
      'sidecarsets.v1beta1.apps.kruise.io',
      '-o',
      'name',
    ]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /stored-as-v1alpha1/);
    const checked = await cli(['check', '--namespace', NAMESPACE]);
    assert.equal(checked.code, 0, checked.out);
    await uninstalled(() =>
      helm(plane(), ['uninstall', 'sidecarset', '--wait', '--timeout', '2m']),
    );
  });
});
