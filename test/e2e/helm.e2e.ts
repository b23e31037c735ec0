/**
 * The chart installed with a real helm (test/helm-fixture) into a real kube-apiserver, the webhooks
 * pointed at `sidecarset serve` on 127.0.0.1 through the chart's webhook.url value. Twice: with a
 * certificate of our own (certificates.source=secret and its caBundle, what test/e2e/install.ts
 * does for manifests/ with kustomize), and with no certificate settings at all, the default: the
 * webhook, started without --cert/--key, makes its certificate and writes the caBundles with the
 * chart's RBAC (docs/adr/0011-self-managed-certificates.md). Each time the article's pod is created
 * and comes back injected; `helm uninstall` takes the webhooks away again.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { before, describe, it } from 'node:test';

import type { ControlPlane } from '../kube-fixture/control-plane.js';
import { freePorts } from '../kube-fixture/control-plane.js';
import { eventually } from '../support/eventually.js';
import { crdEstablished } from './apply-crd.js';
import { CHART, helm } from './helm.js';
import { webhooksInUse } from './install.js';
import type { SidecarsetProcess } from './processes.js';
import { errors, startSidecarset } from './processes.js';
import { NAMESPACE, SERVICE_ACCOUNT, clusterArgs, install, useControlPlane } from './support.js';

const examples = new URL('../../examples/', import.meta.url).pathname;
const PROMETHEUS_RULE_CRD = new URL('../fixtures/prometheus-rule-crd.yaml', import.meta.url)
  .pathname;

/** `helm install sidecarset charts/sidecarset` with `--set` values: what it prints (the NOTES). */
async function installChart(plane: ControlPlane, set: readonly string[]): Promise<string> {
  const installed = await helm(plane, [
    'install',
    'sidecarset',
    CHART,
    ...set.flatMap((s) => ['--set', s]),
  ]);
  assert.equal(installed.code, 0, `helm install: ${installed.stderr}`);
  await crdEstablished(plane);
  return installed.stdout;
}

const PLACEHOLDER_WARNING = /WARNING: every alert's runbook_url points at the placeholder/;

/** The test cases both installations share; `serve` is the webhook process. */
function releaseCases(plane: () => ControlPlane, serve: () => SidecarsetProcess): void {
  it('is a deployed release', async () => {
    const listed = await helm(plane(), ['list', '--all-namespaces', '-o', 'json']);
    assert.equal(listed.code, 0, listed.stderr);
    const releases = JSON.parse(listed.stdout) as { name: string; status: string }[];
    assert.deepEqual(
      releases.map((r) => [r.name, r.status]),
      [['sidecarset', 'deployed']],
    );
  });

  it('injects the sidecar into a pod created afterwards', async () => {
    await webhooksInUse(plane());
    const sidecarSet = await plane().kubectl(['apply', '-f', `${examples}logtail-sidecarset.yaml`]);
    assert.equal(sidecarSet.code, 0, sidecarSet.stderr);
    // The webhook's informer sees the new SidecarSet a moment later: a dry run tells when.
    const podYaml = await readFile(`${examples}nginx-pod.yaml`, 'utf8');
    await eventually(async () => {
      const dryRun = await plane().kubectl(
        ['create', '--dry-run=server', '-o', 'json', '-f', '-'],
        {
          input: podYaml,
        },
      );
      return dryRun.code === 0 && dryRun.stdout.includes('"logtail"');
    }, 'the webhook to know the SidecarSet');
    const created = await plane().kubectl(['create', '-f', '-'], { input: podYaml });
    assert.equal(created.code, 0, created.stderr);
    const got = await plane().kubectl(['get', 'pod', 'test-pod', '-o', 'json']);
    assert.equal(got.code, 0, got.stderr);
    const pod = JSON.parse(got.stdout) as {
      metadata: { annotations?: Record<string, string> };
      spec: { containers: { name: string }[] };
    };
    assert.deepEqual(
      pod.spec.containers.map((c) => c.name),
      ['logtail', 'nginx'],
    );
    assert.ok(pod.metadata.annotations?.['kruise.io/sidecarset-hash']);
  });

  it('helm uninstall removes the webhooks and keeps the CRD and the SidecarSets', async () => {
    // First our process: without its RBAC it would be refused, which fails the file (support.ts).
    await serve().stop();
    // No --wait: the namespace stays Terminating without kube-controller-manager.
    const removed = await helm(plane(), ['uninstall', 'sidecarset']);
    assert.equal(removed.code, 0, removed.stderr);
    await eventually(async () => {
      const left = await plane().kubectl([
        'get',
        'mutatingwebhookconfigurations,validatingwebhookconfigurations',
        '-o',
        'name',
      ]);
      return left.code === 0 && left.stdout.trim() === '';
    }, 'the webhook configurations gone');
    // helm.sh/resource-policy: keep (crds.keep, the default): the CRD and its objects stay.
    const crd = await plane().kubectl(['get', 'crd', 'sidecarsets.apps.kruise.io', '-o', 'name']);
    assert.equal(crd.code, 0, crd.stderr);
    const kept = await plane().kubectl(['get', 'sidecarsets', '-o', 'name']);
    assert.equal(kept.code, 0, kept.stderr);
    assert.match(kept.stdout, /sidecarset\.apps\.kruise\.io\/logtail-sidecarset/);
  });
}

