/**
 * The certificate manager against the fake API server, with the real client-node: the Secret made
 * once and reused, renewed near expiry (an injected clock), replicas racing to one certificate,
 * caBundles corrected after drift, bad Secret contents replaced.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';

import { pino } from 'pino';

import type { CertificateManagerOptions } from '../../src/k8s/certificates.js';
import { createCertificateManager } from '../../src/k8s/certificates.js';
import { parseWebhookConfigurationRef } from '../../src/k8s/webhook-configuration-ref.js';
import { DEFAULT_CERTIFICATE_TIMES, serviceDnsNames } from '../../src/server/cert-plan.js';
import type { TlsPair } from '../../src/server/tls.js';
import { startFakeApiServer, waitForStore } from '../fake-apiserver/index.js';
import type { FakeApiServer, JsonObject } from '../fake-apiserver/index.js';
import { CERT_RESOURCES, CRDS, MUTATING, SECRETS, VALIDATING } from '../support/cert-resources.js';

const NS = 'sidecarset-system';
const SECRET = 'sidecarset-webhook-certs';
const PLACEHOLDER = 'Q0FfQlVORExFX1BMQUNFSE9MREVS';
const START = Date.parse('2026-12-01T12:00:00Z');
const DAY = 24 * 60 * 60 * 1000;

let server: FakeApiServer;

before(async () => {
  server = await startFakeApiServer({
    namespaces: ['default', NS],
    resources: CERT_RESOURCES,
  });
});
after(async () => {
  await server.close();
});

function configuration(kind: string, names: string[]): JsonObject {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind,
    metadata: { name: kind === 'MutatingWebhookConfiguration' ? 'm' : 'v' },
    webhooks: names.map((name) => ({
      name,
      clientConfig: { url: `https://127.0.0.1:9443/${name}`, caBundle: PLACEHOLDER },
    })),
  };
}

/** A CRD with a conversion webhook (strategy Webhook) or without (None, nothing to write). */
function crd(name: string, strategy: 'Webhook' | 'None'): JsonObject {
  const conversion =
    strategy === 'Webhook'
      ? {
          strategy,
          webhook: {
            conversionReviewVersions: ['v1'],
            clientConfig: { url: 'https://127.0.0.1:9443/convert', caBundle: PLACEHOLDER },
          },
        }
      : { strategy };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: { group: 'example.com', conversion },
  };
}

beforeEach(() => {
  for (const [ref, ns, name] of [
    [SECRETS, NS, SECRET],
    [MUTATING, '', 'm'],
    [VALIDATING, '', 'v'],
    [CRDS, '', 'a.example.com'],
    [CRDS, '', 'b.example.com'],
  ] as const) {
    if (server.store.get(ref, ns, name)) server.store.delete(ref, ns, name);
  }
  server.store.create(MUTATING, '', configuration('MutatingWebhookConfiguration', ['a', 'b']));
  server.store.create(VALIDATING, '', configuration('ValidatingWebhookConfiguration', ['c']));
  server.store.create(CRDS, '', crd('a.example.com', 'Webhook'));
  server.store.create(CRDS, '', crd('b.example.com', 'None'));
});

function manager(
  overrides: Partial<CertificateManagerOptions> = {},
): ReturnType<typeof createCertificateManager> {
  return createCertificateManager({
    kubeConfig: server.kubeConfig(),
    namespace: NS,
    secretName: SECRET,
    webhookConfigurations: [
      'mutating/m',
      'validating/v',
      'crd/a.example.com',
      'crd/b.example.com',
    ].map(parseWebhookConfigurationRef),
    policy: {
      ...DEFAULT_CERTIFICATE_TIMES,
      dnsNames: serviceDnsNames('sidecarset-webhook', NS),
      ipAddresses: ['127.0.0.1'],
    },
    logger: pino({ level: 'silent' }),
    now: () => new Date(START),
    ...overrides,
  });
}

function secretData(): Record<string, string> {
  const secret = server.store.get(SECRETS, NS, SECRET);
  assert.ok(secret, 'the Secret exists');
  return secret['data'] as Record<string, string>;
}

function pem(key: string): string {
  return Buffer.from(secretData()[key] ?? '', 'base64').toString('utf8');
}

/** The three webhooks' caBundles, then the conversion webhook's. */
function caBundles(): string[] {
  const crdSpec = server.store.get(CRDS, '', 'a.example.com')?.['spec'] as {
    conversion: { webhook: { clientConfig: { caBundle?: string } } };
  };
  return [server.store.get(MUTATING, '', 'm'), server.store.get(VALIDATING, '', 'v')]
    .flatMap((config) =>
      ((config?.['webhooks'] ?? []) as { clientConfig: { caBundle?: string } }[]).map(
        (w) => w.clientConfig.caBundle ?? '',
      ),
    )
    .concat(crdSpec.conversion.webhook.clientConfig.caBundle ?? '');
}

function secretWrites(): number {
  return server.control.requests(
    (r) =>
      r.resource === 'secrets' && (r.method === 'POST' || r.method === 'PUT') && r.status < 300,
  ).length;
}

