/**
 * The commands that need a cluster, run as a user runs them where no kubeconfig can be found: no
 * --kubeconfig, no KUBECONFIG, an empty home directory and not in a pod. Each must stop at once
 * with exit code 1 and say what it looked for, not try http://localhost:8080 (forever, for serve).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { runAsUser as runWithoutKubeconfig } from '../support/cli.js';

const IN_A_POD = existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token');

describe('no kubeconfig to be found', { skip: IN_A_POD && 'running in a pod' }, () => {
  const commands = [
    ['serve', '--port', '0', '--metrics-port', '0'],
    ['controller'],
    ['rollout', 'status', 'logtail'],
    ['check'],
    ['check-inject', 'web-0'],
    ['plan', 'logtail'],
  ];
  for (const args of commands) {
    it(`${args.slice(0, 2).join(' ')}: exit code 1, naming what was looked for`, async () => {
      const home = await mkdtemp(join(tmpdir(), 'no-kubeconfig-'));
      const run = await runWithoutKubeconfig(args, home);
      assert.equal(run.signal, null, `still running after 20 s: ${run.stderr}`);
      assert.equal(run.code, 1, run.stderr);
      assert.equal(
        run.stderr,
        `error: no kubeconfig found: no --kubeconfig, KUBECONFIG is not set, ` +
          `${join(home, '.kube', 'config')} does not exist, and not in a cluster ` +
          `(no /var/run/secrets/kubernetes.io/serviceaccount/token)\n`,
      );
    });
  }
});

describe('a --kubeconfig that cannot be read', () => {
  for (const command of ['serve', 'controller']) {
    it(`${command}: exit code 1, "cannot load the kubeconfig", not an internal error`, async () => {
      const home = await mkdtemp(join(tmpdir(), 'no-kubeconfig-'));
      const missing = join(home, 'missing.kubeconfig');
      const run = await runWithoutKubeconfig([command, '--kubeconfig', missing], home);
      assert.equal(run.code, 1, run.stderr);
      assert.match(
        run.stderr,
        new RegExp(
          `^error: cannot load the kubeconfig: ENOENT: no such file or directory, open '${missing}'\\n$`,
        ),
      );
    });
  }
});
