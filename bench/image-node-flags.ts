/**
 * The node flags the image starts `sidecarset serve` with: the words of the Dockerfile's ENTRYPOINT
 * between `node` and the script (docs/adr/0027-young-generation-cap.md). The benchmarks run the
 * webhook with them, so that they measure what ships.
 */
import { readFileSync } from 'node:fs';

const dockerfile = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8');
const entrypoint = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(dockerfile)?.[1];
const words = JSON.parse(entrypoint ?? '[]') as string[];
const script = words.findIndex((word) => word.endsWith('/bin/sidecarset.js'));
if (words[0] !== 'node' || script < 1) {
  throw new Error(
    `the Dockerfile's ENTRYPOINT is not node [flags] …/bin/sidecarset.js: ${entrypoint}`,
  );
}

export const IMAGE_NODE_FLAGS: readonly string[] = words.slice(1, script);
