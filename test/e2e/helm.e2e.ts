/**
 * The chart installed with a real helm (test/helm-fixture) into a real kube-apiserver, the webhooks
 * pointed at `sidecarset serve` on 127.0.0.1 through the chart's webhook.url and
 * certificates.caBundle values (what test/e2e/install.ts does for manifests/ with kustomize). Then
 * a pod is created and comes back injected; `helm uninstall` takes the webhooks away again.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';

import type { ControlPlane } from '../kube-fixture/control-plane.js';
import { eventually } from '../support/eventually.js';
import { crdEstablished } from './install.js';
import type { SidecarsetProcess } from './processes.js';
import { install, useControlPlane } from './support.js';

const chart = new URL('../../charts/sidecarset', import.meta.url).pathname;
const examples = new URL('../../examples/', import.meta.url).pathname;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** helm as the cluster admin, its cache and config inside the control plane's folder. */
function helm(plane: ControlPlane, args: readonly string[]): Promise<Result> {
  const dir = process.env['HELM_FIXTURE_BIN'];
  if (dir === undefined) throw new Error('HELM_FIXTURE_BIN is not set: run npm run test:e2e');
  const home = join(plane.dir, 'helm');
  const child = spawn(join(dir, 'helm'), [...args, '--kubeconfig', plane.adminKubeconfig], {
    env: {
      ...process.env,
      HELM_CACHE_HOME: join(home, 'cache'),
      HELM_CONFIG_HOME: join(home, 'config'),
      HELM_DATA_HOME: join(home, 'data'),
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      resolve({ code, stdout, stderr });
    });
  });
}

async function installChart(
  plane: ControlPlane,
  webhook: { url: string; caPem: string },
): Promise<void> {
  const installed = await helm(plane, [
    'install',
    'sidecarset',
    chart,
    '--set',
    `webhook.url=${webhook.url}`,
    '--set',
    `certificates.caBundle=${Buffer.from(webhook.caPem).toString('base64')}`,
  ]);
  assert.equal(installed.code, 0, `helm install: ${installed.stderr}`);
  await crdEstablished(plane);
}

describe('installed with helm into a real API server', () => {
  const cluster = useControlPlane();
  const plane = cluster.plane;
  let serve: SidecarsetProcess;

  before(async () => {
    const installation = await install(plane(), installChart);
    serve = await installation.serve();
    cluster.defer(() => serve.stop());
  });

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

  it('helm uninstall removes the webhooks and the CRD', async () => {
    // First our process: without its RBAC it would be refused, which fails the file (support.ts).
    await serve.stop();
    // No --wait: the namespace stays Terminating without kube-controller-manager.
    const removed = await helm(plane(), ['uninstall', 'sidecarset']);
    assert.equal(removed.code, 0, removed.stderr);
    // The CRD goes once the API server has deleted its SidecarSets (its cleanup finalizer).
    await eventually(async () => {
      const left = await plane().kubectl([
        'get',
        'mutatingwebhookconfigurations,validatingwebhookconfigurations,crd',
        '-o',
        'name',
      ]);
      return left.code === 0 && left.stdout.trim() === '';
    }, 'the webhook configurations and the CRD gone');
  });
});
