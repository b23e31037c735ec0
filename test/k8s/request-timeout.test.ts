/**
 * Every API request through the generated clients has a deadline; watches do not, since they stay
 * open by design (src/k8s/request-timeout.ts).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';

import { CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';

import { withRequestTimeout } from '../../src/k8s/request-timeout.js';
import { withServer } from '../fake-apiserver/harness.js';

/** A KubeConfig for a plain-HTTP server at `server`. */
function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

describe('withRequestTimeout', () => {
  it('ends a request the API server accepts and never answers', { timeout: 10_000 }, async () => {
    const hung = createServer(() => undefined); // reads the request, never answers
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = hung.address() as AddressInfo;
      const kc = withRequestTimeout(kubeConfigFor(`http://127.0.0.1:${String(port)}`), 200);
      await assert.rejects(
        kc.makeApiClient(CoreV1Api).readNamespace({ name: 'default' }),
        /timeout|aborted/i,
      );
    } finally {
      hung.closeAllConnections();
      await new Promise((resolve) => hung.close(resolve));
    }
  });

  it('leaves watches open past the deadline', async () => {
    await withServer(async (server) => {
      const kc = withRequestTimeout(server.kubeConfig(), 100);
      const namespaces = await kc.makeApiClient(CoreV1Api).listNamespace();
      assert.ok(namespaces.items.length > 0, 'requests within the deadline answer');
      let ended = false;
      const request = await new Watch(kc).watch(
        '/api/v1/namespaces',
        { resourceVersion: namespaces.metadata?.resourceVersion ?? '' },
        () => undefined,
        () => {
          ended = true;
        },
      );
      await server.control.waitForWatches((open) => open.length === 1);
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.equal(ended, false);
      assert.equal(server.control.watches().length, 1);
      request.abort();
    });
  });
});
