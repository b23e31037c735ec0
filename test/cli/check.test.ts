/**
 * `sidecarset check` against the fake API server holding the objects of an installation
 * (test/support/installation.ts): a healthy one passes, a broken one fails with what to do.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { LEASES, SIDECARSETS, startFakeApiServer } from '../fake-apiserver/index.js';
import type { FakeApiServer, JsonObject, ResourceRef } from '../fake-apiserver/index.js';
import { DEFAULT_CERTIFICATE_TIMES, caBundleOf, issueBundle } from '../../src/server/cert-plan.js';
import { ensureDevCertificates } from '../../src/server/tls.js';
import { runClusterCli } from '../support/cli.js';
import { CRDS, MUTATING, VALIDATING } from '../support/cert-resources.js';
import {
  INSTALLATION_RESOURCES,
  crd,
  deployment,
  endpointSlice,
  lease,
  mutatingWebhookConfiguration,
  service,
  validatingWebhookConfiguration,
} from '../support/installation.js';

const NOW = new Date('2026-07-02T10:00:00Z');
const NS = 'sidecarset-system';
const DEPLOYMENTS: ResourceRef = { group: 'apps', version: 'v1', resource: 'deployments' };
const SERVICES: ResourceRef = { group: '', version: 'v1', resource: 'services' };
const SLICES: ResourceRef = {
  group: 'discovery.k8s.io',
  version: 'v1',
  resource: 'endpointslices',
};

interface Installation {
  caBundle: string;
  readyEndpoints: boolean[];
  readyReplicas: number;
  renewed: Date;
  /** Every webhook calls this URL instead of the Service (docs/local-cluster.md). */
  webhookUrl?: string;
}

async function withInstallation(
  installation: Installation,
  body: (api: FakeApiServer, kubeconfig: string) => Promise<void>,
): Promise<void> {
  const api = await startFakeApiServer({
    resources: INSTALLATION_RESOURCES,
    namespaces: ['default', 'kube-system', NS],
  });
  try {
    const create = (ref: ResourceRef, namespace: string, obj: JsonObject) =>
      api.store.create(ref, namespace, obj);
    const { caBundle, webhookUrl } = installation;
    create(CRDS, '', crd(caBundle, webhookUrl));
    create(MUTATING, '', mutatingWebhookConfiguration(caBundle, webhookUrl));
    create(VALIDATING, '', validatingWebhookConfiguration(caBundle, webhookUrl));
    create(DEPLOYMENTS, NS, deployment(2, installation.readyReplicas));
    create(SERVICES, NS, service());
    create(SLICES, NS, endpointSlice(installation.readyEndpoints));
    create(LEASES, NS, lease('sidecarset-webhook-7c9-abcde', installation.renewed));
    const dir = await mkdtemp(join(tmpdir(), 'check-'));
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(kubeconfig, api.kubeConfig().exportConfig());
    await body(api, kubeconfig);
  } finally {
    await api.close();
  }
}

async function validCaBundle(): Promise<string> {
  return caBundleOf(
    await issueBundle({ ...DEFAULT_CERTIFICATE_TIMES, dnsNames: ['x'], ipAddresses: [] }, NOW),
  );
}

