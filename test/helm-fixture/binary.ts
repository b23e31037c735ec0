/**
 * Where helm comes from: `build.sh` in this folder builds it from the Go module beside it (cached
 * per go.mod + go.sum + Go version), or `HELM_FIXTURE_BIN` names a folder that already holds it.
 * Like the control plane's binaries (test/kube-fixture/binaries.ts): without Go, a reason to skip,
 * except under CI=true.
 */
import { access, constants } from 'node:fs/promises';
import { join } from 'node:path';

import { goInstalled, runBuildScript } from '../kube-fixture/binaries.js';

export type HelmOrSkip = { helm: string } | { skip: string };

const BUILD_SCRIPT = new URL('./build.sh', import.meta.url).pathname;

export async function helmBinary(env: NodeJS.ProcessEnv = process.env): Promise<HelmOrSkip> {
  const given = env['HELM_FIXTURE_BIN'];
  if (given !== undefined && given !== '') {
    const helm = join(given, 'helm');
    try {
      await access(helm, constants.X_OK);
    } catch {
      throw new Error(`HELM_FIXTURE_BIN: ${helm} is not executable`);
    }
    return { helm };
  }
  if (!goInstalled()) {
    const reason = 'Go is not installed: the chart tests build helm with it (test/helm-fixture)';
    if (env['CI'] === 'true') throw new Error(`${reason}; CI=true requires it`);
    return { skip: reason };
  }
  return { helm: join(await runBuildScript(BUILD_SCRIPT), 'helm') };
}
