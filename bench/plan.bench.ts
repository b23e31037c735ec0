/**
 * planUpgrade time for 1,000 / 10,000 / 100,000 matched pods with priority and scatter on
 * (target: 100,000 in under a second, growth no worse than n log n against a linear pass over the
 * same pods measured in the same run). Not a test: it only prints.
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';

import type { Pod } from '../src/core/api/k8s-types.js';
import { planUpgrade } from '../src/core/upgrade/plan.js';
import { upgradePod, upgradeSidecarSet } from '../test/support/upgrade-pods.js';

const SIZES = [1_000, 10_000, 100_000];
const TARGET_MS = 1000;
const APPS = ['nginx', 'web-server', 'api-gateway', 'cache', 'queue', 'search', 'auth', 'billing'];

/**
 * `asInACluster`: pods as a long-lived cluster holds them — named as ReplicaSets name them,
 * created over 30 days, and each with its own hash-annotation timestamps (no two annotation values
 * alike, so no per-value memo can help).
 */
function fleet(n: number, asInACluster = false): Pod[] {
  const pods = Array.from({ length: n }, (_, i) => {
    const pod = upgradePod(i, {
      namespace: `ns-${i % 50}`,
      labels: {
        app: 'web',
        app_name: APPS[i % APPS.length] ?? '',
        zone: `zone-${i % 5}`,
        tier: String(i % 3),
      },
      // A mixed fleet: some pods already upgraded, some not ready, creation times that tie.
      upgraded: i % 10 === 0,
      done: i % 20 === 0,
      ready: i % 97 !== 0,
      createdAt: asInACluster ? (i * 7_919) % (30 * 86_400) : i % 1000,
      restarts: i % 4,
    });
    // Give each pod its own hash-annotation timestamp, as a real fleet has.
    const annotations = pod.metadata.annotations ?? {};
    const hash = annotations['kruise.io/sidecarset-hash'] ?? '';
    annotations['kruise.io/sidecarset-hash'] = hash.replace(
      '00:00:00Z',
      `00:${String(i % 60).padStart(2, '0')}:00Z`,
    );
    if (asInACluster) {
      const workload = APPS[i % APPS.length] ?? '';
      pod.metadata.name = `${workload}-${((i * 2_654_435_761) % 4_294_967_296).toString(36).slice(0, 10)}-${(i % 46_656).toString(36).padStart(3, '0')}`;
      const at = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString().slice(0, -5) + 'Z';
      for (const key of ['kruise.io/sidecarset-hash', 'kruise.io/sidecarset-hash-without-image']) {
        annotations[key] = (annotations[key] ?? '').replace(
          /"updateTimestamp":"[^"]*"/,
          `"updateTimestamp":"${at}"`,
        );
      }
    }
    return pod;
  });
  // As the controller and the CLI receive pods: parsed from JSON.
  return JSON.parse(JSON.stringify(pods)) as Pod[];
}

const sidecarSet = upgradeSidecarSet({
  maxUnavailable: '10%',
  partition: '5%',
  priorityStrategy: {
    weightPriority: [
      { weight: 50, matchSelector: { matchLabels: { tier: '0' } } },
      {
        weight: 20,
        matchSelector: {
          matchExpressions: [{ key: 'zone', operator: 'In', values: ['zone-1', 'zone-2'] }],
        },
      },
    ],
  },
  scatterStrategy: [
    { key: 'app_name', value: 'nginx' },
    { key: 'app_name', value: 'cache' },
    { key: 'zone' },
  ],
});
const now = new Date('2026-07-02T10:00:00Z');

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/**
 * Wall time and process CPU time (the latter is steadier on a busy machine, but counts the
 * garbage collector's and compiler's helper threads too).
 */
function time(pods: Pod[], runs: number): { ms: number; cpu: number; upgrade: number } {
  let upgrade = 0;
  const wall: number[] = [];
  const cpu: number[] = [];
  // One untimed run first: a fleet's first plan also pays for compiling its code paths.
  planUpgrade(sidecarSet, pods, { now });
  for (let r = 0; r < runs; r++) {
    const startCpu = process.cpuUsage();
    const start = performance.now();
    upgrade = planUpgrade(sidecarSet, pods, { now }).upgrade.length;
    wall.push(performance.now() - start);
    const used = process.cpuUsage(startCpu);
    cpu.push((used.user + used.system) / 1000);
  }
  return { ms: median(wall), cpu: median(cpu), upgrade };
}

/**
 * The baseline: one pass reading, from every pod, the fields the planner reads. It is linear by
 * construction, so its growth from one fleet size to the next is what the machine's memory makes
 * of a linear pass (a large fleet no longer fits in the caches); the planner's growth is judged
 * against it.
 */
