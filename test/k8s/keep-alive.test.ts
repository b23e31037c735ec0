/**
 * shareKeepAliveAgent against real servers (HTTPS with a CA, as a cluster serves, and plain HTTP
 * as the fake API server does): requests share one connection, every request still carries its
 * credentials, and a credential change gets a new connection.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';

import { shareKeepAliveAgent } from '../../src/k8s/keep-alive.js';
import { ensureDevCertificates } from '../../src/server/tls.js';

interface Served {
  server: Server;
  url: string;
  connections: () => number;
  authorizations: string[];
}

function answer(authorizations: string[]) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    authorizations.push(req.headers.authorization ?? '');
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p', namespace: 'default' },
      }),
    );
  };
}

async function listen(server: Server, scheme: string, event: string): Promise<Served> {
  let connections = 0;
  server.on(event, () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `${scheme}://127.0.0.1:${port}`,
    connections: () => connections,
    authorizations: [],
  };
}

function kubeConfig(server: string, cluster: Record<string, unknown>): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, ...cluster }],
    users: [{ name: 'u', token: 'secret-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

async function readPods(kc: KubeConfig, times: number): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  for (let i = 0; i < times; i++) {
    const pod = await core.readNamespacedPod({ name: 'p', namespace: 'default' });
    assert.equal(pod.metadata?.name, 'p');
  }
}

async function close(served: Served): Promise<void> {
  served.server.closeAllConnections();
  await new Promise<void>((resolve) => {
    served.server.close(() => {
      resolve();
    });
  });
}

describe('shareKeepAliveAgent', () => {
  let https: Served;
  let ca = '';

  before(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'keep-alive-'));
    const certs = await ensureDevCertificates(dir, new Date());
    ca = await readFile(certs.caFile, 'utf8');
    const authorizations: string[] = [];
    const server = createHttpsServer(
      { cert: await readFile(certs.certFile), key: await readFile(certs.keyFile) },
      answer(authorizations),
    );
    https = { ...(await listen(server, 'https', 'secureConnection')), authorizations };
  });

  after(async () => {
    await close(https);
  });

  it('client-node alone opens a TLS connection per request', async () => {
    const before = https.connections();
    await readPods(kubeConfig(https.url, { caData: Buffer.from(ca).toString('base64') }), 4);
    assert.equal(https.connections() - before, 4);
  });

  it('shares one TLS connection across requests, each still authorized', async () => {
    const before = https.connections();
    const requests = https.authorizations.length;
    const kc = shareKeepAliveAgent(
      kubeConfig(https.url, { caData: Buffer.from(ca).toString('base64') }),
    );
    await readPods(kc, 6);
    assert.equal(https.connections() - before, 1);
    assert.deepEqual(https.authorizations.slice(requests), Array(6).fill('Bearer secret-token'));
  });

  it('opens a new connection when the credentials change', async () => {
    const kc = shareKeepAliveAgent(
      kubeConfig(https.url, { caData: Buffer.from(ca).toString('base64') }),
    );
    await readPods(kc, 2);
    const before = https.connections();
    // The same CA twice: a different bundle, as a rotation brings, that still verifies the server.
    const cluster = kc.getCurrentCluster();
    assert.ok(cluster);
    Object.assign(cluster, {
      caData: Buffer.from(`${ca.trim()}\n${ca.trim()}\n`).toString('base64'),
    });
    await readPods(kc, 3);
    assert.equal(https.connections() - before, 1);
  });

  it('shares one plain HTTP connection too (skipTLSVerify, as the fake API server)', async () => {
    const authorizations: string[] = [];
    const plain = {
      ...(await listen(createHttpServer(answer(authorizations)), 'http', 'connection')),
      authorizations,
    };
    try {
      await readPods(shareKeepAliveAgent(kubeConfig(plain.url, { skipTLSVerify: true })), 5);
      assert.equal(plain.connections(), 1);
      assert.equal(plain.authorizations.length, 5);
    } finally {
      await close(plain);
    }
  });
});
