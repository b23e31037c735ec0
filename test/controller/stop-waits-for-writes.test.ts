/**
 * stop() lets the pod writes already sent finish before it releases the Lease (issue 37, point 8):
 * a new leader, which takes over as soon as the Lease is released, must not meet them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { CoordinationV1Api } from '@kubernetes/client-node';
import { pino } from 'pino';

import { Controller } from '../../src/controller/controller.js';
import { createKubeWriter } from '../../src/k8s/kube-writer.js';
import { quickLeaderElection, setUpAgent, startTestCluster, updateSidecarSet } from './cluster.js';
import { eventually } from '../support/eventually.js';

describe('Controller.stop', () => {
  it('releases the Lease only once the pod writes in flight have their answers', async () => {
    const cluster = await startTestCluster({ controller: false });
    const kubeConfig = cluster.api.kubeConfig();
    const writer = createKubeWriter(kubeConfig);
    let patches = 0;
    let answer: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const election = quickLeaderElection('replica-a');
    const controller = new Controller({
      kubeConfig,
      logger: pino({ level: 'silent' }),
      qps: 1000,
      burst: 1000,
      leaderElection: election,
      // The first pod patch is sent, and its answer held until the test lets it through.
      writer: {
        ...writer,
        patchPod: async (namespace, name, patch) => {
          patches++;
          await writer.patchPod(namespace, name, patch);
          if (patches === 1) await answered;
        },
      },
    });
    const leases = kubeConfig.makeApiClient(CoordinationV1Api);
    const holder = async (): Promise<string> =>
      (await leases.readNamespacedLease({ namespace: election.namespace, name: election.name }))
        .spec?.holderIdentity ?? '';
    try {
      await controller.start();
      await setUpAgent(cluster, 2, { maxUnavailable: 1 });
      await updateSidecarSet(cluster, 'agent', (spec) => {
        ((spec['containers'] as { image: string }[])[0] as { image: string }).image = 'agent:2';
      });
      await eventually(() => patches === 1, 'a pod write in flight', 10_000);
      const stopped = controller.stop();
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(await holder(), 'replica-a', 'the Lease is kept while the write is in flight');
      answer();
      await stopped;
      assert.equal(await holder(), '', 'then released');
      assert.equal(patches, 1, 'no write after stop()');
    } finally {
      answer();
      await controller.stop();
      await cluster.close();
    }
  });
});
