import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

import { sizedByFlags, YOUNG_GENERATION_FLAG } from '../../src/cli/young-generation.js';

const MODULE = new URL('../../src/cli/young-generation.ts', import.meta.url).href;
const MiB = 1024 * 1024;
/** process.execve: Node 22.15 and later. */
const CAN_EXECVE = 'execve' in process;

interface Outcome {
  /** The young generation's size (both semi-spaces) after the load. */
  size: number;
  execArgv: string[];
}

/**
 * A node process started with `nodeFlags` calls keepYoungGenerationSmall with `args`, as
 * bin/sidecarset.js does, then keeps 1 object in 10 of 3 million, as a cache filling up does.
 */
async function afterLoad(args: string[] | undefined, nodeFlags: string[] = []): Promise<Outcome> {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8';
    import { keepYoungGenerationSmall } from ${JSON.stringify(MODULE)};
    const args = ${JSON.stringify(args)};
    if (args) keepYoungGenerationSmall(args);
    const kept = [];
    for (let i = 0; i < 3e6; i++) {
      const o = { i, s: 'x' + i };
      if (i % 10 === 0) kept.push(o);
      if (kept.length > 50000) kept.splice(0, 25000);
    }
    const space = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    process.stdout.write(JSON.stringify({ size: space.space_size, execArgv: process.execArgv }));
  `;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...nodeFlags, '--import', 'tsx', '--input-type=module', '-e', script],
    { env: { ...process.env, NODE_OPTIONS: '' } },
  );
  return JSON.parse(stdout) as Outcome;
}

describe('the young generation of serve and controller', () => {
  it('stays small under a load that grows it by default', async () => {
    const grown = await afterLoad(undefined);
    for (const command of ['serve', 'controller']) {
      const kept = await afterLoad([command, '--port', '0']);
      // With execve, the image's flag: two semi-spaces of 4 MiB. Without (Node 20), the size at the
      // call: 1 or 2 MiB a semi-space (loading the modules may have doubled it once).
      assert.ok(kept.size <= (CAN_EXECVE ? 8 : 4) * MiB, `${command}: ${kept.size / MiB} MiB`);
      assert.ok(grown.size >= 4 * kept.size, `by default V8 grew it to ${grown.size / MiB} MiB`);
      assert.equal(kept.execArgv.includes(YOUNG_GENERATION_FLAG), CAN_EXECVE);
    }
  });

  it("leaves V8's defaults to the other commands", async () => {
    const plan = await afterLoad(['plan', 'logtail']);
    assert.ok(plan.size > 8 * MiB, `plan: ${plan.size / MiB} MiB`);
    assert.deepEqual(plan.execArgv, [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      plan.execArgv[4],
    ]);
  });

  it("is left to the user's own young-generation flag", async () => {
    const outcome = await afterLoad(['serve'], ['--max-semi-space-size=8']);
    assert.equal(outcome.size, 16 * MiB, 'two semi-spaces of 8 MiB, grown to the flag');
    assert.equal(outcome.execArgv.includes(YOUNG_GENERATION_FLAG), false);
  });

  it('recognises the flags on the command line and in NODE_OPTIONS, in either spelling', () => {
    assert.equal(sizedByFlags([]), false);
    assert.equal(sizedByFlags(['--enable-source-maps'], '--max-old-space-size=512'), false);
    assert.equal(sizedByFlags(['--max-semi-space-size=4']), true);
    assert.equal(sizedByFlags(['--max_semi_space_size', '4']), true);
    assert.equal(sizedByFlags([], '--enable-source-maps --semi-space-growth-factor=3'), true);
    assert.equal(sizedByFlags([], ' --min-semi-space-size=2 '), true);
    assert.equal(sizedByFlags(['--max-semi-space-sizes=4']), false);
  });
});
