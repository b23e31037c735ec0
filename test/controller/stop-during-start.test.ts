/** A controller stopped while its caches sync (a shutdown during start-up) never begins to lead. */
import assert from 'node:assert/strict';
import { it } from 'node:test';

import { pino } from 'pino';

import { Controller } from '../../src/controller/controller.js';
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
