/**
 * Pod admission over HTTPS, at the settings users run: the real webhook (files mode, the default
 * log level `info`, one log line per admission, node started with the image's flags of
 * bench/image-node-flags.ts and the heap sized as bin/sidecarset.js sizes it) with 1, 100 and
 * 1,000 SidecarSets loaded, side by side with a bare fastify server doing a naive one-sidecar
 * injection (fast-json-patch), in the same run. Both get the same TLS policy and certificate,
 * the same HTTP (keep-alive, 16 connections) and the same body, sent compact as the API server
 * sends it:
 *   - realistic: a production pod of ~5 KB (test/fixtures/admission-review-realistic.json: two
 *     containers with probes, env and resources, many labels and annotations, an owner), the
 *     main row at 1,000 SidecarSets;
 *   - small: the article's one-container nginx pod (examples/admission-review.json).
 * Each server runs in a child process (bench/admission-server.ts) so that its CPU time per request
 * is measured without the load generator's; the webhook logs to its stdout, a pipe read here.
 * Target (issue 13): at 1,000 SidecarSets, the realistic pod at most 1.2x the baseline's CPU per
 * request (stretch 1.0x). Not a test: it only prints (each server's answer to each body is
 * checked once, before any load, by applying its patch to the pod).
 *
 * BENCH_ROUNDS=n (default 3) sets the interleaved rounds; BENCH_LOG_LEVEL (default info) the
 * webhook's log level; BENCH_CPU_PROF=<dir> writes a V8 CPU profile of every server process there.
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:https';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

import jsonPatch from 'fast-json-patch';

import type { Pod } from '../src/core/api/k8s-types.js';
import { ensureDevCertificates } from '../src/server/tls.js';
import { EXAMPLES, REALISTIC_REVIEW, writeSidecarSets } from './admission-fixtures.js';
import { IMAGE_NODE_FLAGS } from './image-node-flags.js';
import type { ChildMessage, ParentMessage } from './admission-server.js';

const SIZES = [1, 100, 1_000];
const CONNECTIONS = 16;
const WARMUP_S = 1;
const DURATION_S = 5;
const TARGET_RATIO = 1.2;
const LOG_LEVEL = process.env['BENCH_LOG_LEVEL'] ?? 'info';
/** Rounds of runs, interleaved across servers so that a busy moment does not hit only one. */
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);

const SERVER_ENTRY = fileURLToPath(new URL('./admission-server.ts', import.meta.url));

/** The few autocannon options and results used here (the package ships no types). */
interface LoadResult {
  latency: { p50: number; p99: number };
  requests: { average: number; total: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}
type Autocannon = (options: {
  url: string;
  method: 'POST';
  headers: Record<string, string>;
  body: string;
  connections: number;
  pipelining: number;
  duration: number;
}) => Promise<LoadResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** An AdmissionReview sent to every server. */
interface Body {
  name: 'realistic' | 'small';
  text: string;
}

interface Measurement {
  load: LoadResult;
  /** Server CPU time (user + system, all threads) per completed request, in µs. */
  cpuPerRequest: number;
  logLines: number;
}

interface Row {
  server: string;
  sidecarSets: number;
  body: Body['name'];
  /** The round with the median CPU per request. */
  median: Measurement;
  cpuRange: [number, number];
  responses: number;
  non2xx: number;
  errors: number;
  logLines: number;
}

/** Sends a message to the child and waits for its answer (one request at a time). */
function ask(child: ChildProcess, message: ParentMessage | undefined): Promise<ChildMessage> {
  return new Promise((resolve, reject) => {
    const onMessage = (reply: ChildMessage): void => {
      cleanup();
      if (reply.type === 'failed') reject(new Error(`the server did not start: ${reply.message}`));
      else resolve(reply);
    };
    const onExit = (): void => {
      cleanup();
      reject(new Error('the server process exited'));
    };
    const cleanup = (): void => {
      child.off('message', onMessage).off('exit', onExit);
    };
    child.on('message', onMessage).on('exit', onExit);
    if (message !== undefined) child.send(message);
  });
}

async function cpuMicros(child: ChildProcess): Promise<number> {
  const reply = await ask(child, { type: 'cpu' });
  if (reply.type !== 'cpu') throw new Error(`expected a cpu answer, got ${reply.type}`);
  return reply.micros;
}

/** One POST, answered and checked before any load: the patch must inject logtail in front. */
async function verify(url: string, ca: string, body: string): Promise<string[]> {
  const text = await new Promise<string>((resolve, reject) => {
    const req = request(
      `${url}/mutate-pods`,
      { method: 'POST', ca, headers: { 'content-type': 'application/json' } },
      (res) => {
        let data = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (data += chunk));
        res.on('end', () => {
          if (res.statusCode === 200) resolve(data);
          else reject(new Error(`HTTP ${res.statusCode ?? '?'}: ${data}`));
        });
      },
    );
    req.on('error', reject).end(body);
  });
  const answer = JSON.parse(text) as { response?: { allowed?: boolean; patch?: string } };
  const pod = (JSON.parse(body) as { request: { object: Pod } }).request.object;
  if (answer.response?.allowed !== true || answer.response.patch === undefined)
    throw new Error(`no patch in ${text}`);
  const ops = JSON.parse(
    Buffer.from(answer.response.patch, 'base64').toString('utf8'),
  ) as jsonPatch.Operation[];
  const out = jsonPatch.applyPatch(structuredClone(pod), ops, true, false).newDocument;
  const names = out.spec.containers.map((c) => c.name);
  if (names[0] !== 'logtail' || !names.includes('nginx'))
    throw new Error(`the patch gives containers [${names.join(', ')}]`);
  return names;
}

