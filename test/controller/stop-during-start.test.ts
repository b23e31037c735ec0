/**
 * A controller stopped while its caches sync (a shutdown during start-up) never begins to lead, and
 * its start() ends even when the caches it shares with the webhook stay open.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';

import { pino } from 'pino';

import { Controller } from '../../src/controller/controller.js';
import { SharedCaches } from '../../src/k8s/shared-caches.js';
import { withServer } from '../fake-apiserver/harness.js';
import { createPods, createSidecarSet, nginxPod, sidecarSet, startTestCluster } from './cluster.js';

it('stop() during start() leaves the controller stopped: no leading, no writes', async () => {
  const cluster = await startTestCluster({ controller: false });
  let controller: Controller | undefined;
  try {
    await createSidecarSet(
      cluster,
      sidecarSet('agent', {
        selector: { matchLabels: { app: 'nginx' } },
        containers: [{ name: 'agent', image: 'agent:1' }],
      }),
    );
    await createPods(cluster, 3, (i) => nginxPod(`web-${String(i)}`, { app: 'nginx' }));
    controller = new Controller({
      kubeConfig: cluster.api.kubeConfig(),
      logger: pino({ level: 'silent' }),
    });
    const writesBefore = cluster.api.control.requests((r) => r.method !== 'GET').length;
    const starting = controller.start();
    await controller.stop();
    await starting;
    assert.equal(controller.leading(), false);
    assert.equal(
      cluster.api.control.requests((r) => r.method !== 'GET').length,
      writesBefore,
      'nothing written by a stopped controller',
    );
  } finally {
    await controller?.stop();
    await cluster.close();
  }
});

it('stop() ends start() while the caches it shares with the webhook wait for the API server', async () => {
  const cluster = await startTestCluster({ controller: false });
  const logger = pino({ level: 'silent' });
  // The API server refuses every list: the shared caches never sync.
  const refusing = cluster.api.control.failNext({ match: () => true, status: 503, times: 1e9 });
  const caches = new SharedCaches({ kubeConfig: cluster.api.kubeConfig(), logger });
  const controller = new Controller({ kubeConfig: cluster.api.kubeConfig(), logger, caches });
  const webhookUse = caches.start();
  try {
    const starting = controller.start();
    await controller.stop();
    await starting;
    assert.equal(controller.leading(), false);
    assert.equal(caches.synced(), false);
  } finally {
    refusing.cancel();
    await caches.stop();
    await webhookUse;
    await cluster.close();
  }
});

it('a controller stopped without starting leaves the caches it shares with the webhook running', async () => {
  await withServer(async (server) => {
    const logger = pino({ level: 'silent' });
    const caches = new SharedCaches({ kubeConfig: server.kubeConfig(), logger });
    try {
      await caches.start();
      await server.control.waitForWatches((open) => open.length === 3);
      const controller = new Controller({ kubeConfig: server.kubeConfig(), logger, caches });
      await controller.stop();
      await controller.stop();
      await new Promise((resolve) => setTimeout(resolve, 200)); // a closed watch would show by now
      assert.equal(server.control.watches().length, 3, "the webhook's watches stay open");
    } finally {
      await caches.stop();
    }
  });
});
