/**
 * The node flags the image starts `sidecarset serve` with: the words of its entrypoint between
 * `node` and the script (scripts/image/definition.ts, docs/adr/0027-young-generation-cap.md). The
 * benchmarks run the webhook with them, so that they measure what ships.
 */
import { ENTRYPOINT } from '../scripts/image/definition.js';

const script = ENTRYPOINT.findIndex((word) => word.endsWith('/bin/sidecarset.js'));
if (ENTRYPOINT[0] !== 'node' || script < 1) {
  throw new Error(`the image's entrypoint is not node [flags] …/bin/sidecarset.js`);
}

export const IMAGE_NODE_FLAGS: readonly string[] = ENTRYPOINT.slice(1, script);