function readEveryPod(pods: readonly Pod[]): number {
  let sum = 0;
  for (const pod of pods) {
    const { metadata, spec, status } = pod;
    const annotations = metadata.annotations ?? {};
    sum += (metadata.name ?? '').length + (metadata.namespace ?? '').length;
    sum += (metadata.labels?.['app_name'] ?? '').length + (metadata.labels?.['zone'] ?? '').length;
    sum += (annotations['kruise.io/sidecarset-injected-list'] ?? '').length;
    sum += (annotations['kruise.io/sidecarset-hash'] ?? '').length;
    sum += (annotations['kruise.io/sidecarset-hash-without-image'] ?? '').length;
    sum += (metadata.creationTimestamp ?? '').length + (spec.nodeName ?? '').length;
    for (const c of spec.containers) sum += (c.image ?? '').length;
    for (const c of status?.containerStatuses ?? []) sum += (c.imageID ?? '').length;
    for (const c of status?.conditions ?? []) sum += (c.lastTransitionTime ?? '').length;
  }
  return sum;
}

/** Per pass, median of samples that each read at least a million pods (small fleets are fast). */
function timeBaseline(pods: readonly Pod[]): number {
  const passes = Math.ceil(1_000_000 / pods.length);
  const wall: number[] = [];
  for (let r = 0; r < 21; r++) {
    const start = performance.now();
    let sum = 0;
    for (let p = 0; p < passes; p++) sum += readEveryPod(pods);
    if (sum < 0) throw new Error('unreachable');
    wall.push((performance.now() - start) / passes);
  }
  return median(wall);
}

console.log(
  `load average before: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} (${cpus().length} CPUs)`,
);
const warmUp = fleet(2_000);
time(warmUp, 5); // warm up the JIT
timeBaseline(warmUp);
const rows: { n: number; ms: number; cpu: number; upgrade: number; baseline: number }[] = [];
for (const n of SIZES) {
  const pods = fleet(n);
  rows.push({ n, ...time(pods, 9), baseline: timeBaseline(pods) });
}
console.log('planUpgrade with weightPriority and 3 scatter terms (one key-only), median of runs;');
console.log('baseline: one linear pass reading the same fields of every pod, in the same run');
console.log(
  'pods      wall ms   cpu ms    upgrade  baseline ms  growth  baseline growth  ratio  n log n allows',
);
const pad = (text: string, width: number): string => text.padEnd(width);
/** The steps whose growth beyond the baseline's is more than n log n allows. */
const tooSteep: string[] = [];
for (const [i, r] of rows.entries()) {
  const prev = rows[i - 1];
  const cells = [
    pad(String(r.n), 9),
    pad(r.ms.toFixed(1), 9),
    pad(r.cpu.toFixed(1), 9),
    pad(String(r.upgrade), 8),
    pad(r.baseline.toFixed(2), 12),
  ];
  if (prev !== undefined) {
    // Growth beyond the baseline's is the planner's own; n log n allows log n / log(previous n).
    const ratio = r.ms / prev.ms / (r.baseline / prev.baseline);
    const allowed = Math.log2(r.n) / Math.log2(prev.n);
    if (ratio > allowed) tooSteep.push(`${prev.n} to ${r.n} pods`);
    cells.push(
      pad((r.ms / prev.ms).toFixed(1) + 'x', 7),
      pad((r.baseline / prev.baseline).toFixed(1) + 'x', 16),
      pad(ratio.toFixed(2), 6),
      allowed.toFixed(2),
    );
  }
  console.log(cells.join(' '));
}
const clusterPods = fleet(100_000, true);
const cluster = time(clusterPods, 9);
console.log(
  `100000 pods as a cluster holds them (ReplicaSet names, created over 30 days, no two hash annotations alike): wall ${cluster.ms.toFixed(1)} ms, cpu ${cluster.cpu.toFixed(1)} ms`,
);
const verdict = (ms: number): string => (ms < TARGET_MS ? 'OK' : 'SLOWER THAN TARGET');
const last = rows.at(-1);
if (last !== undefined) {
  console.log(
    `100,000 pods: wall ${last.ms.toFixed(1)} ms ${verdict(last.ms)}, cpu ${last.cpu.toFixed(1)} ms ${verdict(last.cpu)} (target < ${TARGET_MS} ms)`,
  );
}
console.log(
  `growth beyond the baseline's: ${tooSteep.length === 0 ? 'within n log n at every step' : `MORE THAN n log n from ${tooSteep.join(' and from ')}`}`,
);
