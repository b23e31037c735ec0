/**
 * A 10,000-pod in-place sidecar rollout in the test cluster (issue 5, point 7): the fake API server
 * and kubelet of test/fake-apiserver, and the real controller (Controller) talking to it over
 * HTTP through @kubernetes/client-node. Reports
 *
 * 1. memory per cached pod: heap after the controller's caches synced minus before, per pod (and
 *    approximateBytes of one slim pod), against the 2 KB target;
 * 2. rollout time, from the SidecarSet image change to status.updatedReadyPods === pods, against
 *    the time the budget alone allows: ceil(pods / maxUnavailable) waves × the kubelet's delay;
 * 3. reconciles, API requests per pod, and how full the controller kept the budget;
 * 4. the controller's cost: pod requests per upgraded pod against the target of 1 (issue 22,
 *    docs/adr/0020-one-write-per-upgraded-pod.md), and the Event objects the rollout created
 *    (aggregated: in proportion to rounds).
 *
 * Not a test: nothing is asserted, but the outcome is checked and printed (every pod on the new
 * image, each patched once, never more than maxUnavailable unavailable, sampled on every store
 * event by an incremental count).
 *
 * Pods are created in the store already injected, by the real injection core (injectPod on the
 * SidecarSet as the webhook stores it, withHashes), then started by the fake kubelet.
 *
 * Environment: BENCH_PODS (10000), BENCH_KUBELET_DELAY_MS (200), BENCH_MAX_UNAVAILABLE ("10%"),
 * BENCH_QPS (5000), BENCH_BURST (5000), BENCH_WORKERS (3), BENCH_TIMEOUT_S (300: the bound on the
 * whole run, after which it exits with status 2), BENCH_CPU_PROF=<dir> (a V8 CPU profile). The
 * process re-executes itself with --expose-gc when gc is not exposed.
 *
 * Why maxUnavailable 10% (1,000): in this single-process cluster every API request costs ~0.9 ms
 * of CPU (client-node, HTTP, the fake server), one per pod, so the rollout is bound by the write
 * throughput (~300 pods/s) long before a budget of 1,000 fills; a budget of a few
 * dozen would already keep up. A small budget (1% = 100 waves) would add a plan over 10,000 pods
 * and a watch round trip per wave and could exceed two minutes; 10% keeps the run bounded.
 */
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

import { pino } from 'pino';

import { Controller } from '../src/controller/controller.js';
import {
  SIDECARSET_HASH,
  SIDECARSET_HASH_WITHOUT_IMAGE,
  SIDECARSET_INJECTED_LIST,
} from '../src/core/api/annotations.js';
import { injectPod } from '../src/core/inject/inject.js';
import { scaleMaxUnavailable } from '../src/core/encoding/intstr.js';
import type { Pod } from '../src/core/api/k8s-types.js';
import { withHashes } from '../src/core/api/hash.js';
import type { SidecarSet } from '../src/core/api/sidecarset-types.js';
import { shareKeepAliveAgent } from '../src/k8s/keep-alive.js';
import { approximateBytes, slimPod } from '../src/k8s/slim-pod.js';
import type {
  FakeApiServer,
  JsonObject,
  KubeObject,
  StoreEvent,
} from '../test/fake-apiserver/index.js';
import { EVENTS, PODS, SIDECARSETS, startFakeApiServer } from '../test/fake-apiserver/index.js';

const env = process.env;
const POD_COUNT = Number(env['BENCH_PODS'] ?? 10_000);
const KUBELET_DELAY_MS = Number(env['BENCH_KUBELET_DELAY_MS'] ?? 200);
const MAX_UNAVAILABLE_RAW = env['BENCH_MAX_UNAVAILABLE'] ?? '10%';
const MAX_UNAVAILABLE: number | string = /^\d+$/.test(MAX_UNAVAILABLE_RAW)
  ? Number(MAX_UNAVAILABLE_RAW)
  : MAX_UNAVAILABLE_RAW;
const QPS = Number(env['BENCH_QPS'] ?? 5_000);
const BURST = Number(env['BENCH_BURST'] ?? 5_000);
const WORKERS = Number(env['BENCH_WORKERS'] ?? 3);
const TIMEOUT_MS = Number(env['BENCH_TIMEOUT_S'] ?? 300) * 1000;
const TARGET_BYTES_PER_POD = 2048;
/** Diagnostic: one keep-alive agent for every API call (client-node 1.4 makes a new one per call). */

const SIDECARSET_NAME = 'logtail';
const SIDECAR = 'logtail';
const OLD_IMAGE = 'log-service/logtail:0.16.16';
const NEW_IMAGE = 'log-service/logtail:0.16.18';
const NAMESPACE = 'default';

