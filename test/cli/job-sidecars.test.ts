/** --job-sidecars on `inject` and `serve` (docs/adr/0021-job-sidecars.md). */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { parse } from 'yaml';

import type { Container, Pod } from '../../src/core/api/k8s-types.js';
import { runCli } from '../support/cli.js';

const examples = new URL('../../examples/', import.meta.url).pathname;
const inject = (...flags: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
  runCli([
    'inject',
    '--sidecarsets',
    join(examples, 'job-sidecarset.yaml'),
    '-f',
    join(examples, 'job.yaml'),
    ...flags,
  ]);

/** The names of the Job's pod template containers and init containers, restartPolicy shown. */
function lists(stdout: string): { init: string[]; main: string[] } {
  const job = parse(stdout) as { spec: { template: { spec: Pod['spec'] } } };
  const show = (cs: Container[] | undefined): string[] =>
    (cs ?? []).map((c) => (c.restartPolicy ? `${c.name}(${c.restartPolicy})` : c.name));
  const { spec } = job.spec.template;
  return { init: show(spec.initContainers), main: show(spec.containers) };
}

describe('--job-sidecars', () => {
  it('inject makes a Job’s sidecar a native sidecar by default', async () => {
    const result = await inject();
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(lists(result.stdout), { init: ['log-shipper(Always)'], main: ['work'] });
  });

  it('inject --job-sidecars container keeps it in spec.containers', async () => {
    const result = await inject('--job-sidecars', 'container');
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(lists(result.stdout), { init: [], main: ['log-shipper', 'work'] });
  });

  it('serve offers it with SIDECARSET_JOB_SIDECARS; both refuse other modes', async () => {
    const help = await runCli(['serve', '--help']);
    assert.match(help.stdout, /--job-sidecars <mode>/);
    assert.match(help.stdout, /SIDECARSET_JOB_SIDECARS/);
    for (const command of ['serve', 'inject']) {
      const bad = await runCli([command, '--job-sidecars', 'sometimes']);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /Allowed choices are native, container/);
    }
  });
});