describe('certificate manager', () => {
  it('creates the CA and serving certificate in the Secret and writes the caBundles', async () => {
    const seen: TlsPair[] = [];
    const pair = await manager({ onCertificate: (p) => seen.push(p) }).ensure();

    assert.equal(pair.cert, pem('tls.crt'));
    assert.equal(pair.key, pem('tls.key'));
    assert.deepEqual(seen, [pair]);
    const cert = new X509Certificate(pair.cert);
    const ca = new X509Certificate(pem('ca.crt'));
    assert.ok(cert.verify(ca.publicKey), 'signed by the CA in the Secret');
    assert.equal(
      cert.checkHost('sidecarset-webhook.sidecarset-system.svc'),
      'sidecarset-webhook.sidecarset-system.svc',
    );
    assert.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(pair.notAfter.getTime(), START + 365 * DAY);
    const bundle = secretData()['ca.crt'];
    assert.deepEqual(caBundles(), [bundle, bundle, bundle, bundle]);
  });

  it('reuses the certificate across restarts, writing nothing', async () => {
    const first = await manager().ensure();
    const writes = secretWrites();
    const patches = server.control.requests((r) => r.method === 'PATCH').length;

    const restarted = await manager({ now: () => new Date(START + 200 * DAY) }).ensure();

    assert.equal(restarted.cert, first.cert);
    assert.equal(secretWrites(), writes);
    assert.equal(server.control.requests((r) => r.method === 'PATCH').length, patches);
  });

  it('renews the serving certificate within the renewal window, keeping the CA', async () => {
    const first = await manager().ensure();
    const ca = pem('ca.crt');
    const bundles = caBundles();

    const later = START + 300 * DAY; // 65 days left, under the 90-day window
    const renewed = await manager({ now: () => new Date(later) }).ensure();

    assert.notEqual(renewed.cert, first.cert);
    assert.equal(renewed.notAfter.getTime(), later + 365 * DAY);
    assert.equal(pem('ca.crt'), ca, 'the CA is kept');
    assert.deepEqual(caBundles(), bundles, 'so the caBundles need no change');
  });

  it('makes a new CA when the CA itself nears expiry', async () => {
    await manager().ensure();
    const ca = pem('ca.crt');
    const later = START + (10 * 365 - 30) * DAY;
    await manager({ now: () => new Date(later) }).ensure();
    assert.notEqual(pem('ca.crt'), ca);
    const bundle = secretData()['ca.crt'];
    assert.deepEqual(caBundles(), [bundle, bundle, bundle, bundle]);
    const without = server.store.get(CRDS, '', 'b.example.com')?.['spec'];
    assert.deepEqual(without, { group: 'example.com', conversion: { strategy: 'None' } });
  });

  it('replicas racing to create, then to renew, agree on one certificate', async () => {
    const replicas = Array.from({ length: 4 }, () => manager());
    const created = await Promise.all(replicas.map((r) => r.ensure()));
    assert.equal(new Set(created.map((p) => p.cert)).size, 1);
    assert.equal(created[0]?.cert, pem('tls.crt'));

    const later = START + 300 * DAY;
    const renewing = Array.from({ length: 4 }, () => manager({ now: () => new Date(later) }));
    const renewed = await Promise.all(renewing.map((r) => r.ensure()));
    assert.equal(new Set(renewed.map((p) => p.cert)).size, 1);
    assert.equal(renewed[0]?.cert, pem('tls.crt'));
    assert.equal(new Set([...created, ...renewed].map((p) => p.cert)).size, 2, 'renewed');
    const conflicts = server.control.requests((r) => r.resource === 'secrets' && r.status === 409);
    assert.ok(conflicts.length > 0, 'the losers were refused and read the winner’s');
  });

  it('corrects a caBundle that drifts (a re-applied placeholder) on its next pass', async () => {
    const m = manager({ resyncMs: 20 });
    await m.ensure();
    const bundle = secretData()['ca.crt'];
    m.start();
    try {
      server.store.mutate(MUTATING, '', 'm', (config) => {
        const webhooks = config['webhooks'] as { clientConfig: { caBundle?: string } }[];
        for (const w of webhooks) w.clientConfig.caBundle = PLACEHOLDER;
      });
      server.store.mutate(VALIDATING, '', 'v', (config) => {
        const webhooks = config['webhooks'] as { clientConfig: { caBundle?: string } }[];
        for (const w of webhooks) delete w.clientConfig.caBundle;
      });
      await waitForStore(server.store, () => caBundles().every((b) => b === bundle));
    } finally {
      await m.stop();
    }
  });

  it('replaces a Secret whose contents are not a usable certificate', async () => {
    for (const data of [
      { 'tls.crt': Buffer.from('junk').toString('base64') },
      { 'ca.crt': 'x', 'ca.key': 'x', 'tls.crt': 'x', 'tls.key': 'x' },
    ]) {
      if (server.store.get(SECRETS, NS, SECRET)) server.store.delete(SECRETS, NS, SECRET);
      server.store.create(SECRETS, NS, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: SECRET, namespace: NS },
        type: 'Opaque',
        data,
      });
      const pair = await manager().ensure();
      assert.equal(pair.cert, pem('tls.crt'));
    }
  });

  it('replaces a certificate made for other names', async () => {
    const first = await manager().ensure();
    const other = await manager({
      policy: {
        ...DEFAULT_CERTIFICATE_TIMES,
        dnsNames: ['other.example'],
        ipAddresses: [],
      },
    }).ensure();
    assert.notEqual(other.cert, first.cert);
    assert.equal(new X509Certificate(other.cert).checkHost('other.example'), 'other.example');
  });

  it('skips a webhook configuration that does not exist yet', async () => {
    server.store.delete(VALIDATING, '', 'v');
    await manager().ensure();
    const bundle = secretData()['ca.crt'];
    assert.deepEqual(caBundles(), [bundle, bundle, bundle]);
  });
});