describe('installed with helm and a certificate of our own', () => {
  const cluster = useControlPlane();
  let serve: SidecarsetProcess;
  let notes = '';

  before(async () => {
    const installation = await install(cluster.plane(), async (plane, webhook) => {
      notes = await installChart(plane, [
        'certificates.source=secret',
        `webhook.url=${webhook.url}`,
        `certificates.caBundle=${Buffer.from(webhook.caPem).toString('base64')}`,
      ]);
    });
    serve = await installation.serve();
    cluster.defer(() => serve.stop());
  });

  it('prints NOTES that say how to check the installation', () => {
    assert.match(notes, /sidecarset \S+ is installed in the namespace sidecarset-system/);
    assert.match(notes, /helm test sidecarset -n default --logs/);
    assert.match(notes, /keeps the SidecarSet CRD and every SidecarSet/);
    assert.doesNotMatch(notes, PLACEHOLDER_WARNING, 'no alerts installed, no runbook warning');
  });

  it("warns in the NOTES while the alerts' runbook_url is the placeholder", async () => {
    const dryRun = (set: readonly string[]) =>
      helm(cluster.plane(), [
        'upgrade',
        'sidecarset',
        CHART,
        '--dry-run=client',
        '--reuse-values',
        '--set',
        ['monitoring.prometheusRule.enabled=true', ...set].join(','),
      ]);
    const crd = await cluster.plane().kubectl(['apply', '-f', PROMETHEUS_RULE_CRD]);
    assert.equal(crd.code, 0, crd.stderr);
    await crdEstablished(cluster.plane(), 'prometheusrules.monitoring.coreos.com');
    const placeholder = await dryRun([]);
    assert.equal(placeholder.code, 0, placeholder.stderr);
    assert.match(placeholder.stdout, PLACEHOLDER_WARNING);
    const own = await dryRun([
      'monitoring.prometheusRule.runbookBaseUrl=https://docs.internal/m.md',
    ]);
    assert.equal(own.code, 0, own.stderr);
    assert.match(own.stdout, /runbook_url: https:\/\/docs\.internal\/m\.md#/);
    assert.doesNotMatch(own.stdout, PLACEHOLDER_WARNING);
  });

  // Last: they end with helm uninstall.
  releaseCases(cluster.plane, () => serve);
});

describe('installed with helm and no certificate settings (self-managed)', () => {
  const cluster = useControlPlane();
  const plane = cluster.plane;
  let serve: SidecarsetProcess;

  before(async () => {
    const [port] = (await freePorts(1)) as [number];
    // Only where the API server finds the webhook: no caBundle, no Secret.
    await installChart(plane(), [`webhook.url=https://127.0.0.1:${String(port)}`]);
    const token = await plane().serviceAccountToken(NAMESPACE, SERVICE_ACCOUNT);
    const kubeconfig = await plane().writeKubeconfig('sidecarset.kubeconfig', token);
    // As the chart's Deployment runs it, but outside a pod: the Secret named (a pod's default),
    // and 127.0.0.1 in the certificate, as the API server calls webhook.url by that address.
    serve = await startSidecarset([
      'serve',
      ...clusterArgs(kubeconfig),
      '--port',
      String(port),
      '--metrics-port',
      '0',
      '--cert-secret',
      'sidecarset-webhook-certs',
      '--cert-ip-addresses',
      '127.0.0.1',
    ]);
    cluster.defer(() => serve.stop());
  });

  it('makes its certificate and writes the CA into every webhook', async () => {
    await eventually(async () => {
      const [ca, bundles] = await Promise.all([
        plane().kubectl([
          'get',
          'secret',
          '-n',
          NAMESPACE,
          'sidecarset-webhook-certs',
          '-o',
          'jsonpath={.data.ca\\.crt}',
        ]),
        plane().kubectl([
          'get',
          'mutatingwebhookconfiguration/sidecarset-mutating-webhook',
          'validatingwebhookconfiguration/sidecarset-validating-webhook',
          '-o',
          'jsonpath={.items[*].webhooks[*].clientConfig.caBundle}',
        ]),
      ]);
      return (
        ca.code === 0 && ca.stdout !== '' && bundles.stdout === `${ca.stdout} `.repeat(3).trim()
      );
    }, 'the Secret made and the caBundle of every webhook written');
  });

  releaseCases(plane, () => serve);

  it('logged no error', () => {
    assert.deepEqual(errors(serve), []);
  });
});
