/**
 * Self-managed certificates on a real kube-apiserver: `kubectl apply -k` of manifests/ with no
 * caBundle anywhere (the overlay only points each webhook's clientConfig at 127.0.0.1), then
 * `sidecarset serve` as the manifests' ServiceAccount without --cert/--key. The webhook makes its
 * CA and certificate in the Secret, writes the caBundles, and injects the article's pod; a second
 * replica serves the same certificate; a caBundle reset by hand and a Secret spoiled by hand are
 * put right while it runs (docs/adr/0011-self-managed-certificates.md).
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { before, describe, it } from 'node:test';

import { freePorts } from '../kube-fixture/control-plane.js';
import { eventually } from '../support/eventually.js';
import { servedCertificate } from '../support/https.js';
import { installManifests, webhooksInUse } from './install.js';
import type { SidecarsetProcess } from './processes.js';
import { errors, startSidecarset } from './processes.js';
import { NAMESPACE, SERVICE_ACCOUNT, clusterArgs, useControlPlane } from './support.js';

const examples = new URL('../../examples/', import.meta.url).pathname;
const SECRET = 'sidecarset-webhook-certs';
const PLACEHOLDER = 'Q0FfQlVORExFX1BMQUNFSE9MREVS';

describe('self-managed certificates, installed from manifests/', () => {
  const cluster = useControlPlane();
  const plane = cluster.plane;
  let ports: number[];
  let kubeconfig: string;
  let first: SidecarsetProcess;

  const secretPem = async (key: string): Promise<string> => {
    const result = await plane().kubectl([
      'get',
      'secret',
      '-n',
      NAMESPACE,
      SECRET,
      '-o',
      `jsonpath={.data.${key.replace('.', '\\.')}}`,
    ]);
    assert.equal(result.code, 0, result.stderr);
    return Buffer.from(result.stdout, 'base64').toString('utf8');
  };
  const caBundles = async (): Promise<string[]> => {
    const result = await plane().kubectl([
      'get',
      'mutatingwebhookconfiguration/sidecarset-mutating-webhook',
      'validatingwebhookconfiguration/sidecarset-validating-webhook',
      '-o',
      'jsonpath={.items[*].webhooks[*].clientConfig.caBundle}',
    ]);
    assert.equal(result.code, 0, result.stderr);
    return result.stdout.split(' ').filter((b) => b !== '');
  };
  const serve = (port: number): Promise<SidecarsetProcess> =>
    startSidecarset([
      'serve',
      ...clusterArgs(kubeconfig),
      '--port',
      String(port),
      '--cert-secret',
      SECRET,
      '--cert-ip-addresses',
      '127.0.0.1',
    ]);

  before(async () => {
    ports = await freePorts(2);
    await installManifests(plane(), { url: `https://127.0.0.1:${String(ports[0])}` });
    const token = await plane().serviceAccountToken(NAMESPACE, SERVICE_ACCOUNT);
    kubeconfig = await plane().writeKubeconfig('sidecarset.kubeconfig', token);
    first = await serve(ports[0] ?? 0);
    cluster.defer(() => first.stop());
  });

  it('makes the certificate in the Secret and writes every caBundle', async () => {
    const ca = await secretPem('ca.crt');
    const cert = new X509Certificate(await secretPem('tls.crt'));
    assert.ok(cert.verify(new X509Certificate(ca).publicKey));
    assert.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
    for (const host of [
      'sidecarset-webhook.sidecarset-system.svc',
      'sidecarset-conversion.sidecarset-system.svc',
    ]) {
      assert.equal(cert.checkHost(host), host);
    }
    const bundle = Buffer.from(ca).toString('base64');
    assert.deepEqual(await caBundles(), [bundle, bundle, bundle]);
    assert.deepEqual(
      (await servedCertificate(`https://127.0.0.1:${String(ports[0])}`)).equals(cert.raw),
      true,
    );
  });

  it('injects the article’s pod through the API server', async () => {
    await webhooksInUse(plane());
    const sidecarSet = await plane().kubectl(['apply', '-f', `${examples}logtail-sidecarset.yaml`]);
    assert.equal(sidecarSet.code, 0, sidecarSet.stderr);
    const pod = await plane().kubectl(['create', '-f', `${examples}nginx-pod.yaml`]);
    assert.equal(pod.code, 0, pod.stderr);
    const names = await plane().kubectl([
      'get',
      'pod',
      'test-pod',
      '-o',
      'jsonpath={.spec.containers[*].name}',
    ]);
    assert.equal(names.stdout, 'logtail nginx');
  });

  it('a second replica serves the same certificate, writing nothing', async () => {
    const cert = await secretPem('tls.crt');
    const second = await serve(ports[1] ?? 0);
    try {
      assert.ok(
        (await servedCertificate(`https://127.0.0.1:${String(ports[1])}`)).equals(
          new X509Certificate(cert).raw,
        ),
      );
      assert.equal(await secretPem('tls.crt'), cert);
      assert.ok(!second.logs.some((e) => String(e.msg).startsWith('webhook certificate')));
    } finally {
      await second.stop();
    }
  });

  it('writes the caBundle again within seconds after a re-apply resets it', async () => {
    const bundle = Buffer.from(await secretPem('ca.crt')).toString('base64');
    const reset = await plane().kubectl([
      'patch',
      'mutatingwebhookconfiguration',
      'sidecarset-mutating-webhook',
      '--type=json',
      `-p=${JSON.stringify([{ op: 'replace', path: '/webhooks/0/clientConfig/caBundle', value: PLACEHOLDER }])}`,
    ]);
    assert.equal(reset.code, 0, reset.stderr);
    await eventually(
      async () => (await caBundles()).every((b) => b === bundle),
      'the caBundle written again',
      15_000,
      250,
    );
  });

  it('replaces a spoiled Secret and serves the new certificate without a restart', async () => {
    const before = await secretPem('tls.crt');
    const spoiled = await plane().kubectl([
      'patch',
      'secret',
      '-n',
      NAMESPACE,
      SECRET,
      '--type=merge',
      `-p=${JSON.stringify({ data: { 'tls.crt': Buffer.from('junk').toString('base64') } })}`,
    ]);
    assert.equal(spoiled.code, 0, spoiled.stderr);
    let renewed = '';
    await eventually(
      async () => {
        renewed = await secretPem('tls.crt');
        return renewed.startsWith('-----BEGIN CERTIFICATE-----') && renewed !== before;
      },
      'the Secret replaced',
      15_000,
      250,
    );
    const raw = new X509Certificate(renewed).raw;
    await eventually(
      async () => (await servedCertificate(`https://127.0.0.1:${String(ports[0])}`)).equals(raw),
      'the new certificate served',
      15_000,
      250,
    );
    await webhooksInUse(plane());
    assert.deepEqual(errors(first), []);
  });
});
