/**
 * `serve` in cluster mode with --cert-secret and no --cert/--key, against the fake API server: it
 * serves the certificate it made in the Secret, and the next one when the Secret is replaced
 * (src/k8s/certificates.ts), without a restart.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';

import type { Served } from '../../src/cli/serve.js';
import { startServe } from '../../src/cli/serve.js';
import { startFakeApiServer } from '../fake-apiserver/index.js';
import type { FakeApiServer } from '../fake-apiserver/index.js';
import { CERT_RESOURCES, SECRETS } from '../support/cert-resources.js';
import { eventually } from '../support/eventually.js';
import { servedCertificate } from '../support/https.js';

const NS = 'sidecarset-system';
const SECRET = 'sidecarset-webhook-certs';

describe('serve with a self-managed certificate', () => {
  let api: FakeApiServer;
  let served: Served;

  const secretCert = (): Buffer => {
    const data = api.store.get(SECRETS, NS, SECRET)?.['data'] as Record<string, string>;
    return new X509Certificate(Buffer.from(data['tls.crt'] ?? '', 'base64')).raw;
  };

  before(async () => {
    api = await startFakeApiServer({ namespaces: ['default', NS], resources: CERT_RESOURCES });
    const dir = await mkdtemp(join(tmpdir(), 'self-managed-'));
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(kubeconfig, api.kubeConfig().exportConfig());
    served = await startServe(
      {
        kubeconfig,
        port: 0,
        host: '127.0.0.1',
        logLevel: 'error',
        devCertDir: join(dir, 'dev'),
        controller: false,
        certSecret: SECRET,
        certIpAddresses: ['127.0.0.1'],
        certResyncMs: 50,
      },
      { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() },
    );
  });

  after(async () => {
    await served.close();
    await api.close();
  });

  it('serves the certificate it keeps in the Secret', async () => {
    assert.ok((await servedCertificate(served.url)).equals(secretCert()));
  });

  it('serves the new certificate once the Secret is replaced', async () => {
    const before = secretCert();
    api.store.mutate(SECRETS, NS, SECRET, (secret) => {
      secret['data'] = { 'tls.crt': Buffer.from('junk').toString('base64') };
    });
    await eventually(
      async () => {
        const now = api.store.get(SECRETS, NS, SECRET)?.['data'] as Record<string, string>;
        if (now['tls.key'] === undefined) return false;
        return (await servedCertificate(served.url)).equals(secretCert());
      },
      'the replaced certificate served',
      10_000,
    );
    assert.ok(!secretCert().equals(before));
  });
});
