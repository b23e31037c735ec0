/**
 * `sidecarset rollout status|history|undo|pause|resume` against the fake API server with our
 * webhook, controller and a kubelet running (test/controller/cluster.ts): the CLI reads and writes
 * through the API, and the controller does the rest, as in a cluster.
 */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { DEFAULT_RESOURCES, SIDECARSETS, startFakeApiServer } from '../fake-apiserver/index.js';
import type { TestCluster } from '../controller/cluster.js';
import {
  container,
  pods,
  setUpAgent,
  status,
  updateSidecarSet,
  waitFor,
  withCluster,
} from '../controller/cluster.js';
import { runCli, runClusterCli } from '../support/cli.js';

const NOW = new Date('2026-07-02T10:00:00Z');

const cli = (cluster: TestCluster, args: string[]) =>
  runClusterCli(cluster.kubeconfigFile, args, NOW);

function images(cluster: TestCluster): string[] {
  return pods(cluster).map((p) => String(container(p, 'agent')?.['image']));
}

function spec(cluster: TestCluster, name: string): Record<string, unknown> {
  const obj = cluster.api.store.get(SIDECARSETS, '', name);
  return (obj?.['spec'] ?? {}) as Record<string, unknown>;
}

async function rolledOut(cluster: TestCluster, image: string, count: number): Promise<void> {
  await waitFor(
    cluster,
    () =>
      images(cluster).every((i) => i === image) &&
      status(cluster, 'agent')?.['updatedReadyPods'] === count,
    `every pod on ${image}, ready`,
  );
}

async function upgradeTo(cluster: TestCluster, image: string): Promise<void> {
  await updateSidecarSet(cluster, 'agent', (s) => {
    (s['containers'] as { image: string }[])[0] = { ...(s['containers'] as object[])[0], image };
  });
}

