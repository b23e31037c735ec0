import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

import { hasNodeFlag, YOUNG_GENERATION_FLAG } from '../../src/cli/serving-heap.js';

const MODULE = new URL('../../src/cli/serving-heap.ts', import.meta.url).href;
const MiB = 1024 * 1024;
/** process.execve: Node 22.15 and later. */
const CAN_EXECVE = 'execve' in process;

/** What a load leaves: V8's spaces, sizes in bytes, and node's flags after sizeHeapForServing. */
interface Outcome {
  youngGeneration: number;
  heap: number;
  execArgv: string[];
}

/**
 * Loads that grow V8's heap by default:
 * - young: 3 million objects, 1 in 10 kept a while, as a cache filling up;
 * - old: a cache of 60,000 objects, then 300 lists of 500 objects parsed and dropped, as the
 *   paginated lists of a start-up leave them.
 */
const LOADS = {
  young: `
    const kept = [];
    for (let i = 0; i < 3e6; i++) {
      const o = { i, s: 'x' + i };
      if (i % 10 === 0) kept.push(o);
      if (kept.length > 50000) kept.splice(0, 25000);
    }`,
  old: `
    const item = (i) => ({
      metadata: { name: 'pod-' + i, annotations: { a: 'x'.repeat(300) + i } },
      spec: { containers: [{ name: 'c', image: 'nginx:' + i }] },
    });
    const cache = Array.from({ length: 60000 }, (_, i) => item(i));
    gc();
    for (let page = 0; page < 300; page++) {
      const items = Array.from({ length: 500 }, (_, k) => item(page * 500 + k));
      cache[page] = JSON.parse(JSON.stringify({ items })).items[0];
    }
    await new Promise((resolve) => setTimeout(resolve, 100));`,
};

/**
 * A node process started with `nodeFlags` calls sizeHeapForServing with `args` (unless undefined),
 * as bin/sidecarset.js does, then runs the load.
 */
async function afterLoad(
  load: keyof typeof LOADS,
  args: string[] | undefined,
  nodeFlags: string[] = [],
): Promise<Outcome> {
  const script = `
    import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
    import { sizeHeapForServing } from ${JSON.stringify(MODULE)};
    const args = ${JSON.stringify(args)};
    if (args) sizeHeapForServing(args);
    ${LOADS[load]}
    const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    process.stdout.write(JSON.stringify({
      youngGeneration: young.space_size,
      heap: getHeapStatistics().total_heap_size,
      execArgv: process.execArgv,
    }));
  `;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--expose-gc', ...nodeFlags, '--import', 'tsx', '--input-type=module', '-e', script],
    { env: { ...process.env, NODE_OPTIONS: '' } },
  );
  return JSON.parse(stdout) as Outcome;
}

/**
 * The largest heap of three runs of the `old` load. By default V8 now and then collects early (a
 * loaded machine, c8's coverage, its memory reducer), so the default's growth shows in its
 * largest run; sized, every run must stay small, so its largest too.
 */
async function largestHeap(args: string[] | undefined, nodeFlags: string[]): Promise<number> {
  const runs: number[] = [];
  for (let i = 0; i < 3; i++) runs.push((await afterLoad('old', args, nodeFlags)).heap);
  return Math.max(...runs);
}

describe('the heap of serve and controller', () => {
  it('keeps the young generation small under a load that grows it by default', async () => {
    const grown = await afterLoad('young', undefined);
    for (const command of ['serve', 'controller']) {
      const kept = await afterLoad('young', [command, '--port', '0']);
      // With execve, the image's flag: two semi-spaces of 4 MiB. Without (Node 20), the size at the
      // call: 1 or 2 MiB a semi-space (loading the modules may have doubled it once).
      const bound = (CAN_EXECVE ? 8 : 4) * MiB;
      assert.ok(kept.youngGeneration <= bound, `${command}: ${kept.youngGeneration / MiB} MiB`);
      assert.ok(
        grown.youngGeneration >= 4 * kept.youngGeneration,
        `default: ${grown.youngGeneration / MiB} MiB`,
      );
      assert.equal(kept.execArgv.includes(YOUNG_GENERATION_FLAG), CAN_EXECVE);
    }
  });

  it('collects the garbage of start-up lists instead of growing the old generation', async () => {
    const grown = await largestHeap(undefined, [YOUNG_GENERATION_FLAG]);
    const sized = await largestHeap(['serve'], [YOUNG_GENERATION_FLAG]);
    assert.ok(sized < 0.8 * grown, `heap ${sized / MiB} MiB sized, ${grown / MiB} MiB by default`);
  });

  it("leaves V8's defaults to the other commands", async () => {
    const plan = await afterLoad('young', ['plan', 'logtail']);
    assert.ok(plan.youngGeneration > 8 * MiB, `plan: ${plan.youngGeneration / MiB} MiB`);
    assert.equal(plan.execArgv.includes(YOUNG_GENERATION_FLAG), false);
  });

  it("leaves a setting to the user's own flag for it", async () => {
    const outcome = await afterLoad('young', ['serve'], ['--max-semi-space-size=8']);
    assert.equal(outcome.youngGeneration, 16 * MiB, 'two semi-spaces of 8 MiB, grown to the flag');
    assert.equal(outcome.execArgv.includes(YOUNG_GENERATION_FLAG), false);
    const old = ['--heap-growing-percent=400', YOUNG_GENERATION_FLAG];
    const grown = await largestHeap(['serve'], old);
    const sized = await largestHeap(['serve'], [YOUNG_GENERATION_FLAG]);
    assert.ok(sized < 0.8 * grown, `${sized / MiB} against ${grown / MiB} MiB`);
  });

  it('recognises flags on the command line and in NODE_OPTIONS, in either spelling', () => {
    const young = ['--max-semi-space-size', '--semi-space-growth-factor'];
    assert.equal(hasNodeFlag(young, []), false);
    assert.equal(hasNodeFlag(young, ['--enable-source-maps'], '--max-old-space-size=512'), false);
    assert.equal(hasNodeFlag(young, ['--max-semi-space-size=4']), true);
    assert.equal(hasNodeFlag(young, ['--max_semi_space_size', '4']), true);
    assert.equal(hasNodeFlag(young, [], '--enable-source-maps --semi-space-growth-factor=3'), true);
    assert.equal(hasNodeFlag(young, [], ' --max-semi-space-size=2 '), true);
    assert.equal(hasNodeFlag(young, ['--max-semi-space-sizes=4']), false);
  });
});
