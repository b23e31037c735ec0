/**
 * The local walk-through of docs/local-cluster.md, as a user runs it: `npm run cluster -- --install` (a whole
 * cluster with a real node and a pod network, the image built and the chart installed in it), an
 * image of the user's loaded with `npm run cluster -- load-image`, examples/local-cluster/ applied,
 * the sidecar image changed, and `sidecarset rollout status -w` until the in-place rollout is
 * complete, `sidecarset check` passing with every check ok but the pod webhook's failurePolicy.
 * No process of ours runs on the host. Ctrl-C then leaves nothing behind.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import { eventually } from '../support/eventually.js';
import { diesWithParent } from '../kube-fixture/control-plane.js';
import { cgroupRootsNamed } from '../node-fixture/host.js';
import { runTool } from '../node-fixture/images.js';
import type { ProcessRun } from './processes.js';
import { runProcess } from './processes.js';

const root = new URL('../../', import.meta.url).pathname;

const clusterScript = ['--import', 'tsx', 'scripts/cluster.ts'];

/** The host's own network, which the cluster must not touch: its links, addresses and routes. */
async function hostNetwork(): Promise<string> {
  const parts = await Promise.all(
    [['-o', 'link'], ['-o', 'addr'], ['route'], ['-6', 'route']].map(async (args) =>
      // Counters and lifetimes change by themselves; names, addresses and routes do not.
      (await runTool('ip', args)).replace(/ (valid|preferred)_lft \S+/g, ''),
    ),
  );
  return parts.join('\n');
}

const hostNetworkBefore = await hostNetwork();

