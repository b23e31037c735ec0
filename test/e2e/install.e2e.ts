/**
 * The project installed from `manifests/` into a real kube-apiserver and used as a user would:
 * `kubectl apply -k`, `sidecarset serve` in cluster mode as the manifests' ServiceAccount (RBAC
 * enforced), the article's SidecarSet and pod through the real admission chain, an in-place
 * upgrade, and the pod webhook's `failurePolicy: Ignore` with the webhook down.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { before, describe, it } from 'node:test';

import { parse, stringify } from 'yaml';

import { ApiKubelet } from '../support/api-kubelet.js';
import type { SidecarsetProcess } from './processes.js';
import { errors, lastWords } from './processes.js';
import type { Installation } from './support.js';
import { runClusterCli } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { install, scopeIncludes, useControlPlane } from './support.js';

const examples = new URL('../../examples/', import.meta.url).pathname;

interface Container {
  name: string;
  image: string;
  env?: { name: string; value?: string }[];
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodJson {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: { containers: Container[]; volumes?: { name: string }[] };
  status?: {
    containerStatuses?: { name: string; image: string; restartCount: number; ready: boolean }[];
  };
}
interface SidecarSetJson {
  metadata: { annotations?: Record<string, string>; generation?: number };
  spec: {
    updateStrategy?: Record<string, unknown>;
    containers: (Container & Record<string, unknown>)[];
  };
  status?: Record<string, unknown>;
}

const exampleYaml = (file: string): Promise<string> => readFile(`${examples}${file}`, 'utf8');

/** The article's pod under another name. */
async function nginxPod(name: string): Promise<string> {
  const pod = parse(await exampleYaml('nginx-pod.yaml')) as { metadata: { name: string } };
  pod.metadata.name = name;
  return stringify(pod);
}

