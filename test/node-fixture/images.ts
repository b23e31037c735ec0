/**
 * The test images, built at test time as OCI archives from the programs in images/ (by their own
 * mkimage; nothing comes from a registry) and loaded onto a node with `ctr images import`, as
 * `kind load image-archive` does. The sidecar and app images all run testd; their config's
 * environment tells them apart, so each has its own image ID.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

import type { NodeBinaries } from './binaries.js';

export const REGISTRY = 'sidecarset.test';

/** The pod sandbox's image, pinned in containerd's configuration. */
export const PAUSE_IMAGE = `${REGISTRY}/pause:1`;

export const TEST_IMAGES = {
  pause: PAUSE_IMAGE,
  app: `${REGISTRY}/app:v1`,
  sidecarV1: `${REGISTRY}/sidecar:v1`,
  sidecarV2: `${REGISTRY}/sidecar:v2`,
  sidecarV3: `${REGISTRY}/sidecar:v3`,
  /** Starts, then exits 1 half a second later, every time. */
  sidecarCrash: `${REGISTRY}/sidecar:crash`,
  /** The hot upgrade's empty image (OpenKruise's hotUpgradeEmptyImage): testd doing nothing. */
  empty: `${REGISTRY}/empty:1`,
  /** Never built: pulling it fails at once (the node's registries all point at 127.0.0.1:1). */
  missing: `${REGISTRY}/sidecar:missing`,
} as const;

interface ImageRecipe {
  readonly name: string;
  readonly program: 'testd' | 'pause';
  readonly env: readonly string[];
}

function testd(name: string, version: string, ...env: string[]): ImageRecipe {
  return { name, program: 'testd', env: [`TESTD_VERSION=${version}`, ...env] };
}

const RECIPES: readonly ImageRecipe[] = [
  { name: TEST_IMAGES.pause, program: 'pause', env: [] },
  testd(TEST_IMAGES.app, 'v1', 'NAME=app'),
  testd(TEST_IMAGES.sidecarV1, 'v1', 'NAME=sidecar'),
  testd(TEST_IMAGES.sidecarV2, 'v2', 'NAME=sidecar'),
  testd(TEST_IMAGES.sidecarV3, 'v3', 'NAME=sidecar'),
  testd(TEST_IMAGES.sidecarCrash, 'crash', 'NAME=sidecar', 'TESTD_CRASH=1'),
  testd(TEST_IMAGES.empty, 'empty', 'NAME=empty'),
];

/** Writes one archive per test image into `dir`; returns their paths. */
export async function buildTestImages(binaries: NodeBinaries, dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const recipe of RECIPES) {
    const file = join(dir, `${recipe.name.replace(/[/:]/g, '_')}.tar`);
    const args = [
      '-bin',
      binaries[recipe.program],
      '-name',
      recipe.name,
      '-out',
      file,
      ...recipe.env.flatMap((kv) => ['-env', kv]),
    ];
    await runTool(binaries.mkimage, args);
    files.push(file);
  }
  return files;
}

/** Runs a tool to completion; rejects with its output when it fails. */
export function runTool(command: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(output);
      else reject(new Error(`${command} ${args.join(' ')} failed (${String(code)}): ${output}`));
    });
  });
}
