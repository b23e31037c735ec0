/**
 * How much memory `sidecarset serve` needs, as users run it: the built binary as its own process,
 * started with the node flags of the image's entrypoint (bench/image-node-flags.ts),
 * in files mode with the article's SidecarSet, and in cluster mode (webhook + controller) against
 * the fake API server of test/fake-apiserver holding 0, 10,000 and 30,000 injected pods. Reports
 * the resident set (VmRSS) once the controller has cached every pod and the process has settled,
 * against a bare `node` process measured in the same run, and the cost per cached pod. The
 * Deployment's memory request and limit (manifests/base/webhook/deployment.yaml) come from these
 * rows; docs/deploy.md explains the arithmetic.
 *
 * Two rows load 1,000 SidecarSets: files mode with the admission benchmarks' realistic ones
 * (bench/admission-fixtures.ts: selectors, namespaces, a container and a volume each), and cluster
 * mode with SidecarSets like the article's, each with a selector and a container of its own, and
 * no pods, for the cost per SidecarSet.
 *
 * Runs the bundle in dist/ through bin/sidecarset.js, as the image does: `npm run build` first
 * (npm ci does it).
 *
 * Environment: BENCH_POD_COUNTS ("0,10000,30000", must include 0), BENCH_SIDECARSETS (1000),
 * BENCH_SETTLE_MS (4000).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { request } from 'node:https';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

import { injectPod } from '../src/core/inject/inject.js';
import type { Pod } from '../src/core/api/k8s-types.js';
import { withHashes } from '../src/core/api/hash.js';
import type { SidecarSet } from '../src/core/api/sidecarset-types.js';
import type { JsonObject } from '../test/fake-apiserver/index.js';
import { PODS, SIDECARSETS, startFakeApiServer } from '../test/fake-apiserver/index.js';
import { nginxPod } from '../test/controller/cluster.js';
import { REALISTIC_REVIEW, writeSidecarSets } from './admission-fixtures.js';
import { IMAGE_NODE_FLAGS } from './image-node-flags.js';

const root = new URL('../', import.meta.url).pathname;
const counts = (process.env['BENCH_POD_COUNTS'] ?? '0,10000,30000').split(',').map(Number);
const settleMs = Number(process.env['BENCH_SETTLE_MS'] ?? 4000);
const sidecarSetCount = Number(process.env['BENCH_SIDECARSETS'] ?? 1000);
const MiB = 1024 * 1024;
/** Admissions a files-mode row answers before it is measured. */
const ADMISSIONS = 200;

async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
  return kb * 1024;
}

interface Started {
  child: ChildProcess;
  url: string;
  metricsUrl: string;
}

/** Starts `node <args>`; for serve, resolves with its URLs once it listens. */
function start(args: readonly string[]): Promise<Started> {
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      reject(new Error(`${args.join(' ')} exited with ${String(code)}`));
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const entry = JSON.parse(line) as { msg?: string; url?: string; metricsUrl?: string };
      if (entry.msg === 'webhook listening') {
        resolve({ child, url: entry.url ?? '', metricsUrl: entry.metricsUrl ?? '' });
      }
    });
    if (args[0] === '-e') resolve({ child, url: '', metricsUrl: '' });
  });
}

