/**
 * The cluster commands on a real API server, with `sidecarset serve` (webhook and controller)
 * running as the manifests' ServiceAccount: `kubectl sidecarset` (the plugin, run by the real
 * kubectl with bin/ on PATH) undoes a rollout and the controller rolls the pods back in place;
 * `check-inject` explains an injected pod and a pod no SidecarSet matches; `kubectl wait
 * --for=condition=Ready` waits for a rollout (src/core/status/status-conditions.ts). The CLI runs as the
 * admin, as a person would.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { before, describe, it } from 'node:test';

import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';

import { ApiKubelet } from '../support/api-kubelet.js';
import { eventually } from '../support/eventually.js';
import { replaceSidecarSet } from '../support/replace-sidecarset.js';
import type { PodJson } from '../scenarios/rollout.js';
import { podReady, sidecar } from '../scenarios/rollout.js';
import { errors } from './processes.js';
import { install, scopeIncludes, useControlPlane } from './support.js';

const root = new URL('../../', import.meta.url).pathname;
const NAMESPACE = 'shop';
const SIDECARSETS = { group: 'apps.kruise.io', version: 'v1beta1', plural: 'sidecarsets' };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command args` with bin/ first on PATH and the admin's kubeconfig in $KUBECONFIG. */
function run(command: string, args: readonly string[], kubeconfig: string): Promise<Run> {
  const child = spawn(command, args, {
    cwd: root,
    env: {
      ...process.env,
      PATH: `${root}bin:${process.env['PATH'] ?? ''}`,
      KUBECONFIG: kubeconfig,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) =>
    child.on('close', (code) => {
      resolve({ code, stdout, stderr });
    }),
  );
}

describe('rollout commands and check-inject on a real API server', () => {
  const cluster = useControlPlane();
  const plane = cluster.plane;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  /** `kubectl sidecarset ARGS`, the plugin found on PATH. */
  const plugin = (args: readonly string[]): Promise<Run> =>
    run(plane().binaries.kubectl, ['sidecarset', ...args], plane().adminKubeconfig);
  const pods = async (): Promise<PodJson[]> =>
    (await core.listNamespacedPod({ namespace: NAMESPACE })).items as unknown as PodJson[];
  const images = async (): Promise<string[]> =>
    (await pods()).map(
      (p) => `${sidecar(p, 'logtail').running ?? ''}/${String(sidecar(p, 'logtail').ready)}`,
    );

  before(async () => {
    const serve = await (await install(plane())).serve();
    cluster.defer(async () => {
      assert.deepEqual(errors(serve), [], 'serve logged no errors');
      await serve.stop();
    });
    const kubelet = new ApiKubelet(plane().kubeConfig(), { delayMs: 100 });
    cluster.defer(() => kubelet.stop());
    const kubeConfig = plane().kubeConfig();
    core = kubeConfig.makeApiClient(CoreV1Api);
    custom = kubeConfig.makeApiClient(CustomObjectsApi);
    await plane().createNamespace(NAMESPACE);
    await custom.createClusterCustomObject({
      ...SIDECARSETS,
      body: {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'SidecarSet',
        metadata: { name: 'logtail' },
        spec: {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NAMESPACE } },
          selector: { matchLabels: { app: 'web' } },
          updateStrategy: { maxUnavailable: '50%' },
          containers: [{ name: 'logtail', image: 'logtail:1' }],
        },
      },
    });
    // Pods created before the leader's scope names the SidecarSet skip the webhook (ADR 12).
    await scopeIncludes(plane(), 'web');
    for (const [name, app] of [
      ['web-0', 'web'],
      ['web-1', 'web'],
      ['web-2', 'web'],
      ['db-0', 'db'],
    ] as const) {
      await core.createNamespacedPod({
        namespace: NAMESPACE,
        body: {
          metadata: { name, labels: { app } },
          spec: { containers: [{ name: app, image: 'nginx:1.27' }] },
        },
      });
    }
    await eventually(async () => (await pods()).every(podReady), 'pods ready');
  });

  it('kubectl sidecarset: the plugin runs through the real kubectl', async () => {
    const help = await plugin(['rollout', '--help']);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /undo \[options\] <name> +write a revision's sidecars back/);
  });

  it('kubectl sidecarset rollout undo: the spec goes back and the pods follow in place', async () => {
    const web = async (): Promise<PodJson[]> =>
      (await pods()).filter((p) => p.metadata.name.startsWith('web-'));
    const uids = (await web()).map((p) => (p.metadata as { uid?: string }).uid);
    await replaceSidecarSet(custom, 'logtail', (spec) => {
      (spec['containers'] as { image: string }[])[0] = {
        name: 'logtail',
        image: 'logtail:2',
      } as never;
    });
    await eventually(
      async () => (await images()).filter((i) => i === 'logtail:2/true').length === 3,
      'three pods on logtail:2',
    );
    const done = await plugin(['rollout', 'status', 'logtail', '-w', '--timeout', '60']);
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /SidecarSet "logtail" successfully rolled out: 3 of 3 pods updated/);

    const history = await plugin(['rollout', 'history', 'logtail']);
    assert.equal(history.code, 0, history.stderr);
    assert.match(history.stdout, /^1 +logtail-\w+ +logtail=logtail:1 +<none>$/m);
    assert.match(history.stdout, /^2 +\* +logtail-\w+ +logtail=logtail:2 +<none>$/m);

    const undo = await plugin(['rollout', 'undo', 'logtail']);
    assert.equal(undo.code, 0, undo.stderr);
    assert.equal(undo.stdout, 'sidecarset.apps.kruise.io/logtail rolled back to revision 1\n');
    await eventually(
      async () => (await images()).filter((i) => i === 'logtail:1/true').length === 3,
      'three pods back on logtail:1',
    );
    assert.deepEqual(
      (await web()).map((p) => (p.metadata as { uid?: string }).uid),
      uids,
      'the same pods: rolled back in place',
    );
    await eventually(async () => {
      const after = await plugin(['rollout', 'history', 'logtail', '-o', 'json']);
      const rows = JSON.parse(after.stdout) as { revision: number; current: boolean }[];
      return rows.map((r) => `${r.revision}${r.current ? '*' : ''}`).join(' ') === '2 3*';
    }, 'revision 1 renumbered 3 and current');

    const missing = await plugin(['rollout', 'undo', 'nope']);
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, 'error: sidecarset.apps.kruise.io "nope" not found\n');
  });

  it('check-inject explains an injected pod and a pod no SidecarSet matches', async () => {
    const injected = await run(
      process.execPath,
      [
        'bin/sidecarset.js',
        'check-inject',
        'web-0',
        '-n',
        NAMESPACE,
        '--kubeconfig',
        plane().adminKubeconfig,
      ],
      plane().adminKubeconfig,
    );
    assert.equal(injected.code, 0, injected.stderr);
    assert.match(injected.stdout, /^pod shop\/web-0: injected by logtail\n/);
    assert.match(injected.stdout, /\nlogtail +Injected +injected; sidecars up to date\n/);

    const unmatched = await plugin(['check-inject', 'db-0', '-n', NAMESPACE, '-o', 'json']);
    assert.equal(unmatched.code, 0, unmatched.stderr);
    const result = JSON.parse(unmatched.stdout) as {
      webhookScope: { inScope: boolean };
      verdicts: { sidecarSet: string; state: string; reason: string }[];
    };
    assert.equal(result.webhookScope.inScope, false);
    assert.deepEqual(
      result.verdicts.map((v) => [v.sidecarSet, v.state, v.reason]),
      [['logtail', 'NotInjected', "spec.selector does not match the pod's labels"]],
    );

    // The installed webhook configuration leaves sidecarset-system out (manifests/).
    await core.createNamespacedPod({
      namespace: 'sidecarset-system',
      body: {
        metadata: { name: 'probe', labels: { app: 'web' } },
        spec: {
          serviceAccountName: 'sidecarset',
          // The namespace enforces the restricted Pod Security Standard.
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'probe',
              image: 'nginx:1.27',
              securityContext: {
                allowPrivilegeEscalation: false,
                capabilities: { drop: ['ALL'] },
              },
            },
          ],
        },
      },
    });
    const unseen = await plugin(['check-inject', 'probe', '-n', 'sidecarset-system']);
    assert.equal(unseen.code, 0, unseen.stderr);
    assert.match(
      unseen.stdout,
      /^webhook scope: the pod webhook's namespaceSelector leaves namespace sidecarset-system out: it never sees the pod$/m,
    );

    const absent = await plugin(['check-inject', 'nope', '-n', NAMESPACE]);
    assert.equal(absent.code, 1);
    assert.equal(absent.stderr, 'error: pod "shop/nope" not found\n');
  });

  it('kubectl wait --for=condition=Ready returns once the new generation is rolled out', async () => {
    // The Ready=True of the previous generation stands when kubectl starts: kubectl must not take
    // it (its observedGeneration is behind), only the controller's verdict on the new spec.
    await replaceSidecarSet(custom, 'logtail', (spec) => {
      (spec['containers'] as { image: string }[])[0] = {
        name: 'logtail',
        image: 'logtail:3',
      } as never;
    });
    const wait = await plane().kubectl([
      'wait',
      '--for=condition=Ready',
      'sidecarset/logtail',
      '--timeout=60s',
    ]);
    assert.equal(wait.code, 0, wait.stderr);
    assert.equal(wait.stdout, 'sidecarset.apps.kruise.io/logtail condition met\n');
    const ss = (await custom.getClusterCustomObject({ ...SIDECARSETS, name: 'logtail' })) as {
      metadata: { generation: number };
      status: {
        matchedPods: number;
        updatedReadyPods: number;
        conditions: { type: string; status: string; reason: string; observedGeneration: number }[];
      };
    };
    const byType = Object.fromEntries(ss.status.conditions.map((c) => [c.type, c]));
    assert.deepEqual(
      [byType['Ready']?.status, byType['Ready']?.reason, byType['Ready']?.observedGeneration],
      ['True', 'RolloutComplete', ss.metadata.generation],
    );
    assert.equal(byType['Reconciling']?.status, 'False');
    assert.equal(byType['Stalled']?.status, 'False');
    assert.deepEqual([ss.status.matchedPods, ss.status.updatedReadyPods], [3, 3]);
  });
});
