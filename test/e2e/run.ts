/**
 * `npm run test:e2e`: builds the real control plane's binaries (or finds them cached), then runs
 * every test/e2e/*.e2e.ts against them, one file at a time (each starts its own control plane).
 * helm too (test/helm-fixture). Without Go it skips with one line, except under CI=true, where that
 * is a failure.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { helmBinary } from '../helm-fixture/binary.js';
import { controlPlaneBinaries } from '../kube-fixture/binaries.js';

const here = new URL('./', import.meta.url).pathname;

/** node --test on `files`, one file at a time (each starts its own control plane). */
function runTests(files: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--test', '--test-concurrency=1', ...files],
    { stdio: 'inherit', env },
  );
  return new Promise((resolve) => {
    child.on('exit', (code) => {
      resolve(code ?? 1);
    });
  });
}

async function run(): Promise<number> {
  let found;
  let helm;
  try {
    found = await controlPlaneBinaries();
    helm = await helmBinary();
  } catch (err) {
    process.stderr.write(`test:e2e: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  const skip = 'skip' in found ? found.skip : 'skip' in helm ? helm.skip : undefined;
  if (skip !== undefined || 'skip' in found || 'skip' in helm) {
    process.stdout.write(`test:e2e: skipped: ${skip ?? ''}\n`);
    return 0;
  }
  // `npm run test:e2e -- leader` runs only the files whose names contain "leader".
  const only = process.argv.slice(2);
  const files = (await readdir(here))
    .filter((f) => f.endsWith('.e2e.ts'))
    .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
    .sort()
    .map((f) => `${here}${f}`);
  const auditDir = await mkdtemp(join(tmpdir(), 'e2e-audit-'));
  const env = {
    ...process.env,
    KUBE_FIXTURE_BIN: found.binaries.dir,
    HELM_FIXTURE_BIN: dirname(helm.helm),
    E2E_AUDIT_DIR: auditDir,
  };
  let code = await runTests(files, env);
  // The least-privilege check needs every file's requests: only after a complete, green run.
  if (code === 0 && only.length === 0) {
    code = await runTests([`${here}least-privilege.last.ts`], env);
  }
  await rm(auditDir, { recursive: true, force: true });
  return code;
}

process.exitCode = await run();