async function stop(child: ChildProcess): Promise<void> {
  child.removeAllListeners('exit');
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function metric(url: string, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

/** The article's nginx pod, as a Deployment's replica would be labelled. */
function appPod(i: number): Pod {
  const labels = { app: 'nginx', 'pod-template-hash': '7c5ddbdf54', zone: `zone-${i % 3}` };
  return nginxPod(`web-${String(i).padStart(5, '0')}`, labels) as unknown as Pod;
}

async function settledRss(pid: number): Promise<number> {
  await sleep(settleMs);
  return rssOf(pid);
}

/** A SidecarSet of its own for app-i pods, shaped like the article's. */
function otherSidecarSet(article: SidecarSet, i: number): SidecarSet {
  return {
    ...article,
    metadata: { name: `agent-${i}` },
    spec: {
      ...article.spec,
      selector: { matchLabels: { app: `app-${i}` } },
      containers: (article.spec.containers ?? []).map((c) => ({ ...c, name: `agent-${i}` })),
    },
  };
}

async function clusterRow(pods: number, sidecarSets: number, dir: string): Promise<number> {
  const api = await startFakeApiServer({
    namespaces: ['default', 'kube-system', 'kube-public', 'kube-node-lease', 'sidecarset-system'],
  });
  try {
    const article = (await import('yaml')).parse(
      await readFile(join(root, 'examples/logtail-sidecarset.yaml'), 'utf8'),
    ) as SidecarSet;
    const stored = api.store.create(SIDECARSETS, '', withHashes(article) as unknown as JsonObject);
    for (let i = 1; i < sidecarSets; i++) {
      const other = withHashes(otherSidecarSet(article, i));
      api.store.create(SIDECARSETS, '', other as unknown as JsonObject);
    }
    const injectWith = withHashes(stored as unknown as SidecarSet);
    const now = new Date();
    for (let i = 0; i < pods; i++) {
      const { pod } = injectPod(appPod(i), [injectWith], {
        now,
        random: Math.random,
        revisions: () => [],
      });
      api.store.create(PODS, 'default', pod as unknown as JsonObject);
    }
    const kubeconfig = join(dir, `kubeconfig-${pods}-${sidecarSets}`);
    await writeFile(kubeconfig, api.kubeConfig().exportConfig());
    const { child, metricsUrl } = await serve(dir, '--kubeconfig', kubeconfig);
    try {
      for (;;) {
        const cached = await metric(metricsUrl, 'sidecarset_controller_cached_pods');
        if (cached === pods) break;
        await sleep(200);
      }
      return await settledRss(child.pid ?? 0);
    } finally {
      await stop(child);
    }
  } finally {
    await api.close();
  }
}

/** Sends the realistic pod's AdmissionReview `times` times, one at a time. */
async function admit(url: string, times: number): Promise<void> {
  const body = await readFile(REALISTIC_REVIEW);
  const target = new URL('/mutate-pods', url);
  const headers = { 'content-type': 'application/json' };
  for (let i = 0; i < times; i++) {
    await new Promise<void>((resolve, reject) => {
      request(target, { method: 'POST', headers, rejectUnauthorized: false }, (res) => {
        res.resume().on('end', resolve);
      })
        .on('error', reject)
        .end(body);
    });
  }
}

/** Files mode once it has answered some admissions, as a serving webhook is measured. */
async function filesRow(sidecarSets: string, dir: string): Promise<number> {
  const { child, url } = await serve(dir, '--sidecarsets', sidecarSets);
  try {
    await admit(url, ADMISSIONS);
    return await settledRss(child.pid ?? 0);
  } finally {
    await stop(child);
  }
}

/** The built `sidecarset serve` with `args` and the image's node flags, on free ports, its files in `dir`. */
function serve(dir: string, ...args: string[]): Promise<Started> {
  return start([...IMAGE_NODE_FLAGS, 'bin/sidecarset.js', 'serve', ...args, ...common(dir)]);
}

function common(dir: string): string[] {
  return [
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    '--metrics-port',
    '0',
    '--dev-cert-dir',
    join(dir, 'certs'),
    '--log-level',
    'info',
  ];
}

const dir = await mkdtemp(join(tmpdir(), 'memory-bench-'));
try {
  const bare = await start(['-e', 'setInterval(() => {}, 1000)']);
  const baseline = await settledRss(bare.child.pid ?? 0);
  await stop(bare.child);
  const rows: [string, number][] = [
    ['bare node (baseline)', baseline],
    ['serve, files mode, 1 SidecarSet', await filesRow('examples/logtail-sidecarset.yaml', dir)],
    [
      `serve, files mode, ${sidecarSetCount} SidecarSets`,
      await filesRow(await writeSidecarSets(dir, sidecarSetCount), dir),
    ],
  ];
  const cluster = new Map<number, number>();
  for (const pods of counts) {
    const rss = await clusterRow(pods, 1, dir);
    cluster.set(pods, rss);
    rows.push([`serve, cluster mode, ${pods} pods cached`, rss]);
  }
  const manySets = await clusterRow(0, sidecarSetCount, dir);
  rows.push([`serve, cluster mode, ${sidecarSetCount} SidecarSets`, manySets]);
  process.stdout.write('memory: resident set of `sidecarset serve` (VmRSS, settled)\n');
  for (const [what, rss] of rows) {
    process.stdout.write(
      `  ${what.padEnd(40)} ${(rss / MiB).toFixed(0).padStart(5)} MiB  ${(rss / baseline).toFixed(2)}× bare node\n`,
    );
  }
  const sorted = [...cluster.entries()].sort((a, b) => a[0] - b[0]);
  const first = sorted[0];
  const last = sorted.at(-1);
  if (first !== undefined && last !== undefined && last[0] > first[0]) {
    const perPod = (last[1] - first[1]) / (last[0] - first[0]);
    process.stdout.write(`  per cached pod: ${(perPod / 1024).toFixed(2)} KiB of resident set\n`);
  }
  const none = cluster.get(0);
  if (none !== undefined && sidecarSetCount > 1) {
    const perSet = (manySets - none) / (sidecarSetCount - 1);
    process.stdout.write(`  per SidecarSet: ${(perSet / 1024).toFixed(2)} KiB of resident set\n`);
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