describe('sidecarset rollout', () => {
  it('history lists the revisions; undo writes the old sidecars back and the pods follow in place', async () => {
    await withCluster(async (cluster) => {
      await setUpAgent(cluster, 3, { maxUnavailable: 2 });
      const uids = pods(cluster).map((p) => p['metadata']);
      await upgradeTo(cluster, 'agent:2');
      await rolledOut(cluster, 'agent:2', 3);

      const history = await cli(cluster, ['rollout', 'history', 'agent']);
      assert.equal(history.code, 0, history.stderr);
      const rows = history.stdout.trim().split('\n');
      assert.equal(rows[0], 'sidecarset.apps.kruise.io/agent');
      assert.match(rows[1] ?? '', /^REVISION +CURRENT +NAME +IMAGES +CHANGE-CAUSE$/);
      assert.match(rows[2] ?? '', /^1 +agent-\w+ +agent=agent:1 +<none>$/);
      assert.match(rows[3] ?? '', /^2 +\* +agent-\w+ +agent=agent:2 +<none>$/);

      const done = await cli(cluster, ['rollout', 'status', 'agent']);
      assert.equal(
        done.stdout,
        'SidecarSet "agent" successfully rolled out: 3 of 3 pods updated, 3 updated and ready\n',
      );

      const undo = await cli(cluster, ['rollout', 'undo', 'agent']);
      assert.equal(undo.code, 0, undo.stderr);
      assert.equal(undo.stdout, 'sidecarset.apps.kruise.io/agent rolled back to revision 1\n');
      assert.equal(
        (spec(cluster, 'agent')['containers'] as { image: string }[])[0]?.image,
        'agent:1',
      );
      await rolledOut(cluster, 'agent:1', 3);
      // In place: the same pods, not new ones.
      assert.deepEqual(
        pods(cluster)
          .map((p) => p['metadata'])
          .map((m) => (m as { uid: string }).uid),
        uids.map((m) => (m as { uid: string }).uid),
      );

      // The controller renumbered the old revision as the newest, as kubectl shows a rollback.
      const after = await cli(cluster, ['rollout', 'history', 'agent', '-o', 'json']);
      const entries = JSON.parse(after.stdout) as {
        revision: number;
        current: boolean;
        images: string[];
      }[];
      assert.deepEqual(
        entries.map((e) => [e.revision, e.current, e.images]),
        [
          [2, false, ['agent=agent:2']],
          [3, true, ['agent=agent:1']],
        ],
      );
      const one = await cli(cluster, ['rollout', 'history', 'agent', '--revision', '2']);
      assert.match(one.stdout, /^name: agent-\w+\nrevision: 2\nspec:\n {2}containers:\n/);
      assert.match(one.stdout, /image: agent:2/);

      const again = await cli(cluster, ['rollout', 'undo', 'agent', '--to-revision', '3']);
      assert.equal(
        again.stdout,
        'sidecarset.apps.kruise.io/agent skipped rollback (the spec already matches revision 3)\n',
      );
      const dry = await cli(cluster, ['rollout', 'undo', 'agent', '--dry-run']);
      assert.equal(
        dry.stdout,
        'sidecarset.apps.kruise.io/agent rolled back to revision 2 (dry run)\n',
      );
      assert.equal(
        (spec(cluster, 'agent')['containers'] as { image: string }[])[0]?.image,
        'agent:1',
      );
    });
  });

  it('bad input: one line on stderr, exit 1', async () => {
    await withCluster(async (cluster) => {
      await setUpAgent(cluster, 1, {});
      const missing = await cli(cluster, ['rollout', 'undo', 'nope']);
      assert.equal(missing.code, 1);
      assert.equal(missing.stderr, 'error: sidecarset.apps.kruise.io "nope" not found\n');
      const noRevision = await cli(cluster, ['rollout', 'undo', 'agent', '--to-revision', '9']);
      assert.equal(noRevision.code, 1);
      assert.match(
        noRevision.stderr,
        /^error: SidecarSet agent has no revision 9 \(revisions: 1\)\n$/,
      );
      const nothingBefore = await cli(cluster, ['rollout', 'undo', 'agent']);
      assert.equal(
        nothingBefore.stderr,
        'error: SidecarSet agent has no revision before the current one\n',
      );
      const noHistory = await cli(cluster, [
        'rollout',
        'history',
        'agent',
        '--revision-namespace',
        'default',
      ]);
      assert.equal(
        noHistory.stdout,
        'sidecarset.apps.kruise.io/agent: no ControllerRevisions in namespace default\n',
      );
      const badRevision = await cli(cluster, ['rollout', 'history', 'agent', '--revision', '4']);
      assert.equal(
        badRevision.stderr,
        'error: sidecarset.apps.kruise.io "agent" has no revision 4\n',
      );
      const badContext = await cli(cluster, ['rollout', 'status', 'agent', '--context', 'nope']);
      assert.equal(badContext.stderr, 'error: context "nope" does not exist in the kubeconfig\n');
    });
  });

  it('pause stops the rollout, status says why, resume lifts it and stamps resumed-at', async () => {
    await withCluster(async (cluster) => {
      await setUpAgent(cluster, 3, { maxUnavailable: 1 });
      const pause = await cli(cluster, ['rollout', 'pause', 'agent']);
      assert.equal(pause.stdout, 'sidecarset.apps.kruise.io/agent paused\n');
      assert.equal((spec(cluster, 'agent')['updateStrategy'] as { paused?: boolean }).paused, true);
      const twice = await cli(cluster, ['rollout', 'pause', 'agent']);
      assert.equal(twice.stdout, 'sidecarset.apps.kruise.io/agent already paused\n');

      await upgradeTo(cluster, 'agent:2');
      const paused = await cli(cluster, ['rollout', 'status', 'agent']);
      assert.equal(paused.code, 0);
      const lines = paused.stdout.trim().split('\n');
      assert.match(
        lines[0] ?? '',
        /^SidecarSet "agent" rollout is paused by spec.updateStrategy.paused .*: 0 of 3 pods updated/,
      );
      assert.ok(lines.includes('  paused: updateStrategy.paused is true'), paused.stdout);
      assert.ok(
        lines.some((l) =>
          /^ +3 +held: Paused +updateStrategy.paused is true +default\/web-00, default\/web-01, default\/web-02$/.test(
            l,
          ),
        ),
        paused.stdout,
      );
      assert.deepEqual(images(cluster), ['agent:1', 'agent:1', 'agent:1']);

      const resume = await cli(cluster, ['rollout', 'resume', 'agent']);
      assert.equal(resume.stdout, 'sidecarset.apps.kruise.io/agent resumed\n');
      const obj = cluster.api.store.get(SIDECARSETS, '', 'agent');
      const annotations = (obj?.['metadata'] as { annotations: Record<string, string> })
        .annotations;
      assert.equal(annotations['sidecarset.dev/resumed-at'], '2026-07-02T10:00:00Z');
      await rolledOut(cluster, 'agent:2', 3);
    });
  });

  it('status -w follows the rollout until it is done; -o json for programs', async () => {
    await withCluster(
      async (cluster) => {
        await setUpAgent(cluster, 2, { maxUnavailable: 1, paused: true });
        await upgradeTo(cluster, 'agent:2');
        const json = await cli(cluster, ['rollout', 'status', 'agent', '-o', 'json']);
        const parsed = JSON.parse(json.stdout) as {
          phase: string;
          held: { reason: string; pods: string[] }[];
        };
        assert.equal(parsed.phase, 'Paused');
        assert.deepEqual(parsed.held, [
          {
            reason: 'Paused',
            message: 'updateStrategy.paused is true',
            pods: ['default/web-00', 'default/web-01'],
          },
        ]);

        const watching = cli(cluster, ['rollout', 'status', 'agent', '-w', '--timeout', '30']);
        await cli(cluster, ['rollout', 'resume', 'agent']);
        const watched = await watching;
        assert.equal(watched.code, 0, watched.stderr);
        const printed = watched.stdout.trim().split('\n');
        assert.match(printed[0] ?? '', /rollout is paused/);
        assert.equal(
          printed.at(-1),
          'SidecarSet "agent" successfully rolled out: 2 of 2 pods updated, 2 updated and ready',
        );
        assert.ok(
          printed.some((l) => l.startsWith('Waiting for SidecarSet "agent" rollout to finish')),
          watched.stdout,
        );
      },
      { kubeletDelayMs: 600 },
    );
  });

  it('status -w gives up after --timeout with exit 1', async () => {
    await withCluster(async (cluster) => {
      await setUpAgent(cluster, 1, { paused: true });
      await upgradeTo(cluster, 'agent:2');
      const run = await cli(cluster, ['rollout', 'status', 'agent', '-w', '--timeout', '1']);
      assert.equal(run.code, 1);
      assert.equal(run.stderr, 'error: timed out waiting for the rollout of SidecarSet "agent"\n');
    });
  });
});

