import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { parseAllDocuments } from 'yaml';

const script = fileURLToPath(new URL('../../certs/gen.sh', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'sidecarset-certs-'));
after(() => {
  rmSync(tmp, { recursive: true, force: true });
});

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function gen(args: readonly string[], env: Readonly<Record<string, string>> = {}): Run {
  const r = spawnSync('bash', [script, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function cert(dir: string, name: string): X509Certificate {
  return new X509Certificate(readFileSync(join(dir, name)));
}

function sans(c: X509Certificate): string[] {
  return (c.subjectAltName ?? '').split(', ').sort();
}

describe('certs/gen.sh', () => {
  it('finds openssl on this machine', () => {
    const r = spawnSync('openssl', ['version'], { encoding: 'utf8' });
    assert.equal(r.status, 0, 'openssl must be installed');
  });

  const out = join(tmp, 'out');

  /** The four names a Service has inside the cluster, as the certificate lists them. */
  const serviceSans = (service: string, namespace: string): string[] => [
    `DNS:${service}`,
    `DNS:${service}.${namespace}`,
    `DNS:${service}.${namespace}.svc`,
    `DNS:${service}.${namespace}.svc.cluster.local`,
  ];

  it('makes a CA and a serving certificate for <service>.<namespace>.svc signed by it', () => {
    const r = gen([
      ...['--service', 'hook', '--conversion-service', 'convert'],
      ...['--namespace', 'team-a', '--out', out, '--days', '30'],
    ]);
    assert.equal(r.status, 0, r.stderr);
    const ca = cert(out, 'ca.crt');
    const leaf = cert(out, 'tls.crt');
    assert.equal(ca.ca, true);
    assert.equal(leaf.ca, false);
    assert.ok(leaf.checkIssued(ca), 'issued by the CA');
    assert.ok(leaf.verify(ca.publicKey), 'signature verifies with the CA key');
    assert.deepEqual(
      sans(leaf),
      [...serviceSans('hook', 'team-a'), ...serviceSans('convert', 'team-a')].sort(),
    );
    assert.ok(leaf.checkHost('hook.team-a.svc'));
    assert.ok(leaf.checkHost('convert.team-a.svc'));
    assert.deepEqual(leaf.keyUsage, ['1.3.6.1.5.5.7.3.1'], 'serverAuth');
    assert.ok(leaf.checkPrivateKey(createPrivateKey(readFileSync(join(out, 'tls.key')))));
    assert.ok(ca.checkPrivateKey(createPrivateKey(readFileSync(join(out, 'ca.key')))));
    const days = (Date.parse(leaf.validTo) - Date.parse(leaf.validFrom)) / 86_400_000;
    assert.equal(Math.round(days), 30);
    assert.equal(statSync(join(out, 'tls.key')).mode & 0o777, 0o600);
    assert.equal(statSync(join(out, 'ca.key')).mode & 0o777, 0o600);
  });

  it('prints the caBundle on stdout: base64 of the CA certificate', () => {
    const r = gen(['--service', 'hook', '--namespace', 'team-a', '--out', out]);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 1);
    const bundle = lines[0] ?? '';
    assert.match(bundle, /^[A-Za-z0-9+/]+=*$/);
    const decoded = Buffer.from(bundle, 'base64');
    assert.deepEqual(decoded, readFileSync(join(out, 'ca.crt')));
    assert.equal(new X509Certificate(decoded).fingerprint256, cert(out, 'ca.crt').fingerprint256);
    assert.equal(readFileSync(join(out, 'ca-bundle.b64'), 'utf8'), `${bundle}\n`);
  });

  it('reuses the CA on a second run and replaces it only with --force', () => {
    const before = cert(out, 'ca.crt').fingerprint256;
    const again = gen(['--service', 'hook', '--namespace', 'team-a', '--out', out]);
    assert.equal(again.status, 0, again.stderr);
    assert.equal(cert(out, 'ca.crt').fingerprint256, before);
    assert.ok(cert(out, 'tls.crt').verify(cert(out, 'ca.crt').publicKey));

    const forced = gen(['--service', 'hook', '--namespace', 'team-a', '--out', out, '--force']);
    assert.equal(forced.status, 0, forced.stderr);
    const ca = cert(out, 'ca.crt');
    assert.notEqual(ca.fingerprint256, before);
    assert.ok(cert(out, 'tls.crt').verify(ca.publicKey));
  });

  it('reads its settings from the environment, with defaults for the manifests', () => {
    const dir = join(tmp, 'env');
    const r = gen(['--secret-cmd'], { CERT_OUT_DIR: dir, CERT_CA_DAYS: '10' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(
      sans(cert(dir, 'tls.crt')),
      [
        ...serviceSans('sidecarset-webhook', 'sidecarset-system'),
        ...serviceSans('sidecarset-conversion', 'sidecarset-system'),
      ].sort(),
    );
    const ca = cert(dir, 'ca.crt');
    assert.equal(Math.round((Date.parse(ca.validTo) - Date.parse(ca.validFrom)) / 86_400_000), 10);
    const [, secret] = r.stdout.trimEnd().split('\n');
    assert.equal(
      secret,
      `kubectl -n sidecarset-system create secret tls sidecarset-webhook-tls --cert=${join(dir, 'tls.crt')} --key=${join(dir, 'tls.key')} --dry-run=client -o yaml | kubectl apply -f -`,
    );
  });

  it('writes a kustomize overlay of manifests/base that adds the caBundle and the TLS Secret', (t) => {
    const dir = join(tmp, 'overlay');
    assert.equal(gen(['--out', dir]).status, 0);
    const text = readFileSync(join(dir, 'kustomization.yaml'), 'utf8');
    const base = /resources:\n {2}- (.+)\n/.exec(text)?.[1];
    assert.ok(base !== undefined, text);
    assert.equal(
      resolve(dir, base),
      resolve(fileURLToPath(new URL('../../manifests/base', import.meta.url))),
    );
    if (spawnSync('kubectl', ['version', '--client']).status !== 0) {
      t.skip('kubectl is not installed: the overlay is not built');
      return;
    }
    const built = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
    assert.equal(built.status, 0, built.stderr);
    const ca = readFileSync(join(dir, 'ca.crt'));
    const bundles = [...built.stdout.matchAll(/caBundle: \|\n((?: {6}\S+\n)+)/g)].map((m) =>
      Buffer.from((m[1] ?? '').replace(/\s/g, ''), 'base64'),
    );
    assert.equal(bundles.length, 3);
    for (const b of bundles) assert.deepEqual(b, ca);
    const crd = parseAllDocuments(built.stdout)
      .map((d) => d.toJS() as { kind?: string; spec?: Record<string, unknown> })
      .find((d) => d.kind === 'CustomResourceDefinition');
    const conversion = crd?.spec?.['conversion'] as
      { webhook: { clientConfig: { caBundle: string } } } | undefined;
    assert.deepEqual(
      Buffer.from(conversion?.webhook.clientConfig.caBundle ?? '', 'base64'),
      ca,
      "the CRD's conversion webhook too",
    );
    assert.match(
      built.stdout,
      /kind: Secret\nmetadata:\n {2}name: sidecarset-webhook-tls\n {2}namespace: sidecarset-system\ntype: kubernetes.io\/tls/,
    );
  });

  it('refuses half a CA, a foreign key, bad names and unknown flags', () => {
    const half = join(tmp, 'half');
    assert.equal(gen(['--out', half]).status, 0);
    rmSync(join(half, 'ca.key'));
    const r = gen(['--out', half]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /only one of/);

    const foreign = join(tmp, 'foreign');
    assert.equal(gen(['--out', foreign]).status, 0);
    writeFileSync(join(foreign, 'ca.key'), readFileSync(join(foreign, 'tls.key')));
    const f = gen(['--out', foreign]);
    assert.equal(f.status, 1);
    assert.match(f.stderr, /does not belong/);

    assert.equal(gen(['--out', join(tmp, 'bad'), '--service', 'Bad_Name']).status, 1);
    assert.equal(gen(['--out', join(tmp, 'bad'), '--conversion-service', 'Bad_Name']).status, 1);
    assert.equal(gen(['--out', join(tmp, 'bad'), '--days', '0']).status, 1);
    assert.equal(gen(['--out', join(tmp, 'bad'), '--service']).status, 1);
    const unknown = gen(['--nope']);
    assert.equal(unknown.status, 1);
    assert.match(unknown.stderr, /unknown argument: --nope/);
    assert.equal(gen(['--help']).status, 0);
  });
});
