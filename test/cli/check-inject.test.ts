/**
 * `sidecarset check-inject` and `sidecarset plan NAME` against the fake API server with our
 * webhook and controller running (test/controller/cluster.ts).
 */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { PODS, SIDECARSETS } from '../fake-apiserver/index.js';
import type { TestCluster } from '../controller/cluster.js';
import {
  createPods,
  nginxPod,
  setUpAgent,
  updateSidecarSet,
  withCluster,
} from '../controller/cluster.js';
import { runCli, runClusterCli } from '../support/cli.js';

const NOW = new Date('2026-07-02T10:00:00Z');

const cli = (cluster: TestCluster, args: string[]) =>
  runClusterCli(cluster.kubeconfigFile, args, NOW);

describe('sidecarset check-inject', () => {
  it('explains an injected pod and a pod that no SidecarSet matches', async () => {
    await withCluster(async (cluster) => {
      await setUpAgent(cluster, 1, {});
      await createPods(cluster, 1, () => nginxPod('db', { app: 'db' }));

      const injected = await cli(cluster, ['check-inject', 'web-00']);
      assert.equal(injected.code, 0, injected.stderr);
      assert.deepEqual(injected.stdout.split('\n'), [
        'pod default/web-00: injected by agent',
        'webhook scope: a scoped pod webhook is called for pods like this one (scope: selectors)',
        'SIDECARSET  STATE     REASON',
        'agent       Injected  injected; sidecars up to date',
        '',
      ]);

      const unmatched = await cli(cluster, ['check-inject', 'db', '-n', 'default']);
      assert.deepEqual(unmatched.stdout.split('\n'), [
        'pod default/db: injected by no SidecarSet',
        'webhook scope: a scoped pod webhook is not called for pods like this one: no SidecarSet can match it (scope: selectors)',
        'SIDECARSET  STATE        REASON',
        "agent       NotInjected  spec.selector does not match the pod's labels",
        '',
      ]);

      const json = await cli(cluster, ['check-inject', 'db', '-o', 'json']);
      const parsed = JSON.parse(json.stdout) as {
        pod: string;
        verdicts: { sidecarSet: string; state: string; checks: { name: string; ok: boolean }[] }[];
      };
      assert.equal(parsed.pod, 'default/db');
      assert.deepEqual(
        parsed.verdicts[0]?.checks.filter((c) => !c.ok).map((c) => c.name),
        ['selector'],
      );
      const yaml = await cli(cluster, ['check-inject', 'db', '-o', 'yaml']);
      assert.match(yaml.stdout, /^pod: default\/db\n/);
    });
  });

  it('a pod the webhook missed, and an outdated pod', async () => {
    await withCluster(async (cluster) => {
      await setUpAgent(cluster, 1, { paused: true });
      // Created without the webhook (as when it was down): the store takes it as sent.
      cluster.api.store.create(PODS, 'default', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'missed', namespace: 'default', labels: { app: 'nginx' } },
        spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] },
      });
      const missed = await cli(cluster, ['check-inject', 'missed']);
      assert.match(
        missed.stdout,
        /\nagent +Missed +it matches and existed when the pod was created, but the pod lacks its sidecars/,
      );

      await updateSidecarSet(cluster, 'agent', (spec) => {
        (spec['containers'] as { image: string }[])[0] = {
          name: 'agent',
          image: 'agent:2',
        } as never;
      });
      const outdated = await cli(cluster, ['check-inject', 'web-00']);
      assert.match(
        outdated.stdout,
        /\nagent +Injected +injected; sidecars outdated: updateStrategy.paused is true\n/,
      );
    });
  });

  it('a pod that does not exist: one line, exit 1', async () => {
    await withCluster(async (cluster) => {
      const run = await cli(cluster, ['check-inject', 'nope', '-n', 'kube-system']);
      assert.equal(run.code, 1);
      assert.equal(run.stderr, 'error: pod "kube-system/nope" not found\n');
    });
  });
});

describe('sidecarset plan NAME', () => {
  it("plans the cluster's SidecarSet with its live pods, as offline plan does with the same objects", async () => {
    await withCluster(async (cluster) => {
      await setUpAgent(cluster, 4, { maxUnavailable: 2, paused: true });
      await updateSidecarSet(cluster, 'agent', (spec) => {
        (spec['containers'] as { image: string }[])[0] = {
          name: 'agent',
          image: 'agent:2',
        } as never;
      });
      const live = await cli(cluster, ['plan', 'agent', '-o', 'json']);
      assert.equal(live.code, 0, live.stderr);
      const plan = JSON.parse(live.stdout) as { held: { reason: string }[]; sidecarSet: string };
      assert.equal(plan.sidecarSet, 'agent');
      assert.deepEqual(
        plan.held.map((h) => h.reason),
        ['Paused', 'Paused', 'Paused', 'Paused'],
      );

      const dir = await mkdtemp(join(tmpdir(), 'plan-live-'));
      const ssFile = join(dir, 'ss.json');
      const podsFile = join(dir, 'pods.json');
      await writeFile(ssFile, JSON.stringify(cluster.api.store.get(SIDECARSETS, '', 'agent')));
      await writeFile(
        podsFile,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'List',
          items: cluster.api.store.list(PODS, {}).items,
        }),
      );
      for (const extra of [[], ['--simulate']]) {
        const offline = await runCli(
          ['plan', '--sidecarsets', ssFile, '--pods', podsFile, '-o', 'json', ...extra],
          '',
          NOW,
        );
        const liveAgain = await cli(cluster, ['plan', 'agent', '-o', 'json', ...extra]);
        assert.equal(offline.code, 0, offline.stderr);
        assert.equal(liveAgain.stdout, offline.stdout);
      }

      const both = await cli(cluster, ['plan', 'agent', '--pods', podsFile]);
      assert.equal(both.code, 2);
      assert.equal(
        both.stderr,
        'error: plan NAME reads the cluster: leave out --sidecarsets and --pods\n',
      );
      const missing = await cli(cluster, ['plan', 'nope']);
      assert.equal(missing.stderr, 'error: sidecarset.apps.kruise.io "nope" not found\n');
    });
  });
});
