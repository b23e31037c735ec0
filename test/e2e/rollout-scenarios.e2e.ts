/**
 * The shared in-place rollout scenarios (test/scenarios/rollout.ts) on a real kube-apiserver,
 * with `sidecarset serve` (webhook and controller) running as the manifests' ServiceAccount.
 * test/controller/rollout-scenarios.test.ts runs the same code on the fake API server.
 */
import assert from 'node:assert/strict';
import { before, describe } from 'node:test';

import { ApiKubelet } from '../support/api-kubelet.js';
import { rolloutScenarios } from '../scenarios/rollout.js';
import { errors } from './processes.js';
import { install, scopeIncludes, useControlPlane } from './support.js';

describe('rollout scenarios on a real API server', () => {
  const cluster = useControlPlane();
  const plane = cluster.plane;
  let kubelet: ApiKubelet | undefined;
  let metricsUrl = '';
  before(async () => {
    const serve = await (await install(plane())).serve();
    const listening = await serve.waitForLog((e) => e.msg === 'webhook listening', 'listening');
    metricsUrl = String(listening['metricsUrl']);
    cluster.defer(async () => {
      assert.deepEqual(errors(serve), [], 'serve logged no errors');
      await serve.stop();
    });
    const started = new ApiKubelet(plane().kubeConfig(), { delayMs: 100 });
    kubelet = started;
    cluster.defer(() => started.stop());
  });
  rolloutScenarios(() => {
    if (kubelet === undefined) throw new Error('the kubelet did not start');
    return {
      kubeConfig: () => plane().kubeConfig(),
      kubelet,
      createNamespace: (name) => plane().createNamespace(name),
      metrics: async () => (await fetch(`${metricsUrl}/metrics`)).text(),
      podsOfNamespaceSentToWebhook: (namespace) => scopeIncludes(plane(), namespace),
    };
  });
});
