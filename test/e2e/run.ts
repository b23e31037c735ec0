/**
 * `npm run test:e2e`: everything that needs built binaries. Builds the cluster's binaries
 * (test/kube-fixture), the node's (test/node-fixture) and helm (test/helm-fixture), or finds them
 * cached, and this project's image (`npm run image`, which the chart tests install), then runs every test/e2e/*.e2e.ts and test/chart/*.e2e.ts, one file at a time (each
 * starts its own control plane). Without Go (or, for the node, without runc or root) it skips with
 * one line, except under CI=true, where that is a failure.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { helmBinary } from '../helm-fixture/binary.js';
import {
  KUBERNETES_VERSIONS,
  NEWEST_KUBERNETES,
  controlPlaneBinaries,
} from '../kube-fixture/binaries.js';
import { nodeBinaries } from '../node-fixture/binaries.js';
import { buildImage } from './image.js';

const here = new URL('./', import.meta.url).pathname;
const chartTests = new URL('../chart/', import.meta.url).pathname;

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
  const builds: Record<string, string> = {};
  let node;
  let helm;
  try {
    // One build at a time: they share two cores and the Go build cache.
    found = await controlPlaneBinaries();
    // The older versions too (test/e2e/kubernetes-versions.e2e.ts runs on them).
    for (const minor of KUBERNETES_VERSIONS.filter((v) => v !== NEWEST_KUBERNETES)) {
      const older = await controlPlaneBinaries(process.env, minor);
      if ('binaries' in older) builds[minor] = older.binaries.dir;
    }
    node = await nodeBinaries();
    helm = await helmBinary();
  } catch (err) {
    process.stderr.write(`test:e2e: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  if ('skip' in found || 'skip' in node || 'skip' in helm) {
    const skip = [found, node, helm].map((f) => ('skip' in f ? f.skip : '')).find((s) => s !== '');
    process.stdout.write(`test:e2e: skipped: ${skip ?? ''}\n`);
    return 0;
  }
  // `npm run test:e2e -- leader` runs only the files whose names contain "leader".
  const only = process.argv.slice(2);
  const files: string[] = [];
  for (const dir of [here, chartTests]) {
    for (const f of (await readdir(dir)).sort()) {
      if (f.endsWith('.e2e.ts') && (only.length === 0 || only.some((o) => f.includes(o)))) {
        files.push(`${dir}${f}`);
      }
    }
  }
  const started = Date.now();
  const imageDir = await mkdtemp(join(tmpdir(), 'e2e-image-'));
  let image;
  try {
    image = await buildImage(imageDir);
  } catch (err) {
    process.stderr.write(`test:e2e: ${err instanceof Error ? err.message : String(err)}\n`);
    await rm(imageDir, { recursive: true, force: true });
    return 1;
  }
  process.stderr.write(
    `test:e2e: image ${image.reference} built in ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
  const auditDir = await mkdtemp(join(tmpdir(), 'e2e-audit-'));
  const env = {
    ...process.env,
    KUBE_FIXTURE_BIN: found.binaries.dir,
    NODE_FIXTURE_BIN: node.binaries.dir,
    HELM_FIXTURE_BIN: dirname(helm.helm),
    E2E_AUDIT_DIR: auditDir,
    E2E_IMAGE: JSON.stringify(image),
    KUBE_FIXTURE_VERSIONS: JSON.stringify({ ...builds, [NEWEST_KUBERNETES]: found.binaries.dir }),
  };
  let code = await runTests(files, env);
  // The least-privilege check needs every file's requests: only after a complete, green run.
  if (code === 0 && only.length === 0) {
    code = await runTests([`${here}least-privilege.last.ts`], env);
  }
  await rm(auditDir, { recursive: true, force: true });
  await rm(imageDir, { recursive: true, force: true });
  return code;
}

process.exitCode = await run();
