/**
 * The shared in-place rollout scenarios (test/scenarios/rollout.ts) on the in-process fake API
 * server. test/e2e/rollout-scenarios.e2e.ts runs the same code on a real kube-apiserver.
 */
import { after, before, describe } from 'node:test';

import { CoreV1Api } from '@kubernetes/client-node';

import type { ScenarioBackend } from '../scenarios/rollout.js';
import { rolloutScenarios } from '../scenarios/rollout.js';
import type { TestCluster } from './cluster.js';
import { metrics, startTestCluster } from './cluster.js';

describe('rollout scenarios on the fake API server', () => {
  let cluster: TestCluster | undefined;
  before(async () => {
    cluster = await startTestCluster({ kubeletDelayMs: 30 });
  });
  after(async () => {
    await cluster?.close();
  });
  rolloutScenarios((): ScenarioBackend => {
    if (cluster === undefined) throw new Error('the cluster did not start');
    const started = cluster;
    const { api, kubelet } = cluster;
    return {
      metrics: () => metrics(started),
      kubeConfig: () => api.kubeConfig(),
      kubelet,
      async createNamespace(name) {
        await api
          .kubeConfig()
          .makeApiClient(CoreV1Api)
          .createNamespace({ body: { metadata: { name } } });
      },
    };
  });
});
