/**
 * The older Kubernetes versions the tests build (test/kube-fixture/kubernetes/), each a whole
 * cluster and real node of that version: the API server and the kubelet report it, the chart
 * installs with the image (test/e2e/image.ts) and passes `sidecarset check`, a Deployment's pods
 * are injected and their sidecar upgraded in place by the in-cluster webhook and controller, and a
 * change of the sidecar's resources goes in place where the API server has pods/resize (1.33 and
 * later) and is refused clearly, with nothing half-done, where it has not. The newest version is
 * what every other file runs on.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';

import {
  KUBERNETES_VERSIONS,
  NEWEST_KUBERNETES,
  pinnedKubernetes,
} from '../kube-fixture/binaries.js';
import { TEST_IMAGES } from '../node-fixture/images.js';
import { eventually } from '../support/eventually.js';
import { replaceSidecarSet } from '../support/replace-sidecarset.js';
import { appContainer, isReady, must, sidecarContainer, statusOf } from './pods.js';
import { crdEstablished } from './apply-crd.js';
import { installChart } from './helm.js';
import { runImage } from './image.js';
import { webhooksInUse } from './install.js';
import { runProcess } from './processes.js';
import { scopeIncludes, useControlPlane } from './support.js';

const SIDECARSETS = { group: 'apps.kruise.io', version: 'v1beta1', plural: 'sidecarsets' };
const SLOW = 180_000;
/** The first minor whose API server has pods/resize. */
const RESIZE_SINCE = 33;

const limits = (cpu: string) => ({ limits: { cpu, memory: '64Mi' } });

for (const minor of KUBERNETES_VERSIONS.filter((v) => v !== NEWEST_KUBERNETES)) {
  describe(`Kubernetes ${minor}: a real cluster and node of that version`, () => {
    const cluster = useControlPlane({ node: true, kubernetes: minor });
    const plane = cluster.plane;
    let core: CoreV1Api;
    let apps: AppsV1Api;
    let custom: CustomObjectsApi;

    before(async () => {
      const image = runImage();
      await cluster.node().loadImage(image.archive);
      await installChart(plane(), image.reference);
      await crdEstablished(plane());
      await webhooksInUse(plane());
      const kubeConfig = plane().kubeConfig();
      core = kubeConfig.makeApiClient(CoreV1Api);
      apps = kubeConfig.makeApiClient(AppsV1Api);
      custom = kubeConfig.makeApiClient(CustomObjectsApi);
    });

    const pods = async (namespace: string): Promise<V1Pod[]> =>
      (await core.listNamespacedPod({ namespace })).items.filter(
        (p) => p.metadata?.deletionTimestamp === undefined,
      );

    it('the API server and the kubelet are that version, and the chart installs there', async () => {
      const pinned = await pinnedKubernetes(minor);
      assert.equal(await plane().version(), pinned);
      const node = await core.readNode({ name: cluster.node().name });
      assert.equal(node.status?.nodeInfo?.kubeletVersion, pinned);
      const checked = await runProcess(process.execPath, ['bin/sidecarset.js', 'check'], {
        KUBECONFIG: plane().adminKubeconfig,
      });
      assert.equal(checked.code, 0, checked.out);
    });

    it('injects a Deployment and upgrades its sidecar in place, then handles a resources change as the version allows', async () => {
      const namespace = 'shop';
      const name = 'logtail';
      await plane().createNamespace(namespace);
      await custom.createClusterCustomObject({
        ...SIDECARSETS,
        body: {
          apiVersion: 'apps.kruise.io/v1beta1',
          kind: 'SidecarSet',
          metadata: { name },
          spec: {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
            selector: { matchLabels: { app: 'nginx' } },
            updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1 },
            containers: [
              {
                ...sidecarContainer('logtail', TEST_IMAGES.sidecarV1),
                resources: limits('100m'),
              },
            ],
          },
        },
      });
      await scopeIncludes(plane(), namespace);
      await apps.createNamespacedDeployment({
        namespace,
        body: {
          metadata: { name: 'nginx' },
          spec: {
            replicas: 2,
            selector: { matchLabels: { app: 'nginx' } },
            template: {
              metadata: { labels: { app: 'nginx' } },
              spec: { terminationGracePeriodSeconds: 2, containers: [appContainer()] },
            },
          },
        },
      });
      const running = async (image: string): Promise<V1Pod[]> => {
        let now: V1Pod[] = [];
        await eventually(
          async () => {
            now = await pods(namespace);
            return (
              now.length === 2 &&
              now.every((p) => isReady(p) && statusOf(p, 'logtail')?.image === image)
            );
          },
          `both pods running ${image}`,
          SLOW,
        );
        return now;
      };
      const created = await running(TEST_IMAGES.sidecarV1);
      assert.deepEqual(
        created.map((p) => p.spec?.containers.map((c) => c.name)),
        [
          ['logtail', 'nginx'],
          ['logtail', 'nginx'],
        ],
      );

      await replaceSidecarSet(custom, name, (spec) => {
        must((spec['containers'] as { image: string }[])[0], 'logtail').image =
          TEST_IMAGES.sidecarV2;
      });
      const upgraded = await running(TEST_IMAGES.sidecarV2);
      for (const pod of upgraded) {
        assert.ok(
          created.some((p) => p.metadata?.uid === pod.metadata?.uid),
          'the same pods',
        );
        assert.equal(statusOf(pod, 'logtail')?.restartCount, 1);
      }

      await replaceSidecarSet(custom, name, (spec) => {
        must((spec['containers'] as Record<string, unknown>[])[0], 'logtail')['resources'] =
          limits('200m');
      });
      const cpu = (pod: V1Pod): string | undefined =>
        pod.spec?.containers.find((c) => c.name === 'logtail')?.resources?.limits?.['cpu'];
      if (Number(minor.split('.')[1]) >= RESIZE_SINCE) {
        await eventually(
          async () => (await pods(namespace)).every((p) => cpu(p) === '200m'),
          'both pods resized in place',
          SLOW,
        );
      } else {
        // No pods/resize: the controller says why on each pod, and writes nothing else.
        await eventually(
          async () =>
            (await pods(namespace)).every((p) =>
              p.status?.conditions?.some(
                (c) => c.type === 'SidecarSetUpgradable' && c.status === 'False',
              ),
            ),
          'both pods marked not upgradable',
          SLOW,
        );
        // `plan` asks the API server too, and gives the same reason.
        const planned = await runProcess(process.execPath, ['bin/sidecarset.js', 'plan', name], {
          KUBECONFIG: plane().adminKubeconfig,
        });
        assert.equal(planned.code, 0, planned.out);
        assert.match(planned.out, /cannot resize pods in place \(no pods\/resize\)/);
      }
      for (const pod of await pods(namespace)) {
        assert.equal(statusOf(pod, 'logtail')?.restartCount, 1, 'no restart for resources');
        if (Number(minor.split('.')[1]) < RESIZE_SINCE) assert.equal(cpu(pod), '100m');
      }
      await apps.deleteNamespacedDeployment({ namespace, name: 'nginx' });
    });
  });
}