describe('npm run cluster: the docs/local-cluster.md walk-through on a real node', () => {
  const [command, argv] = diesWithParent(process.execPath, [...clusterScript, '--install']);
  const cluster = spawn(command, argv, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let printed = '';
  cluster.stdout.on('data', (c: Buffer) => (printed += c.toString()));
  cluster.stderr.on('data', (c: Buffer) => (printed += c.toString()));
  const exited = new Promise<number | null>((resolve) => cluster.on('exit', resolve));
  let kubectl = '';
  let adminKubeconfig = '';
  const k = (args: readonly string[]): Promise<ProcessRun> =>
    runProcess(kubectl, [`--kubeconfig=${adminKubeconfig}`, ...args]);

  after(() => {
    if (cluster.exitCode === null) cluster.kill('SIGKILL');
  });

  it('starts the cluster with a Ready node, sidecarset installed in it, and prints how to use it', async () => {
    await eventually(
      () => printed.includes('Ctrl-C stops the cluster'),
      `the cluster up (printed so far:\n${printed})`,
      600_000,
      200,
    );
    adminKubeconfig = /^admin kubeconfig: (\S+)$/m.exec(printed)?.[1] ?? '';
    kubectl = /^ {2}(\S+kubectl) get nodes$/m.exec(printed)?.[1] ?? '';
    assert.notEqual(adminKubeconfig, '', printed);
    assert.notEqual(kubectl, '', printed);
    const nodes = await k([
      'get',
      'nodes',
      '-o',
      'jsonpath={.items[*].status.conditions[?(@.type=="Ready")].status}',
    ]);
    assert.equal(nodes.out, 'True');
    const deployment = await k([
      '-n',
      'sidecarset-system',
      'get',
      'deployment',
      'sidecarset-webhook',
      '-o',
      'jsonpath={.status.readyReplicas}/{.spec.replicas}',
    ]);
    assert.equal(deployment.out, '2/2', printed);
    // Pods, Services and the node's address live in the cluster's own network namespace.
    assert.equal(await hostNetwork(), hostNetworkBefore, 'the host network changed');
  });

  it('loads an image archive onto the node, and runs a rollout to it in place', async () => {
    const nodeBin = process.env['NODE_FIXTURE_BIN'] ?? '';
    const archive = join(tmpdir(), `local-cluster-${process.pid}.tar`);
    await runTool(join(nodeBin, 'mkimage'), [
      '-bin',
      join(nodeBin, 'testd'),
      '-name',
      'example.test/logtail:v2',
      '-out',
      archive,
      '-env',
      'TESTD_VERSION=v2-mine',
    ]);
    const loaded = await runProcess(process.execPath, [...clusterScript, 'load-image', archive]);
    assert.equal(loaded.code, 0, loaded.out);

    const applied = await k(['apply', '-f', 'examples/local-cluster/sidecarset.yaml']);
    assert.equal(applied.code, 0, applied.out);
    // The pod webhook's scope names the new SidecarSet's label a moment after it is created.
    await eventually(
      async () =>
        (
          await k([
            'get',
            'mutatingwebhookconfiguration',
            'sidecarset-mutating-webhook',
            '-o',
            'jsonpath={.webhooks[*].matchConditions[*].expression}',
          ])
        ).out.includes('"local-nginx"'),
      'the pod webhook scope naming app=local-nginx',
    );
    const deployed = await k(['apply', '-f', 'examples/local-cluster/deployment.yaml']);
    assert.equal(deployed.code, 0, deployed.out);
    await eventually(
      async () => {
        const got = await k([
          'get',
          'sidecarset',
          'local-logtail',
          '-o',
          'jsonpath={.status.matchedPods}/{.status.updatedReadyPods}',
        ]);
        return got.out === '6/6';
      },
      'six pods injected and ready',
      180_000,
      500,
    );

    const patched = await k([
      'patch',
      'sidecarset',
      'local-logtail',
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/containers/0/image","value":"example.test/logtail:v2"}]',
    ]);
    assert.equal(patched.code, 0, patched.out);
    const status = await runProcess(
      process.execPath,
      ['bin/sidecarset.js', 'rollout', 'status', 'local-logtail', '-w', '--timeout', '180'],
      { KUBECONFIG: adminKubeconfig },
    );
    assert.equal(status.code, 0, status.out);
    const images = await k([
      'get',
      'pods',
      '-o',
      'jsonpath={range .items[*]}{.status.containerStatuses[?(@.name=="logtail")].image}/{.status.containerStatuses[?(@.name=="logtail")].restartCount} {end}',
    ]);
    assert.deepEqual(
      images.out.trim().split(' '),
      Array.from({ length: 6 }, () => 'example.test/logtail:v2/1'),
    );
  });

  it('sidecarset check passes: the webhooks through the Service, the Deployment ready', async () => {
    const run = await runProcess(process.execPath, ['bin/sidecarset.js', 'check', '-o', 'json'], {
      KUBECONFIG: adminKubeconfig,
    });
    const result = JSON.parse(run.out) as {
      passed: boolean;
      checks: { name: string; state: string; message: string }[];
    };
    assert.deepEqual(
      result.checks.filter((c) => c.state !== 'ok').map((c) => [c.name, c.state]),
      [['webhook mpod.sidecarset.kruise.io: failurePolicy', 'warning']],
      run.out,
    );
    assert.match(
      result.checks.find((c) => c.name === 'Deployment sidecarset-system/sidecarset-webhook')
        ?.message ?? '',
      /^2\/2 replicas ready/,
    );
    assert.equal(run.code, 0, run.out);
  });

  it('Ctrl-C stops everything and leaves nothing behind', async () => {
    cluster.kill('SIGINT');
    assert.equal(await exited, 0, printed);
    const state = await readFile(join(tmpdir(), 'sidecarset-cluster.json'), 'utf8').catch(() => '');
    assert.equal(state, '', 'the state file removed');
    const folders = (await readdir(tmpdir())).filter(
      (f) => f.startsWith('node-fixture-') || f.startsWith('kube-fixture-'),
    );
    const ours = [];
    for (const f of folders) {
      const owner = await readFile(join(tmpdir(), f, 'owner.pid'), 'utf8').catch(() => '');
      if (owner === String(cluster.pid)) ours.push(f);
    }
    assert.deepEqual(ours, [], 'scratch folders left');
    const cgroups = await cgroupRootsNamed(`sidecarset-node-${String(cluster.pid)}-`);
    assert.deepEqual(cgroups, [], 'cgroups left');
    assert.equal(await hostNetwork(), hostNetworkBefore, 'the host network changed');
  });
});