/** autocannon never verifies the certificate (loopback only); `verify` above uses the dev CA. */
function load(url: string, body: string, duration: number): Promise<LoadResult> {
  return autocannon({
    url: `${url}/mutate-pods`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections: CONNECTIONS,
    pipelining: 1,
    duration,
  });
}

/** BENCH_CPU_PROF=<dir> writes a V8 CPU profile of each server process there. */
function profileFlags(): string[] {
  const dir = process.env['BENCH_CPU_PROF'];
  return dir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', dir];
}

interface Server {
  name: string;
  sidecarSets: number;
  child: ChildProcess;
  url: string;
  /** Lines the server wrote to its stdout (its log) so far. */
  logLines: number;
}

/** Forks one server process and checks its answer to every body before any load. */
async function startServer(
  name: string,
  sidecarSets: number,
  args: string[],
  fixture: { ca: string; bodies: readonly Body[] },
): Promise<Server> {
  const child = fork(SERVER_ENTRY, args, {
    // The webhook runs with the image's node flags; the naive injector as plain node runs it.
    execArgv: [
      ...(name === 'webhook' ? IMAGE_NODE_FLAGS : []),
      '--import',
      'tsx',
      ...profileFlags(),
    ],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const server = { name, sidecarSets, child, url: '', logLines: 0 };
  child.stdout?.on('data', (chunk: Buffer) => {
    for (const byte of chunk) if (byte === 0x0a) server.logLines++;
  });
  running.push(server);
  const ready = await ask(child, undefined);
  if (ready.type !== 'ready') throw new Error(`expected ready, got ${ready.type}`);
  server.url = ready.url;
  for (const body of fixture.bodies) {
    const names = await verify(server.url, fixture.ca, body.text);
    console.error(
      `${name} (${sidecarSets} SidecarSets), ${body.name} pod: the patch gives [${names.join(', ')}]`,
    );
  }
  return server;
}

/** One bounded run after a warm-up; CPU is the server process's own, read over IPC. */
async function measure(server: Server, body: string): Promise<Measurement> {
  await load(server.url, body, WARMUP_S);
  const before = await cpuMicros(server.child);
  const linesBefore = server.logLines;
  const result = await load(server.url, body, DURATION_S);
  const after = await cpuMicros(server.child);
  return {
    load: result,
    cpuPerRequest: (after - before) / Math.max(1, result.requests.total),
    logLines: server.logLines - linesBefore,
  };
}

const running: Server[] = [];

function alive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

async function stopAll(): Promise<void> {
  await Promise.all(
    running.map(async ({ child }) => {
      if (!alive(child)) return;
      const exited = once(child, 'exit');
      child.send({ type: 'stop' } satisfies ParentMessage);
      await Promise.race([exited, delay(5_000, undefined, { ref: false })]);
      if (alive(child)) child.kill('SIGKILL');
    }),
  );
}

/** What is measured: a server and a body. */
interface Case {
  server: Server;
  body: Body;
}

/** The run with the median CPU per request, and the totals over every run. */
function summarize({ server, body }: Case, runs: Measurement[]): Row {
  const sorted = [...runs].sort((a, b) => a.cpuPerRequest - b.cpuPerRequest);
  const median = sorted[Math.floor(sorted.length / 2)];
  if (median === undefined) throw new Error('no runs');
  const sum = (f: (m: Measurement) => number): number => runs.reduce((n, m) => n + f(m), 0);
  return {
    server: server.name,
    sidecarSets: server.sidecarSets,
    body: body.name,
    median,
    cpuRange: [sorted[0]?.cpuPerRequest ?? 0, sorted.at(-1)?.cpuPerRequest ?? 0],
    responses: sum((m) => m.load.requests.total),
    non2xx: sum((m) => m.load.non2xx),
    errors: sum((m) => m.load.errors + m.load.timeouts),
    logLines: sum((m) => m.logLines),
  };
}

function printTable(rows: Row[]): void {
  const baseline = (body: string): number =>
    rows.find((r) => r.server === 'baseline' && r.body === body)?.median.cpuPerRequest ?? NaN;
  console.log(
    `\nPOST /mutate-pods over HTTPS on loopback: ${CONNECTIONS} connections, pipelining 1, ` +
      `${DURATION_S} s runs after ${WARMUP_S} s warm-ups, ${ROUNDS} round(s) interleaved, ` +
      `median round shown; webhook log level ${LOG_LEVEL}, the baseline logs nothing`,
  );
  const header = [
    'pod',
    'server',
    'SidecarSets',
    'req/s',
    'p50 ms',
    'p99 ms',
    'CPU µs/req',
    'range',
    'vs baseline',
  ];
  const lines = rows.map((r) => [
    r.body,
    r.server,
    String(r.sidecarSets),
    r.median.load.requests.average.toFixed(0),
    String(r.median.load.latency.p50),
    String(r.median.load.latency.p99),
    r.median.cpuPerRequest.toFixed(0),
    r.cpuRange.map((c) => c.toFixed(0)).join('-'),
    (r.median.cpuPerRequest / baseline(r.body)).toFixed(2) + 'x',
  ]);
  for (const cells of [header, ...lines]) console.log(cells.map((c) => c.padEnd(12)).join(''));
  for (const r of rows) {
    console.log(
      `${r.body} ${r.server} ${r.sidecarSets}: ${r.responses} responses, ${r.non2xx} non-2xx, ` +
        `${r.errors} errors or timeouts, ${r.logLines} log lines`,
    );
  }
  const main = rows.find(
    (r) => r.body === 'realistic' && r.server === 'webhook' && r.sidecarSets === 1_000,
  );
  if (main !== undefined) {
    const ratio = main.median.cpuPerRequest / baseline(main.body);
    const ok = ratio <= TARGET_RATIO && main.non2xx + main.errors === 0;
    console.log(
      `target: the realistic pod at 1,000 SidecarSets, log level ${LOG_LEVEL}, at most ` +
        `${TARGET_RATIO}x the baseline's CPU per request; this run: ${ratio.toFixed(2)}x, ` +
        (ok ? 'MET' : 'NOT MET'),
    );
  }
  const [one, five, fifteen] = loadavg().map((l) => l.toFixed(2));
  console.log(`load average: ${one} ${five} ${fifteen} (${cpus().length} CPUs, shared)`);
}

/** A review as the API server sends it: compact JSON. */
async function compactBody(url: URL): Promise<string> {
  return JSON.stringify(JSON.parse(await readFile(url, 'utf8')));
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'sidecarset-bench-'));
  try {
    const certDir = join(root, 'certs');
    const dev = await ensureDevCertificates(certDir, new Date());
    const realistic: Body = { name: 'realistic', text: await compactBody(REALISTIC_REVIEW) };
    const small: Body = {
      name: 'small',
      text: await compactBody(new URL('admission-review.json', EXAMPLES)),
    };
    const fixture = { ca: await readFile(dev.caFile, 'utf8'), bodies: [realistic, small] };
    const baseline = await startServer('baseline', 0, ['baseline', certDir], fixture);
    const cases: Case[] = [{ server: baseline, body: realistic }];
    const smallCases: Case[] = [{ server: baseline, body: small }];
    for (const n of SIZES) {
      const dir = await writeSidecarSets(root, n);
      const args = ['webhook', dir, certDir, LOG_LEVEL];
      const server = await startServer('webhook', n, args, fixture);
      cases.push({ server, body: realistic });
      // The small pod is the second row: at 1,000 SidecarSets only.
      if (n === 1_000) smallCases.push({ server, body: small });
    }
    cases.push(...smallCases);
    const runs = cases.map((): Measurement[] => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, c] of cases.entries()) runs[i]?.push(await measure(c.server, c.body.text));
    }
    printTable(cases.map((c, i) => summarize(c, runs[i] ?? [])));
  } finally {
    await stopAll();
    await rm(root, { recursive: true, force: true });
  }
}

await main();
