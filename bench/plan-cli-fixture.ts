/**
 * Writes the pod file bench/plan-cli.bench.ts plans: `<count> <json|yaml> <file>`. Run in a child
 * process so that the measuring process stays small: a parent holding a 380 MB string and the
 * garbage of 100,000 pods collects it on the same CPUs while the measured command runs.
 */
import { writeFile } from 'node:fs/promises';

import { stringify } from 'yaml';

import { withHashes } from '../src/core/api/hash.js';
import type { SidecarSet } from '../src/core/api/sidecarset-types.js';
import { readManifests } from '../src/io/documents.js';
import { grayReleasePods } from '../test/fixtures/plan/gray-release-pods.js';
import { realisticPod } from '../test/fixtures/plan/realistic-pods.js';

export const SIDECARSET_FILE = new URL(
  '../test/fixtures/plan/gray-release-sidecarset.yaml',
  import.meta.url,
).pathname;

async function writePods(count: number, format: string, file: string): Promise<void> {
  const doc = (await readManifests(SIDECARSET_FILE))[0];
  if (doc === undefined) throw new Error(`${SIDECARSET_FILE}: no SidecarSet`);
  const sidecarSet = withHashes(doc.object as unknown as SidecarSet);
  const list = {
    apiVersion: 'v1',
    kind: 'List',
    items: grayReleasePods(sidecarSet, count, 'busybox:1.35').map(realisticPod),
  };
  const text =
    format === 'json'
      ? // Compact: kubectl indents by 4, but at a given file size compact JSON holds more
        // objects, the harder case (~3.8 KB a pod, as in issue 22).
        JSON.stringify(list)
      : // No anchors for the objects the pods share: kubectl writes none.
        stringify(list, { aliasDuplicateObjects: false });
  await writeFile(file, text);
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const [count, format, file] = process.argv.slice(2);
  if (count === undefined || (format !== 'json' && format !== 'yaml') || file === undefined) {
    throw new Error('usage: plan-cli-fixture.ts <count> <json|yaml> <file>');
  }
  await writePods(Number(count), format, file);
}
