/**
 * `npm run image`: the webhook and controller's image, built without Docker (docs/image.md).
 *
 *   npm run image                                  # build/sidecarset-<version>.image.tar
 *   npm run image -- --repository registry.example.com/sidecarset --tag 1.2.3 --out DIR
 *   npm run image -- node                          # the image's Node binary (installed once)
 *
 * Prints the archive, the SBOM beside it, the name the archive gives the image and its digest.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

import { buildImage, provenanceOf } from './image/build.js';
import { DEFAULT_REPOSITORY, NODE } from './image/definition.js';
import { nodeBinary } from './image/sources.js';

const ROOT = new URL('../', import.meta.url).pathname;

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      out: { type: 'string', default: 'build' },
      repository: { type: 'string', default: DEFAULT_REPOSITORY },
      tag: { type: 'string' },
    },
  });
  if (positionals[0] === 'node') {
    process.stdout.write(`${await nodeBinary(NODE.package, NODE.version)}\n`);
    return;
  }
  if (positionals.length > 0) throw new Error(`unknown command ${positionals.join(' ')}`);
  const provenance = await provenanceOf(ROOT, process.env);
  const tag = values.tag ?? provenance.version;
  if (tag === 'latest') throw new Error('--tag latest: name the image with its version instead');
  const image = await buildImage({
    root: ROOT,
    out: resolve(values.out),
    name: { repository: values.repository, tag },
    provenance,
  });
  process.stdout.write(
    [
      `image:   ${image.reference}`,
      `archive: ${image.archive}`,
      `sbom:    ${image.sbom}`,
      `digest:  ${image.digest}`,
      '',
    ].join('\n'),
  );
}

try {
  await main();
} catch (err) {
  process.stderr.write(`image: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