describe('cluster commands without a cluster', () => {
  it('a cluster without the SidecarSet CRD is told so, exit 1', async () => {
    const api = await startFakeApiServer({
      resources: DEFAULT_RESOURCES.filter((r) => r.resource !== 'sidecarsets'),
    });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'rollout-cli-'));
      const kubeconfig = join(dir, 'kubeconfig');
      await writeFile(kubeconfig, api.kubeConfig().exportConfig());
      const run = await runClusterCli(kubeconfig, ['rollout', 'status', 'agent']);
      assert.equal(run.code, 1);
      assert.equal(
        run.stderr,
        'error: the API server serves no apps.kruise.io API: is the SidecarSet CRD installed?\n',
      );
    } finally {
      await api.close();
    }
  });

  it('an unreachable API server is one line, exit 1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rollout-cli-'));
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(
      kubeconfig,
      `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9", insecure-skip-tls-verify: true}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
users: [{name: u, user: {token: t}}]
current-context: c
`,
    );
    for (const args of [
      ['rollout', 'status', 'agent'],
      ['rollout', 'history', 'agent'],
      ['rollout', 'pause', 'agent'],
      ['check-inject', 'web-00'],
      ['plan', 'agent'],
    ]) {
      const run = await runCli([...args, '--kubeconfig', kubeconfig]);
      assert.equal(run.code, 1, args.join(' '));
      assert.match(
        run.stderr,
        /^error: cannot reach the cluster at https:\/\/127\.0\.0\.1:9: .*ECONNREFUSED.*\n$/,
      );
    }
    const missing = await runCli(['rollout', 'status', 'agent', '--kubeconfig', join(dir, 'none')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^error: cannot load the kubeconfig: ENOENT/);
  });
});
