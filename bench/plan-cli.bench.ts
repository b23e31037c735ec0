/**
 * `sidecarset plan` as a user runs it, on a fleet file (issue 13, point 3): 100,000 pods as JSON
 * (target: under 3 s wall and 1 GB peak RSS), and 10,000 as YAML. Each is run by the built binary
 * (run `npm run build` first) in a fresh process, next to a baseline run the same way in the same
 * run: a process that only reads and parses the same file (`JSON.parse`, or the yaml library's
 * `parse`), which is the least any reader of that file can cost. Not a test: it only prints.
 * `node --import tsx bench/plan-cli.bench.ts json` (or `yaml`) runs one case.
 *
 * Pods: kubectl-style, ~3.8 KB of compact JSON each (test/fixtures/plan/realistic-pods.ts), 386 MB
 * for 100,000. Results, Node 20, 2 CPUs under a load of 6 to 25 (walls are noisy, RSS is not):
 * - before (pods parsed whole, then planned; one run each): 1.40 GB peak RSS, 13 s; JSON.parse
 *   alone 998 MB, 19 s.
 * - pods slimmed as each List item is parsed (slimPod): 687 MB, 31.8 s vs 991 MB, 20.3 s.
 * - and the file read 4 MB at a time (src/io/json-list.ts): 362 MB, 35.0 s vs 993 MB, 34.8 s
 *   (wall ratio 1.01x). `-o json` 376 MB; `--simulate` 1.09 GB (was 2.46 GB), held by the
 *   simulation's upgraded pods, not by reading.
 * - 10,000 pods as YAML (51 MB, not slimmed: read whole by the yaml library): 2.34 GB, 67.6 s vs
 *   the yaml library's parse alone 2.27 GB, 71.4 s.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { SIDECARSET_FILE as sidecarSetFile } from './plan-cli-fixture.js';

const root = new URL('../', import.meta.url).pathname;
const FIXTURE_WRITER = join(root, 'bench/plan-cli-fixture.ts');
const TARGET_MS = 3_000;
const TARGET_RSS_MB = 1_024;
const RUNS = 5;

interface Sample {
  ms: number;
  rssMb: number;
}

/** Wall time of `node ARGS` and its peak RSS, which the preloaded module reports on fd 3. */
function run(args: readonly string[], report: string): Promise<Sample> {
  const start = performance.now();
  const child = spawn(process.execPath, ['--import', report, ...args], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let rss = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdio[3]?.on('data', (c: Buffer) => (rss += c.toString()));
  return new Promise((resolve, reject) => {
    child.on('close', (code) => {
      const ms = performance.now() - start;
      if (code !== 0) reject(new Error(`node ${args.join(' ')}: exit ${String(code)}: ${stderr}`));
      else resolve({ ms, rssMb: Number(rss) / 1024 });
    });
  });
}

/**
 * Median wall time and largest peak RSS of `RUNS` runs of each command, run in turns so that a
 * change in the machine's load falls on both alike.
 */
async function measurePair(
  first: readonly string[],
  second: readonly string[],
  report: string,
): Promise<[Sample, Sample]> {
  const samples: [Sample[], Sample[]] = [[], []];
  for (let i = 0; i < RUNS; i++) {
    samples[0].push(await run(first, report));
    samples[1].push(await run(second, report));
  }
  const summary = (of: Sample[]): Sample => ({
    ms: of.map((x) => x.ms).sort((x, y) => x - y)[Math.floor(RUNS / 2)] ?? NaN,
    rssMb: of.reduce((max, x) => Math.max(max, x.rssMb), 0),
  });
  return [summary(samples[0]), summary(samples[1])];
}

if (!existsSync(join(root, 'dist/main.js'))) {
  throw new Error('bench/plan-cli.bench.ts runs bin/sidecarset.js: run `npm run build` first');
}
console.log(
  `load average before: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} (${cpus().length} CPUs), Node ${process.version}`,
);
const dir = await mkdtemp(join(tmpdir(), 'plan-cli-bench-'));
try {
  const report = join(dir, 'report-rss.mjs');
  await writeFile(
    report,
    "import { writeSync } from 'node:fs';\n" +
      "process.on('exit', () => writeSync(3, String(process.resourceUsage().maxRSS)));\n",
  );
  const cases = [
    {
      what: '100000 pods, JSON',
      count: 100_000,
      format: 'json',
      baseline: 'JSON.parse',
      parse: "JSON.parse(readFileSync(process.argv[1], 'utf8'))",
      target: true,
    },
    {
      what: '10000 pods, YAML',
      count: 10_000,
      format: 'yaml',
      baseline: 'yaml parse',
      parse: "(await import('yaml')).parse(readFileSync(process.argv[1], 'utf8'))",
      target: false,
    },
  ];
  console.log(
    `sidecarset plan (table output), median wall of ${RUNS} runs taken in turns with the baseline's, largest peak RSS;`,
  );
  console.log('baseline: a process that only parses the same file, in the same run');
  console.log(
    'input               file MB  plan s  plan MB  baseline      s     MB  wall ratio  RSS ratio',
  );
  let targetsMet = true;
  // `node --import tsx bench/plan-cli.bench.ts json` runs one case.
  const only = process.argv[2];
  for (const c of cases.filter((x) => only === undefined || x.format === only)) {
    const file = join(dir, `pods.${c.format}`);
    execFileSync(
      process.execPath,
      ['--import', 'tsx', FIXTURE_WRITER, String(c.count), c.format, file],
      {
        cwd: root,
        stdio: 'inherit',
      },
    );
    const fileMb = (await stat(file)).size / 1e6;
    const [plan, base] = await measurePair(
      ['bin/sidecarset.js', 'plan', '--sidecarsets', sidecarSetFile, '--pods', file],
      ['--input-type=module', '-e', `import { readFileSync } from 'node:fs'; ${c.parse};`, file],
      report,
    );
    if (c.target && (plan.ms > TARGET_MS || plan.rssMb > TARGET_RSS_MB)) targetsMet = false;
    console.log(
      [
        c.what.padEnd(19),
        fileMb.toFixed(0).padEnd(8),
        (plan.ms / 1000).toFixed(2).padEnd(7),
        plan.rssMb.toFixed(0).padEnd(8),
        c.baseline.padEnd(13),
        (base.ms / 1000).toFixed(2).padEnd(6),
        base.rssMb.toFixed(0).padEnd(6),
        `${(plan.ms / base.ms).toFixed(2)}x`.padEnd(11),
        `${(plan.rssMb / base.rssMb).toFixed(2)}x`,
      ].join(' '),
    );
    await rm(file);
  }
  console.log(
    `target for 100000 pods as JSON: under ${TARGET_MS / 1000} s and ${TARGET_RSS_MB} MB: ${targetsMet ? 'met' : 'NOT met'}`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
