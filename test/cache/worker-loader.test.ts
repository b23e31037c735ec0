/**
 * The reload worker (src/cache/worker-loader.ts) is stopped once idle: a load right after that
 * gets a new worker, and the old one's exit fails none of its loads.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { createWorkerLoader } from '../../src/cache/worker-loader.js';
import { sidecarSetsYaml } from '../support/sidecarset-files.js';

let root = '';
let file = '';
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'worker-loader-'));
  file = join(root, 'sidecarsets.yaml');
  await writeFile(file, sidecarSetsYaml(3, 'agent:1'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('worker loader', () => {
  it('loads again, in a new worker, right after the first one is released', async () => {
    const loader = createWorkerLoader({ sidecarSets: file }, 0);
    try {
      const first = await loader.load();
      await new Promise((resolve) => setTimeout(resolve, 0)); // the idle timer fires
      // The first worker is being terminated now; its exit must not fail this load.
      const second = await loader.load();
      assert.equal(first.sidecarSets.length, 3);
      assert.equal(second.sidecarSets.length, 3);
    } finally {
      await loader.close();
    }
  });

  it('fails a load under way when closed', async () => {
    const loader = createWorkerLoader({ sidecarSets: file });
    const loading = loader.load();
    await loader.close();
    await assert.rejects(loading, /exited/);
  });
});
