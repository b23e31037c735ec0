/**
 * A node whose owner is killed half-way leaves containers, shims, cgroups and its scratch folder
 * behind (its kubelet and containerd die with the owner); the next node started on the machine
 * removes all of it (test/node-fixture/node.ts, removeAbandoned).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { eventually } from '../support/eventually.js';
import { binariesIn } from '../kube-fixture/binaries.js';
import { diesWithParent, startControlPlane } from '../kube-fixture/control-plane.js';
import { findRunc, nodeBinariesIn } from '../node-fixture/binaries.js';
import { cgroupRootsNamed } from '../node-fixture/host.js';
import { TEST_IMAGES } from '../node-fixture/images.js';
import { startNode } from '../node-fixture/node.js';
import { runProcess } from './processes.js';

const root = new URL('../../', import.meta.url).pathname;

/** What a node owned by `pid` left on the host: its folders, cgroup roots and processes. */
async function leftovers(
  pid: number,
): Promise<{ folders: string[]; cgroups: string[]; processes: number }> {
  const folders: string[] = [];
  for (const name of await readdir(tmpdir())) {
    if (!name.startsWith('node-fixture-')) continue;
    const owner = await readFile(join(tmpdir(), name, 'owner.pid'), 'utf8').catch(() => '');
    if (owner === String(pid)) folders.push(join(tmpdir(), name));
  }
  let processes = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (folders.some((f) => cmdline.includes(`${f}/`))) processes++;
  }
  return { folders, cgroups: await cgroupRootsNamed(`sidecarset-node-${pid}-`), processes };
}

describe('a node killed half-way is cleaned up by the next one', () => {
  it('leaves shims, containers, cgroups and its folder, which the next startNode removes', async () => {
    const [command, argv] = diesWithParent(process.execPath, [
      '--import',
      'tsx',
      'scripts/cluster.ts',
    ]);
    const cluster = spawn(command, argv, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let printed = '';
    cluster.stdout.on('data', (c: Buffer) => (printed += c.toString()));
    cluster.stderr.on('data', (c: Buffer) => (printed += c.toString()));
    const pid = cluster.pid ?? 0;
    try {
      await eventually(() => printed.includes('Ctrl-C stops'), 'the cluster up', 300_000, 200);
      const kubeconfig = /^admin kubeconfig: (\S+)$/m.exec(printed)?.[1] ?? '';
      const kubectl = /^ {2}(\S+kubectl) get nodes$/m.exec(printed)?.[1] ?? '';
      const pod = JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'left-behind', namespace: 'default' },
        spec: {
          hostNetwork: true,
          containers: [{ name: 'app', image: TEST_IMAGES.app }],
        },
      });
      const podFile = join(tmpdir(), `left-behind-${process.pid}.json`);
      await writeFile(podFile, pod);
      const created = await runProcess(kubectl, [
        `--kubeconfig=${kubeconfig}`,
        'apply',
        '-f',
        podFile,
      ]);
      await rm(podFile);
      assert.equal(created.code, 0, created.out);
      const ready = await runProcess(kubectl, [
        `--kubeconfig=${kubeconfig}`,
        'wait',
        '--for=condition=Ready',
        'pod/left-behind',
        '--timeout=120s',
      ]);
      assert.equal(ready.code, 0, ready.out);
    } finally {
      cluster.kill('SIGKILL');
    }
    await new Promise((resolve) => cluster.on('exit', resolve));
    // The kubelet and containerd die with their parent; the shim and the containers do not.
    await eventually(async () => (await leftovers(pid)).processes > 0, 'the shim left running');
    const left = await leftovers(pid);
    assert.equal(left.folders.length, 1, 'its scratch folder left');
    assert.equal(left.cgroups.length, 1, 'its cgroup root left');

    const dir = process.env['KUBE_FIXTURE_BIN'];
    const nodeDir = process.env['NODE_FIXTURE_BIN'];
    const runc = findRunc();
    assert.ok(dir !== undefined && nodeDir !== undefined && runc !== undefined);
    const binaries = binariesIn(dir);
    const plane = await startControlPlane({ binaries, controllers: true, network: true });
    try {
      const node = await startNode({
        plane,
        binaries: nodeBinariesIn(nodeDir, runc),
        kubelet: binaries.kubelet,
        kubeProxy: binaries.kubeProxy,
      });
      await node.stop();
    } finally {
      await plane.stop();
    }
    assert.deepEqual(await leftovers(pid), { folders: [], cgroups: [], processes: 0 });
  });
});