type Gc = () => void;

function gcFunction(): Gc | undefined {
  const gc: unknown = (globalThis as { gc?: unknown }).gc;
  return typeof gc === 'function' ? (gc as Gc) : undefined;
}

/** Runs this file again with --expose-gc (and --cpu-prof when asked); resolves its exit code. */
function reexec(): Promise<number> {
  const profile = env['BENCH_CPU_PROF'];
  const args = [
    '--expose-gc',
    ...(profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profile}`]),
    ...process.execArgv,
    fileURLToPath(import.meta.url),
  ];
  const child = spawn(process.execPath, args, { stdio: 'inherit' });
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      resolve(code ?? (signal === null ? 1 : 128));
    });
  });
}

function heapAfterGc(gc: Gc): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

function loadAverage(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

function podName(i: number): string {
  return `web-${String(i).padStart(5, '0')}`;
}

function appPod(i: number): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName(i),
      namespace: NAMESPACE,
      labels: { app: 'nginx', 'pod-template-hash': '7c5ddbdf54', zone: `zone-${i % 3}` },
      annotations: { 'kubectl.kubernetes.io/default-container': 'nginx' },
    },
    spec: {
      nodeName: `node-${i % 50}`,
      containers: [
        {
          name: 'nginx',
          image: 'nginx:1.27',
          ports: [{ containerPort: 80, protocol: 'TCP' }],
          env: [{ name: 'TZ', value: 'Asia/Shanghai' }],
          volumeMounts: [{ name: 'nginx-log', mountPath: '/var/log/nginx' }],
        },
      ],
      volumes: [{ name: 'nginx-log', emptyDir: {} }],
    },
  };
}

function sidecarSetSpec(image: string): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: SIDECARSET_NAME },
    spec: {
      selector: { matchLabels: { app: 'nginx' } },
      updateStrategy: { type: 'RollingUpdate', maxUnavailable: MAX_UNAVAILABLE },
      containers: [
        {
          name: SIDECAR,
          image,
          env: [{ name: 'IS_SIDECAR', value: 'true' }],
          volumeMounts: [{ name: 'nginx-log', mountPath: '/var/log/nginx' }],
        },
      ],
    },
  };
}

function asJson(value: unknown): JsonObject {
  return value as JsonObject;
}

interface ContainerLike {
  name?: unknown;
  image?: unknown;
  ready?: unknown;
}

function containerIn(list: unknown, name: string): ContainerLike | undefined {
  if (!Array.isArray(list)) return undefined;
  for (const c of list as ContainerLike[]) if (c.name === name) return c;
  return undefined;
}

/**
 * Unavailable: Ready is not True, or the sidecar's spec image is not yet running and ready (the
 * window of an in-place upgrade, as test/controller/rollout.test.ts counts it).
 */
function unavailable(pod: KubeObject): boolean {
  const spec = pod['spec'] as { containers?: unknown } | undefined;
  const status = pod['status'] as { containerStatuses?: unknown; conditions?: unknown } | undefined;
  const wanted = containerIn(spec?.containers, SIDECAR);
  const running = containerIn(status?.containerStatuses, SIDECAR);
  if (wanted === undefined) return false;
  if (running === undefined || running.image !== wanted.image || running.ready !== true)
    return true;
  const conditions = Array.isArray(status?.conditions)
    ? (status.conditions as { type?: unknown; status?: unknown }[])
    : [];
  return !conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

function sidecarImage(pod: KubeObject): unknown {
  return containerIn((pod['spec'] as { containers?: unknown } | undefined)?.containers, SIDECAR)
    ?.image;
}

/** Counts unavailable pods on every store event, one pod at a time; records the worst and the area. */
class AvailabilityTracker {
  private readonly down = new Set<string>();
  worst = 0;
  /** Integral of the unavailable count over time (pod·ms), from start(). */
  private area = 0;
  private lastAt = 0;
  private startedAt = 0;
  events = 0;
  /** When each pod last became available again. */
  readonly upAt = new Map<string, number>();

  constructor(pods: readonly KubeObject[]) {
    for (const pod of pods) if (unavailable(pod)) this.down.add(pod.metadata.name ?? '');
  }

  start(): void {
    this.startedAt = this.lastAt = performance.now();
    this.area = 0;
    this.worst = this.down.size;
  }

  onEvent(event: StoreEvent): void {
    if (event.resource.resource !== PODS.resource) return;
    this.events++;
    const now = performance.now();
    this.area += this.down.size * (now - this.lastAt);
    this.lastAt = now;
    const name = event.object.metadata.name ?? '';
    if (event.type !== 'DELETED' && unavailable(event.object)) this.down.add(name);
    else if (this.down.delete(name)) this.upAt.set(name, now);
    if (this.down.size > this.worst) this.worst = this.down.size;
  }

  /** Mean unavailable pods from start() to `until`. */
  mean(until: number): number {
    const area = this.area + this.down.size * (until - this.lastAt);
    return until > this.startedAt ? area / (until - this.startedAt) : 0;
  }

  current(): number {
    return this.down.size;
  }
}

interface RequestCounts {
  total: number;
  byKind: Map<string, number>;
  /** Main-resource PATCHes per pod name (the upgrade writes). */
  podPatches: Map<string, number>;
  /** When each pod's first such PATCH was answered. */
  patchedAt: Map<string, number>;
}

function countRequests(api: FakeApiServer): { counts: RequestCounts; stop: () => void } {
  const counts: RequestCounts = {
    total: 0,
    byKind: new Map(),
    podPatches: new Map(),
    patchedAt: new Map(),
  };
  const stop = api.control.onRequest((r) => {
    if (r.query['watch'] === 'true' || r.query['watch'] === '1') return;
    counts.total++;
    const kind = `${r.method} ${r.resource ?? r.path}${r.subresource === undefined ? '' : `/${r.subresource}`}`;
    counts.byKind.set(kind, (counts.byKind.get(kind) ?? 0) + 1);
    if (r.method === 'PATCH' && r.resource === 'pods' && r.subresource === undefined) {
      const name = r.name ?? '';
      counts.podPatches.set(name, (counts.podPatches.get(name) ?? 0) + 1);
      if (!counts.patchedAt.has(name)) counts.patchedAt.set(name, performance.now());
    }
    // The log keeps every request with its body; nothing here reads it back.
    api.control.clearRequests();
  });
  return { counts, stop };
}

interface Status {
  observedGeneration?: number;
  matchedPods?: number;
  updatedPods?: number;
  readyPods?: number;
  updatedReadyPods?: number;
}

function statusOf(obj: KubeObject | undefined): Status {
  const s = obj?.['status'];
  return s !== null && typeof s === 'object' && !Array.isArray(s) ? s : {};
}

/** Resolves when the SidecarSet's status satisfies `done` (checked on its own store events). */
function waitForStatus(
  api: FakeApiServer,
  done: (s: Status) => boolean,
  what: string,
  timeoutMs: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const check = (s: Status): boolean => {
      if (!done(s)) return false;
      clearTimeout(timer);
      unsubscribe();
      resolve(performance.now());
      return true;
    };
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const unsubscribe = api.store.subscribe((event) => {
      if (event.resource.resource === SIDECARSETS.resource) check(statusOf(event.object));
    });
    check(statusOf(api.store.get(SIDECARSETS, '', SIDECARSET_NAME)));
  });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
}

function fmt(n: number, digits = 1): string {
  return n.toFixed(digits);
}

async function run(gc: Gc): Promise<boolean> {
  const deadline = setTimeout(() => {
    console.error(`rollout bench: gave up after ${TIMEOUT_MS / 1000} s`);
    process.exit(2);
  }, TIMEOUT_MS);
  deadline.unref();
  console.log(`load average before: ${loadAverage()} (${cpus().length} CPUs)`);

  const api = await startFakeApiServer({
    // The controller keeps its ControllerRevisions in its own namespace.
    namespaces: ['default', 'kube-system', 'kube-public', 'kube-node-lease', 'sidecarset-system'],
  });
  let controller: Controller | undefined;
  try {
    // The SidecarSet as the webhooks store it (defaults and hash annotations).
    const stored = api.store.create(SIDECARSETS, '', asJson(withHashes(sidecarSetSpec(OLD_IMAGE))));
    const injectWith = withHashes(stored as unknown as SidecarSet);
    const now = new Date();
    const setupStart = performance.now();
    for (let i = 0; i < POD_COUNT; i++) {
      const { pod } = injectPod(appPod(i), [injectWith], {
        now,
        random: Math.random,
        revisions: () => [],
      });
      api.store.create(PODS, NAMESPACE, asJson(pod));
    }
    const sample = api.store.get(PODS, NAMESPACE, podName(0));
    const annotations = sample?.metadata.annotations ?? {};
    if (
      annotations[SIDECARSET_INJECTED_LIST] !== SIDECARSET_NAME ||
      annotations[SIDECARSET_HASH] === undefined ||
      sample === undefined ||
      sidecarImage(sample) !== OLD_IMAGE
    ) {
      throw new Error('the pods were not injected as the webhook would');
    }
    const kubelet = api.startKubelet({ delayMs: KUBELET_DELAY_MS });
    await kubelet.whenIdle({ timeoutMs: 60_000 });
    console.log(
      `setup: ${POD_COUNT} injected pods created and started by the kubelet in ${fmt((performance.now() - setupStart) / 1000)} s`,
    );

    // (1) Memory: the heap before the controller exists, and once its caches hold every pod.
    const heapBefore = heapAfterGc(gc);
    let reconciles = { success: 0, requeue: 0, error: 0 };
    controller = new Controller({
      // As `serve` loads it: API requests share keep-alive connections.
      kubeConfig: shareKeepAliveAgent(api.kubeConfig()),
      logger: pino({ level: env['BENCH_LOG_LEVEL'] ?? 'silent' }),
      qps: QPS,
      burst: BURST,
      workers: WORKERS,
      onReconcile: (outcome) => {
        reconciles[outcome]++;
      },
    });
    const syncStart = performance.now();
    await controller.start();
    const syncMs = performance.now() - syncStart;
    await waitForStatus(
      api,
      (s) => s.observedGeneration === 1 && s.updatedReadyPods === POD_COUNT,
      'the first status',
      60_000,
    );
    const heapAfter = heapAfterGc(gc);
    const cached = controller.cachedPods();
    const perPod = (heapAfter - heapBefore) / cached;
    const slimSample = slimPod(api.store.get(PODS, NAMESPACE, podName(0)));
    const slimBytes = approximateBytes(slimSample);
    console.log(
      `(1) memory: caches synced in ${fmt(syncMs / 1000, 2)} s holding ${cached} pods; heap ${fmt(heapBefore / 2 ** 20)} → ${fmt(heapAfter / 2 ** 20)} MiB = ${Math.round(perPod)} B per cached pod (whole controller included) ${perPod <= TARGET_BYTES_PER_POD ? 'OK' : 'OVER'} (target ≤ ${TARGET_BYTES_PER_POD} B); approximateBytes(slim pod) = ${slimBytes} B, nothing shared`,
    );

    // (2) The rollout.
    const tracker = new AvailabilityTracker(api.store.list(PODS).items);
    const unsubscribeTracker = api.store.subscribe((event) => {
      tracker.onEvent(event);
    });
    const requests = countRequests(api);
    reconciles = { success: 0, requeue: 0, error: 0 };
    const budget = scaleMaxUnavailable(MAX_UNAVAILABLE, POD_COUNT);
    const waves = Math.ceil(POD_COUNT / budget);
    const idealMs = waves * KUBELET_DELAY_MS;
    const cpuStart = process.cpuUsage();

    const current = api.store.get(SIDECARSETS, '', SIDECARSET_NAME);
    if (current === undefined) throw new Error('the SidecarSet is gone');
    const next = structuredClone(current) as unknown as SidecarSet;
    const container = next.spec.containers?.[0];
    if (container === undefined) throw new Error('no sidecar container');
    container.image = NEW_IMAGE;
    // As the mutating webhook does on update: recompute both hashes.
    const nextAnnotations = { ...next.metadata.annotations };
    delete nextAnnotations[SIDECARSET_HASH];
    delete nextAnnotations[SIDECARSET_HASH_WITHOUT_IMAGE];
    next.metadata.annotations = nextAnnotations;
    const t0 = performance.now();
    tracker.start();
    api.store.update(SIDECARSETS, '', SIDECARSET_NAME, asJson(withHashes(next)));
    const t1 = await waitForStatus(
      api,
      (s) => s.observedGeneration === 2 && s.updatedReadyPods === POD_COUNT,
      'updatedReadyPods to reach every pod',
      TIMEOUT_MS,
    );
    const cpu = process.cpuUsage(cpuStart);
    const rolloutMs = t1 - t0;
    const meanDown = tracker.mean(t1);
    unsubscribeTracker();
    requests.stop();

    // The outcome, checked once.
    const finalPods = api.store.list(PODS).items;
    const onNewImage = finalPods.filter(
      (p) => sidecarImage(p) === NEW_IMAGE && !unavailable(p),
    ).length;
    const patchedOnce = [...requests.counts.podPatches.values()].filter((n) => n === 1).length;
    const patchedTwice = [...requests.counts.podPatches.values()].filter((n) => n > 1).length;
    const ok = onNewImage === POD_COUNT && tracker.worst <= budget && patchedTwice === 0;

    const ratio = rolloutMs / idealMs;
    // Each pod's own upgrade: its patch answered → running the new sidecar and ready (kubelet + store).
    const latencies: number[] = [];
    for (const [pod, at] of requests.counts.patchedAt) {
      const up = tracker.upAt.get(pod);
      if (up !== undefined && up >= at) latencies.push(up - at);
    }
    const lastUp = Math.max(...tracker.upAt.values());
    const firstPatch = Math.min(...requests.counts.patchedAt.values());
    const lastPatch = Math.max(...requests.counts.patchedAt.values());
    const reconcileTotal = reconciles.success + reconciles.requeue + reconciles.error;
    console.log(
      `(2) rollout: ${POD_COUNT} pods, maxUnavailable ${String(MAX_UNAVAILABLE)} = ${budget}, kubelet delay ${KUBELET_DELAY_MS} ms, qps/burst ${QPS}/${BURST}, ${WORKERS} workers`,
    );
    console.log(
      `    image change → updatedReadyPods ${POD_COUNT}: ${fmt(rolloutMs / 1000, 2)} s; budget alone: ${waves} waves × ${KUBELET_DELAY_MS} ms = ${fmt(idealMs / 1000, 2)} s; ratio ${fmt(ratio, 2)}`,
    );
    console.log(
      `    budget use: mean ${fmt(meanDown)} unavailable of ${budget} allowed (${fmt((100 * meanDown) / budget)}%); worst ${tracker.worst}; process CPU ${fmt((cpu.user + cpu.system) / 1e6, 1)} s (${fmt((cpu.user + cpu.system) / 1000 / rolloutMs, 2)} cores)`,
    );
    console.log(
      `    timeline: change → first pod patch ${fmt(firstPatch - t0, 0)} ms; last patch at ${fmt((lastPatch - t0) / 1000, 2)} s; last pod ready at ${fmt((lastUp - t0) / 1000, 2)} s; status reported ${fmt(t1 - lastUp, 0)} ms later`,
    );
    console.log(
      `    per pod, patch → new sidecar ready: median ${fmt(percentile(latencies, 50), 0)} ms, p99 ${fmt(percentile(latencies, 99), 0)} ms (kubelet delay ${KUBELET_DELAY_MS} ms); API throughput ${fmt(requests.counts.total / (rolloutMs / 1000), 0)} requests/s, ${fmt((cpu.user + cpu.system) / 1000 / POD_COUNT, 2)} ms CPU per pod`,
    );
    const kinds = [...requests.counts.byKind.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    console.log(
      `(3) reconciles: ${reconcileTotal} (${reconciles.success} done, ${reconciles.requeue} requeued, ${reconciles.error} failed); API requests: ${requests.counts.total} = ${fmt(requests.counts.total / POD_COUNT, 2)} per pod (${kinds}); store events on pods: ${tracker.events}`,
    );
    const eventsCreated = requests.counts.byKind.get('POST events') ?? 0;
    const eventsUpdated = requests.counts.byKind.get('PATCH events') ?? 0;
    // Requests about pods (reads, patches, condition writes) against the rest, which are per round.
    let podRequests = 0;
    for (const [kind, n] of requests.counts.byKind) if (/ pods(\/|$)/.test(kind)) podRequests += n;
    const upgradedPods = Math.max(requests.counts.podPatches.size, 1);
    const perUpgradedPod = podRequests / upgradedPods;
    console.log(
      `(4) cost: ${fmt(perUpgradedPod, 2)} pod requests per upgraded pod ${perUpgradedPod <= 1 ? 'OK' : 'OVER'} (target ≤ 1) + ${requests.counts.total - podRequests} per-round requests (status, events, revisions: ${fmt((requests.counts.total - podRequests) / upgradedPods, 4)} per pod); Events created: ${eventsCreated} (updated ${eventsUpdated} times) for ${requests.counts.podPatches.size} upgraded pods in ${reconcileTotal} reconciles; Event objects in the store: ${api.store.list(EVENTS).items.length}`,
    );
    console.log(
      `check: ${onNewImage}/${POD_COUNT} pods run the new sidecar and are ready; ${patchedOnce} patched once, ${patchedTwice} more than once; at most ${tracker.worst} unavailable (budget ${budget}) → ${ok ? 'OK' : 'WRONG'}`,
    );
    console.log(`load average after: ${loadAverage()}`);
    return ok;
  } finally {
    await controller?.stop();
    await api.close();
    clearTimeout(deadline);
  }
}

const gc = gcFunction();
if (gc === undefined) {
  process.exitCode = await reexec();
} else {
  try {
    process.exitCode = (await run(gc)) ? 0 : 1;
  } catch (err: unknown) {
    console.error(`rollout bench failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  }
}