describe('installed from manifests/ into a real API server', () => {
  const cluster = useControlPlane();
  const plane = cluster.plane;
  let installation: Installation;
  let serve: SidecarsetProcess;
  let kubelet: ApiKubelet;

  const getJson = async <T>(...args: string[]): Promise<T> => {
    const result = await plane().kubectl(['get', ...args, '-o', 'json']);
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout) as T;
  };
  const pod = (name: string): Promise<PodJson> => getJson<PodJson>('pod', name);
  const logtail = (): Promise<SidecarSetJson> =>
    getJson<SidecarSetJson>('sidecarset', 'logtail-sidecarset');

  before(async () => {
    installation = await install(plane());
    serve = await installation.serve();
    cluster.defer(() => serve.stop());
    kubelet = new ApiKubelet(plane().kubeConfig(), { namespace: 'default', delayMs: 50 });
    cluster.defer(() => kubelet.stop());
  });

  it('accepts every manifest (kubectl apply -k succeeded in the set-up)', async () => {
    const crd = await plane().kubectl(['get', 'crd', 'sidecarsets.apps.kruise.io']);
    assert.equal(crd.code, 0, crd.stderr);
    for (const [kind, name] of [
      ['mutatingwebhookconfiguration', 'sidecarset-mutating-webhook'],
      ['validatingwebhookconfiguration', 'sidecarset-validating-webhook'],
      ['clusterrole', 'sidecarset-webhook'],
      ['deployment', 'sidecarset-webhook'],
      ['poddisruptionbudget', 'sidecarset-webhook'],
      ['serviceaccount', 'sidecarset'],
    ] as const) {
      const got = await plane().kubectl(['get', '-n', 'sidecarset-system', kind, name]);
      assert.equal(got.code, 0, `${kind} ${name}: ${got.stderr}`);
    }
  });

  it("kubectl apply of the article's SidecarSet: defaulted and hashed by our webhook", async () => {
    const applied = await plane().kubectl(['apply', '-f', `${examples}logtail-sidecarset.yaml`]);
    assert.equal(applied.code, 0, applied.stderr);
    const set = await logtail();
    const annotations = set.metadata.annotations ?? {};
    assert.match(annotations['kruise.io/sidecarset-hash'] ?? '', /^[a-z0-9]+$/);
    assert.match(annotations['kruise.io/sidecarset-hash-without-image'] ?? '', /^[a-z0-9]+$/);
    const container = set.spec.containers[0];
    assert.ok(container);
    assert.equal(container['podInjectPolicy'], 'BeforeAppContainer');
    assert.equal(container['imagePullPolicy'], 'IfNotPresent');
    assert.equal(set.spec.updateStrategy?.['type'], 'RollingUpdate');
  });

  it('rejects an invalid SidecarSet with our validating webhook message', async () => {
    const invalid = stringify({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'invalid' },
      spec: {
        selector: { matchLabels: { app: 'nginx' } },
        containers: [{ name: 'logtail', image: 'other:1' }],
      },
    });
    const result = await plane().kubectl(['apply', '-f', '-'], { input: invalid });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /admission webhook "vsidecarset\.sidecarset\.kruise\.io" denied/);
    assert.match(result.stderr, /logtail/);
  });

  it('injects the nginx pod created through the API server: logtail first, TZ, the shared volume', async () => {
    await scopeIncludes(plane(), 'nginx');
    const created = await plane().kubectl(['apply', '-f', `${examples}nginx-pod.yaml`]);
    assert.equal(created.code, 0, created.stderr);
    const injected = await pod('test-pod');
    assert.deepEqual(
      injected.spec.containers.map((c) => c.name),
      ['logtail', 'nginx'],
    );
    const sidecar = injected.spec.containers[0];
    assert.ok(sidecar);
    assert.equal(sidecar.image, 'log-service/logtail:0.16.16');
    assert.deepEqual(
      sidecar.env?.find((e) => e.name === 'TZ'),
      { name: 'TZ', value: 'Asia/Shanghai' },
    );
    assert.ok(
      sidecar.volumeMounts?.some((m) => m.name === 'nginx-log' && m.mountPath === '/var/log/nginx'),
    );
    assert.deepEqual(
      injected.spec.volumes?.filter((v) => v.name === 'nginx-log').length,
      1,
      'the volume is shared, not added twice',
    );
    assert.match(
      injected.metadata.annotations?.['kruise.io/sidecarset-injected-list'] ?? '',
      /logtail-sidecarset/,
    );
  });

  it('upgrades logtail in place when the image changes; status and columns follow', async () => {
    await eventually(async () => {
      const s = (await logtail()).status;
      return s?.['matchedPods'] === 1 && s['updatedPods'] === 1 && s['readyPods'] === 1;
    }, 'status 1/1/1');
    const before = await pod('test-pod');
    const nginxRestarts = before.status?.containerStatuses?.find(
      (c) => c.name === 'nginx',
    )?.restartCount;

    const set = parse(await exampleYaml('logtail-sidecarset.yaml')) as SidecarSetJson;
    (set.spec.containers[0] as Container).image = 'log-service/logtail:0.16.18';
    const applied = await plane().kubectl(['apply', '-f', '-'], { input: stringify(set) });
    assert.equal(applied.code, 0, applied.stderr);

    await eventually(async () => {
      const p = await pod('test-pod');
      const status = p.status?.containerStatuses?.find((c) => c.name === 'logtail');
      return status?.image === 'log-service/logtail:0.16.18' && status.ready;
    }, 'logtail running 0.16.18');
    const after = await pod('test-pod');
    assert.equal(
      after.spec.containers.find((c) => c.name === 'nginx')?.image,
      before.spec.containers.find((c) => c.name === 'nginx')?.image,
    );
    assert.equal(
      after.status?.containerStatuses?.find((c) => c.name === 'nginx')?.restartCount,
      nginxRestarts,
      'nginx was not restarted',
    );
    await eventually(async () => {
      const s = await logtail();
      return (
        s.status?.['observedGeneration'] === s.metadata.generation &&
        s.status?.['updatedPods'] === 1 &&
        s.status['readyPods'] === 1
      );
    }, 'status 1/1/1 at the new generation');
    const columns = await plane().kubectl(['get', 'sidecarset', 'logtail-sidecarset']);
    assert.match(columns.stdout, /^NAME\s+MATCHED\s+UPDATED\s+READY\s+PAUSED\s+REASON\s+AGE\n/);
    // Not paused: PAUSED and REASON blank (no RolloutPaused condition) or False.
    assert.match(
      columns.stdout,
      /\nlogtail-sidecarset\s+1\s+1\s+1\s+(False\s+\S+\s+)?\S+\n/,
      columns.stdout,
    );
  });

  it('sidecarset check reads the real objects and probes the webhook at its URL: all pass', async () => {
    const run = await runClusterCli(plane().adminKubeconfig, ['check', '-o', 'json'], new Date());
    const result = JSON.parse(run.stdout) as {
      passed: boolean;
      checks: { name: string; state: string; message: string }[];
    };
    assert.deepEqual(
      result.checks.filter((c) => c.state !== 'ok').map((c) => [c.name, c.state, c.message]),
      [
        [
          'webhook mpod.sidecarset.kruise.io: failurePolicy',
          'warning',
          'Ignore: while the webhook is unreachable, pods are created without their sidecars',
        ],
      ],
      run.stdout,
    );
    // The test overlay points every webhook at 127.0.0.1 and scales the Deployment to 0
    // (test/e2e/install.ts): the process there serves, and answers /readyz with the caBundle's CA.
    const url = installation.webhookUrl;
    assert.equal(
      result.checks.find((c) => c.name === 'CRD conversion webhook: service')?.message,
      `calls ${url}/convert; ${url}/readyz answers 200 (outside the cluster)`,
    );
    assert.equal(
      result.checks.find((c) => c.name === 'Deployment sidecarset-system/sidecarset-webhook')
        ?.message,
      `0/0 replicas ready, not in use: every webhook calls ${url}`,
    );
    assert.match(
      result.checks.find((c) => c.name.startsWith('Lease '))?.message ?? '',
      /^held by \S+, renewed \d+s ago$/,
    );
    assert.ok(
      result.checks.some((c) => c.name === 'SidecarSets' && c.message === '1 in the cluster'),
    );
    assert.equal(run.code, 0, run.stdout);
    assert.equal(result.passed, true);
  });

  it('failurePolicy Ignore: with the webhook down a pod is created without its sidecar, then injected again', async () => {
    assert.equal(await serve.stop('SIGTERM'), 0, lastWords(serve));
    const missed = await plane().kubectl(['apply', '-f', '-'], {
      input: await nginxPod('while-down'),
    });
    assert.equal(missed.code, 0, missed.stderr);
    assert.deepEqual(
      (await pod('while-down')).spec.containers.map((c) => c.name),
      ['nginx'],
    );

    serve = await installation.serve();
    const back = await plane().kubectl(['apply', '-f', '-'], {
      input: await nginxPod('after-restart'),
    });
    assert.equal(back.code, 0, back.stderr);
    assert.deepEqual(
      (await pod('after-restart')).spec.containers.map((c) => c.name),
      ['logtail', 'nginx'],
    );
  });

  it('serve logged no errors', () => {
    assert.deepEqual(errors(serve), []);
  });
});
