/**
 * Where the node's binaries come from: `build.sh` in this folder builds containerd, its runc shim,
 * ctr, the CNI plugins of the pod network and the test images' programs (cached per inputs), or `NODE_FIXTURE_BIN` names a folder that
 * already holds them; the kubelet comes with the control plane (test/kube-fixture/binaries.ts);
 * runc is Debian's (`apt-get install runc`, which .ci/run does).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { executable, goInstalled, runBuildScript } from '../kube-fixture/binaries.js';

export interface NodeBinaries {
  readonly dir: string;
  readonly containerd: string;
  readonly ctr: string;
  /** containerd finds `containerd-shim-runc-v2` on its PATH: `dir` goes first there. */
  readonly shim: string;
  readonly runc: string;
  /** The CNI plugins: bridge, host-local, loopback. */
  readonly cniDir: string;
  readonly testd: string;
  readonly pause: string;
  readonly mkimage: string;
}

export type NodeBinariesOrSkip = { binaries: NodeBinaries } | { skip: string };

const BUILD_SCRIPT = new URL('./build.sh', import.meta.url).pathname;

export function nodeBinariesIn(dir: string, runc: string): NodeBinaries {
  return {
    dir,
    containerd: join(dir, 'containerd'),
    ctr: join(dir, 'ctr'),
    shim: join(dir, 'containerd-shim-runc-v2'),
    runc,
    cniDir: join(dir, 'cni'),
    testd: join(dir, 'testd'),
    pause: join(dir, 'pause'),
    mkimage: join(dir, 'mkimage'),
  };
}

/** Debian's runc, wherever PATH finds it (root's PATH has /usr/sbin). */
export function findRunc(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v runc || ls /usr/sbin/runc'], {
    encoding: 'utf8',
  });
  const path = found.stdout.trim().split('\n')[0] ?? '';
  return found.status === 0 && path !== '' ? path : undefined;
}

/**
 * The node's binaries. With `CI=true` anything missing is an error; elsewhere a machine without Go,
 * runc or root gets a reason to skip.
 */
export async function nodeBinaries(
  env: NodeJS.ProcessEnv = process.env,
): Promise<NodeBinariesOrSkip> {
  const skipOrThrow = (reason: string): NodeBinariesOrSkip => {
    if (env['CI'] === 'true') throw new Error(`${reason}; CI=true requires it`);
    return { skip: reason };
  };
  if (process.getuid?.() !== 0) {
    return skipOrThrow('not root: a node (kubelet, containerd) needs mounts and cgroups');
  }
  const runc = findRunc();
  if (runc === undefined) return skipOrThrow('runc is not installed (apt-get install runc)');
  const given = env['NODE_FIXTURE_BIN'];
  if (given !== undefined && given !== '') {
    const binaries = nodeBinariesIn(given, runc);
    const { containerd, ctr, shim, testd, pause, mkimage, cniDir } = binaries;
    const cni = ['bridge', 'host-local', 'loopback'].map((p) => join(cniDir, p));
    for (const path of [containerd, ctr, shim, testd, pause, mkimage, ...cni]) {
      if (!(await executable(path))) throw new Error(`NODE_FIXTURE_BIN: ${path} is not executable`);
    }
    return { binaries };
  }
  if (!goInstalled()) {
    return skipOrThrow('Go is not installed: the node fixture builds containerd with it');
  }
  return { binaries: nodeBinariesIn(await runBuildScript(BUILD_SCRIPT), runc) };
}
