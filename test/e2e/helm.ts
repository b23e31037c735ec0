/**
 * helm (test/helm-fixture) as the cluster's admin, its cache and configuration inside the control
 * plane's folder.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

import type { ControlPlane } from '../kube-fixture/control-plane.js';

export const CHART = new URL('../../charts/sidecarset', import.meta.url).pathname;

export interface HelmResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The helm the e2e run built: HELM_FIXTURE_BIN/helm. */
export function helmPath(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env['HELM_FIXTURE_BIN'];
  if (dir === undefined) throw new Error('HELM_FIXTURE_BIN is not set: run npm run test:e2e');
  return join(dir, 'helm');
}

export function helm(
  plane: ControlPlane,
  args: readonly string[],
  helmBinary = helmPath(),
): Promise<HelmResult> {
  const home = join(plane.dir, 'helm');
  const child = spawn(helmBinary, [...args, '--kubeconfig', plane.adminKubeconfig], {
    env: {
      ...process.env,
      HELM_CACHE_HOME: join(home, 'cache'),
      HELM_CONFIG_HOME: join(home, 'config'),
      HELM_DATA_HOME: join(home, 'data'),
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The chart installed as users install it, with `image` (already on the node) and its defaults
 * otherwise; resolves once helm's --wait saw the Deployment ready.
 */
export async function installChart(plane: ControlPlane, image: string): Promise<void> {
  const at = image.lastIndexOf(':');
  const installed = await helm(plane, [
    'install',
    'sidecarset',
    CHART,
    '--set',
    `image.repository=${image.slice(0, at)},image.tag=${image.slice(at + 1)}`,
    '--wait',
    '--timeout',
    '5m',
  ]);
  if (installed.code !== 0) throw new Error(`helm install: ${installed.stderr}`);
}