describe('sidecarset check', () => {
  it('a healthy installation: every check passes, the pod webhook failing open warns, exit 0', async () => {
    const caBundle = await validCaBundle();
    const healthy = {
      caBundle,
      readyEndpoints: [true, true],
      readyReplicas: 2,
      renewed: new Date(NOW.getTime() - 2000),
    };
    await withInstallation(healthy, async (_api, kubeconfig) => {
      const run = await runClusterCli(kubeconfig, ['check'], NOW);
      assert.equal(run.code, 0, run.stderr + run.stdout);
      const lines = run.stdout.split('\n');
      assert.equal(lines.filter((l) => l.startsWith('✗')).length, 0, run.stdout);
      assert.deepEqual(
        lines.filter((l) => l.startsWith('!')),
        [
          '! webhook mpod.sidecarset.kruise.io: failurePolicy: Ignore: while the webhook is unreachable, pods are created without their sidecars',
        ],
      );
      for (const expected of [
        '✓ CustomResourceDefinition sidecarsets.apps.kruise.io: Established; serves v1beta1 (stored) and v1alpha1',
        '✓ webhook vsidecarset.sidecarset.kruise.io: service: sidecarset-system/sidecarset-webhook has 2 ready endpoints',
        '✓ Deployment sidecarset-system/sidecarset-webhook: 2/2 replicas ready',
        '✓ Lease sidecarset-system/sidecarset-controller: held by sidecarset-webhook-7c9-abcde, renewed 2s ago',
        '✓ SidecarSets: 0 in the cluster',
        'installation OK (1 warning)',
      ]) {
        assert.ok(lines.includes(expected), `missing: ${expected}\n${run.stdout}`);
      }

      const json = await runClusterCli(kubeconfig, ['check', '-o', 'json'], NOW);
      const parsed = JSON.parse(json.stdout) as { passed: boolean; checks: { state: string }[] };
      assert.equal(parsed.passed, true);
      assert.equal(parsed.checks.length, 15);
    });
  });

  it('a broken installation: each failure with what to do, exit 1', async () => {
    const broken = {
      caBundle: Buffer.from('CA_BUNDLE_PLACEHOLDER').toString('base64'),
      readyEndpoints: [false],
      readyReplicas: 0,
      renewed: new Date(NOW.getTime() - 120_000),
    };
    await withInstallation(broken, async (api, kubeconfig) => {
      // No controller observes it: still behind when the command reads again.
      api.store.create(SIDECARSETS, '', {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'SidecarSet',
        metadata: { name: 'agent' },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          containers: [{ name: 'agent', image: 'agent:1' }],
        },
      });
      const run = await runClusterCli(kubeconfig, ['check', '--namespace', NS], NOW);
      assert.equal(run.code, 1, run.stderr);
      const lines = run.stdout.split('\n');
      for (const expected of [
        '✗ webhook mpod.sidecarset.kruise.io: caBundle: not a PEM certificate (the placeholder of manifests/base?)',
        '    see "Certificate problems" in docs/troubleshooting.md',
        '✗ webhook mpod.sidecarset.kruise.io: service: sidecarset-system/sidecarset-webhook has no ready endpoints: no webhook replica is ready',
        '    see "The webhook is down" in docs/troubleshooting.md',
        '✗ Deployment sidecarset-system/sidecarset-webhook: 0/2 replicas ready',
        "✗ Lease sidecarset-system/sidecarset-controller: held by sidecarset-webhook-7c9-abcde, last renewed 120s ago, beyond its leaseDurationSeconds (15; by this machine's clock)",
        '✓ SidecarSets: 1 in the cluster',
        '! SidecarSet agent: the controller has not observed generation 1 (status.observedGeneration 0)',
        'installation NOT OK: 10 checks failed, 2 warnings',
      ]) {
        assert.ok(lines.includes(expected), `missing: ${expected}\n${run.stdout}`);
      }
    });
  });

  it('nothing installed in the namespace given: not found, exit 1', async () => {
    const caBundle = await validCaBundle();
    const healthy = {
      caBundle,
      readyEndpoints: [true],
      readyReplicas: 1,
      renewed: NOW,
    };
    await withInstallation(healthy, async (_api, kubeconfig) => {
      const run = await runClusterCli(kubeconfig, ['check', '-n', 'default', '-o', 'yaml'], NOW);
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stdout, /^passed: false\n/);
      assert.match(
        run.stdout,
        /- name: Deployment default\/sidecarset-webhook\n {4}state: failed\n {4}message: not found\n/,
      );
    });
  });
});

