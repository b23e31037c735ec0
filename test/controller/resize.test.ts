/**
 * Resources changed in place through the fake API server's pods/resize and its kubelet
 * (docs/adr/0022-resources-and-native-sidecars-in-place.md): the same containers, new resources
 * in the spec and the status; a change beyond resources is left alone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { KubeObject } from '../fake-apiserver/index.js';
import { EVENTS } from '../fake-apiserver/index.js';
import {
  container,
  containerStatus,
  createPods,
  createSidecarSet,
  nginxPod,
  pods,
  sidecarSet,
  status,
  updateSidecarSet,
  waitFor,
  withCluster,
} from './cluster.js';

const limits = (cpu: string) => ({ limits: { cpu, memory: '64Mi' } });

function agentResources(pod: KubeObject): unknown {
  return container(pod, 'agent')?.['resources'];
}

describe('resources in place (pods/resize)', () => {
  it('resizes every pod, restarting nothing; an env change is not upgradable', async () => {
    await withCluster(async (cluster) => {
      await createSidecarSet(
        cluster,
        sidecarSet('agent', {
          selector: { matchLabels: { app: 'nginx' } },
          updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1 },
          containers: [{ name: 'agent', image: 'agent:1', resources: limits('100m') }],
        }),
      );
      await createPods(cluster, 3, (i) => nginxPod(`web-${i}`));
      await waitFor(cluster, () => status(cluster, 'agent')?.['updatedReadyPods'] === 3, '3 ready');
      const before = new Map(
        pods(cluster).map((p) => [p.metadata.name, containerStatus(p, 'agent')]),
      );

      await updateSidecarSet(cluster, 'agent', (spec) => {
        const [agent] = spec['containers'] as Record<string, unknown>[];
        if (agent) agent['resources'] = limits('200m');
      });
      const resized = {
        limits: { cpu: '200m', memory: '64Mi' },
        requests: { cpu: '200m', memory: '64Mi' },
      };
      await waitFor(
        cluster,
        () =>
          status(cluster, 'agent')?.['updatedReadyPods'] === 3 &&
          pods(cluster).every((p) => JSON.stringify(agentResources(p)) === JSON.stringify(resized)),
        'every pod resized and ready',
      );
      for (const pod of pods(cluster)) {
        const was = before.get(pod.metadata.name);
        const now = containerStatus(pod, 'agent');
        assert.equal(now?.['containerID'], was?.['containerID'], 'the same container');
        assert.equal(now?.['restartCount'], was?.['restartCount']);
        assert.deepEqual(now?.['resources'], resized);
      }

      await updateSidecarSet(cluster, 'agent', (spec) => {
        const [agent] = spec['containers'] as Record<string, unknown>[];
        if (agent) agent['env'] = [{ name: 'MODE', value: 'b' }];
      });
      await waitFor(
        cluster,
        () =>
          cluster.api.store.list(EVENTS, {}).items.some((e) => {
            const message = typeof e['message'] === 'string' ? e['message'] : '';
            return (
              e['reason'] === 'NotUpgradablePods' &&
              message.includes('other than image and resources changed') &&
              message.endsWith('(3)')
            );
          }),
        'a NotUpgradablePods event with the reason',
      );
    });
  });
});
