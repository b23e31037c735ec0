/**
 * Files mode's reload of 1,000 and 3,000 SidecarSets (issue 15), against baselines measured in
 * the same run:
 * - the conflict check of every SidecarSet, indexed (src/core/validation/sidecarset-conflicts.ts)
 *   against comparing each with every other (test/support/simple-conflicts.ts);
 * - a reload through the files source (worker thread) against the same read on the event loop,
 *   as the source did it before: how long until the new SidecarSets are served, and the latency
 *   of requests due every 5 ms meanwhile (an HTTP server answering from the snapshot).
 * The worker's reload takes longer than the baseline's when CPUs are few: the event loop keeps
 * answering requests beside it instead of holding them. Not a test: it only prints.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { pino } from 'pino';

import { createFilesSource } from '../src/cache/files-source.js';
import { loadFiles } from '../src/cache/load-files.js';
import type { SnapshotSource } from '../src/cache/snapshot.js';
import { loadSidecarSets } from '../src/io/loaders.js';
import { validateCrossSidecarSetConflicts } from '../src/core/validation/sidecarset-conflicts.js';
import { simpleCrossSidecarSetConflicts } from '../test/support/simple-conflicts.js';
import { sidecarSetsYaml } from '../test/support/sidecarset-files.js';

const SIZES = [1_000, 3_000];
const SAMPLE_EVERY = 10;

function timed(run: () => void): number {
  const start = performance.now();
  run();
  return performance.now() - start;
}

async function waitFor(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 1));
}

const REQUEST_EVERY_MS = 5;

/**
 * Requests due every REQUEST_EVERY_MS until `done()`, one at a time. A request's latency counts
 * from when it was due, or when the one before it was answered if that was later: a stalled event
 * loop shows as the wait of the request it held back, a slow client does not add up.
 */
async function latenciesWhile(port: number, done: () => boolean): Promise<number[]> {
  const latencies: number[] = [];
  const start = performance.now();
  let answered = start;
  for (let i = 0; !done(); i++) {
    const due = start + i * REQUEST_EVERY_MS;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    await new Promise<void>((resolve, reject) => {
      request({ port, host: '127.0.0.1', path: '/' }, (res) => {
        res.resume();
        res.on('end', resolve);
      })
        .on('error', reject)
        .end();
    });
    const now = performance.now();
    latencies.push(now - Math.max(due, answered));
    answered = now;
  }
  return latencies;
}

const percentile = (values: number[], p: number): number =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ??
  0;

interface ReloadRun {
  ms: number;
  p99: number;
  max: number;
  requests: number;
}

/** One reload of `file` (rewritten to image `image`) while requests are answered from `read`. */
async function measureReload(
  file: string,
  n: number,
  image: string,
  reload: () => Promise<void>,
  served: () => string,
): Promise<ReloadRun> {
  const server = createServer((_req, res) => res.end(served()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await writeFile(file, sidecarSetsYaml(n, image));
  const start = performance.now();
  let finished = false;
  const requests = latenciesWhile(port, () => finished);
  await reload();
  const ms = performance.now() - start;
  finished = true;
  const latencies = await requests;
  await new Promise((resolve) => server.close(resolve));
  return {
    ms,
    p99: percentile(latencies, 0.99),
    max: Math.max(...latencies),
    requests: latencies.length,
  };
}

const dir = await mkdtemp(join(tmpdir(), 'files-reload-bench-'));
console.log(
  `node ${process.version}, ${cpus().length} CPUs, load ${loadavg()[0]?.toFixed(1) ?? '?'}; ` +
    'files mode, SidecarSets each with its own container, 100 namespaces, 20 apps',
);
for (const n of SIZES) {
  const file = join(dir, `sidecarsets-${n}.yaml`);
  await writeFile(file, sidecarSetsYaml(n, 'agent:0'));
  const all = (await loadSidecarSets(file)).sidecarSets;
  // The all-pairs baseline takes minutes at 3,000: it is timed on one SidecarSet in ten, × 10.
  const sample = all.filter((_, i) => i % SAMPLE_EVERY === 0);
  const simple =
    SAMPLE_EVERY *
    timed(() => {
      for (const ss of sample) simpleCrossSidecarSetConflicts(ss, all);
    });
  const indexed = timed(() => {
    for (const ss of all) validateCrossSidecarSetConflicts(ss, all);
  });
  console.log(
    `${n} SidecarSets: conflict check ${indexed.toFixed(0)} ms, all pairs ~${simple.toFixed(0)} ms ` +
      `(${(indexed / simple).toFixed(3)}×)`,
  );

  // Baseline: the read on the event loop, as the files source did it before issue 15.
  let inLoop = { sidecarSets: all, image: 'agent:0' };
  const baseline = await measureReload(
    file,
    n,
    'agent:1',
    async () => {
      inLoop = {
        sidecarSets: (await loadFiles({ sidecarSets: file })).sidecarSets,
        image: 'agent:1',
      };
    },
    () => String(inLoop.sidecarSets.length),
  );

  const source: SnapshotSource = createFilesSource({
    sidecarSets: file,
    logger: pino({ level: 'silent' }),
    debounceMs: 0,
  });
  await source.start();
  const image = (): string => source.read().sidecarSets.all[0]?.spec.containers?.[0]?.image ?? '';
  const worker = await measureReload(
    file,
    n,
    'agent:2',
    () => waitFor(() => image() === 'agent:2'),
    () => String(source.read().sidecarSets.all.length),
  );
  await source.stop();
  const row = (name: string, r: ReloadRun, ratio: string): void => {
    console.log(
      `  ${name.padEnd(16)} reload ${r.ms.toFixed(0).padStart(6)} ms; ${String(r.requests).padStart(5)} requests meanwhile, p99 ${r.p99.toFixed(1).padStart(7)} ms, max ${r.max.toFixed(1).padStart(7)} ms ${ratio}`,
    );
  };
  row('on the event loop', baseline, '(baseline)');
  row(
    'worker (source)',
    worker,
    `(max latency ${(worker.max / baseline.max).toFixed(3)}× the baseline's)`,
  );
}
await rm(dir, { recursive: true, force: true });