describe('sidecarset check: webhooks served outside the cluster at a URL', () => {
  it("probes the server's /readyz over TLS with the caBundle; the Deployment's readiness does not count", async () => {
    // Real certificates: the probe's TLS handshake verifies them by the machine's clock.
    const now = new Date();
    const dir = await mkdtemp(join(tmpdir(), 'check-url-'));
    const certs = await ensureDevCertificates(join(dir, 'good'), now);
    const other = await ensureDevCertificates(join(dir, 'other'), now);
    let readyz = 200;
    const webhook = createServer(
      { cert: await readFile(certs.certFile), key: await readFile(certs.keyFile) },
      (request, response) => {
        response.statusCode = request.url === '/readyz' ? readyz : 404;
        response.end();
      },
    );
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
    const webhookUrl = `https://127.0.0.1:${String((webhook.address() as AddressInfo).port)}`;
    const base64 = async (file: string) => (await readFile(file)).toString('base64');
    const local = (caBundle: string) => ({
      caBundle,
      readyEndpoints: [],
      readyReplicas: 0,
      renewed: new Date(now.getTime() - 2000),
      webhookUrl,
    });
    const run = async (caBundle: string) => {
      let result = { code: -1, stdout: '', stderr: '' };
      await withInstallation(local(caBundle), async (_api, kubeconfig) => {
        result = await runClusterCli(kubeconfig, ['check'], now);
      });
      return { ...result, lines: result.stdout.split('\n') };
    };
    const podService = 'webhook mpod.sidecarset.kruise.io: service';
    try {
      const up = await run(await base64(certs.caFile));
      assert.equal(up.code, 0, up.stdout + up.stderr);
      for (const expected of [
        `✓ CRD conversion webhook: service: calls ${webhookUrl}/convert; ${webhookUrl}/readyz answers 200 (outside the cluster)`,
        `✓ ${podService}: calls ${webhookUrl}/mutate-pods; ${webhookUrl}/readyz answers 200 (outside the cluster)`,
        `✓ Deployment sidecarset-system/sidecarset-webhook: 0/2 replicas ready, not in use: every webhook calls ${webhookUrl}`,
        'installation OK (1 warning)',
      ]) {
        assert.ok(up.lines.includes(expected), `missing: ${expected}\n${up.stdout}`);
      }

      readyz = 503;
      const notReady = await run(await base64(certs.caFile));
      assert.equal(notReady.code, 1);
      assert.ok(
        notReady.lines.includes(
          `✗ ${podService}: calls ${webhookUrl}/mutate-pods; ${webhookUrl}/readyz answers 503: not ready`,
        ),
        notReady.stdout,
      );
      readyz = 200;

      // The server's certificate is not one the caBundle verifies: the API server's calls fail too.
      const foreign = await run(await base64(other.caFile));
      assert.equal(foreign.code, 1);
      assert.ok(
        foreign.lines.some((l) =>
          l.startsWith(
            `✗ ${podService}: calls ${webhookUrl}/mutate-pods; ${webhookUrl}/readyz unreachable from here: `,
          ),
        ),
        foreign.stdout,
      );
    } finally {
      await new Promise((resolve) => webhook.close(resolve));
    }

    const down = await run(await base64(certs.caFile));
    assert.equal(down.code, 1);
    assert.ok(
      down.lines.includes(
        `✗ ${podService}: calls ${webhookUrl}/mutate-pods; ${webhookUrl}/readyz unreachable from here: connect ECONNREFUSED 127.0.0.1:${webhookUrl.split(':')[2] ?? ''}`,
      ),
      down.stdout,
    );
    assert.ok(down.lines.includes('installation NOT OK: 4 checks failed, 1 warning'), down.stdout);
  });
});

describe('sidecarset check --pre', () => {
  it("reports OpenKruise's webhooks, its manager's settings and SidecarSets that will not carry over", async () => {
    const api = await startFakeApiServer({
      resources: INSTALLATION_RESOURCES,
      namespaces: ['default', 'kruise-system'],
    });
    try {
      api.store.create(MUTATING, '', {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: 'kruise-mutating-webhook-configuration' },
        webhooks: [],
      });
      api.store.create(SIDECARSETS, '', {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'SidecarSet',
        metadata: { name: 'logs' },
        spec: {
          namespace: 'web',
          namespaceSelector: { matchLabels: { team: 'web' } },
          containers: [{ name: 'log', image: 'log:1' }],
        },
      });
      const manager = deployment(1, 1);
      const metadata = manager['metadata'] as JsonObject;
      metadata['name'] = 'kruise-controller-manager';
      metadata['namespace'] = 'kruise-system';
      const spec = manager['spec'] as { template: { spec: { containers: JsonObject[] } } };
      spec.template.spec.containers = [
        { name: 'manager', image: 'kruise:1.8', args: ['--feature-gates=PodWebhook=true'] },
      ];
      api.store.create(DEPLOYMENTS, 'kruise-system', manager);
      const dir = await mkdtemp(join(tmpdir(), 'check-pre-'));
      const kubeconfig = join(dir, 'kubeconfig');
      await writeFile(kubeconfig, api.kubeConfig().exportConfig());
      const run = await runClusterCli(kubeconfig, ['check', '--pre'], NOW);
      assert.equal(run.code, 1, run.stderr + run.stdout);
      const lines = run.stdout.split('\n');
      for (const expected of [
        "✗ OpenKruise's webhooks: still installed: MutatingWebhookConfiguration kruise-mutating-webhook-configuration; two webhooks would inject the same sidecars",
        '✓ pinned revisions: no SidecarSet pins an injection revision',
        'migration from OpenKruise NOT OK: 2 checks failed, 1 warning',
      ])
        assert.ok(lines.includes(expected), `missing: ${expected}\n${run.stdout}`);
      assert.ok(
        lines.some((l) => l.startsWith('✗ namespace and namespaceSelector: set together in logs')),
        run.stdout,
      );
      assert.ok(
        lines.some((l) =>
          l.startsWith(
            "! OpenKruise manager's settings: will not carry over: --feature-gates=PodWebhook=true",
          ),
        ),
        run.stdout,
      );
    } finally {
      await api.close();
    }
  });
});
