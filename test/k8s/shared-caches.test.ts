/** The caches the webhook and the controller share: the watches end when the last user stops. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { pino } from 'pino';

import { SharedCaches } from '../../src/k8s/shared-caches.js';
import { withServer } from '../fake-apiserver/harness.js';

describe('SharedCaches', () => {
  it('keeps watching until the last user stops', async () => {
    await withServer(async (server) => {
      const caches = new SharedCaches({
        kubeConfig: server.kubeConfig(),
        logger: pino({ level: 'silent' }),
      });
      await Promise.all([caches.start(), caches.start()]);
      assert.ok(caches.synced());
      await server.control.waitForWatches((open) => open.length === 3);
      await caches.stop();
      assert.equal(server.control.watches().length, 3, 'one user left: still watching');
      await caches.stop();
      await server.control.waitForWatches((open) => open.length === 0);
      await caches.stop(); // a stop too many changes nothing
    });
  });
});
