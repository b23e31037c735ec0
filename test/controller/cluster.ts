/**
 * A test cluster: the fake API server and kubelet, and this project's `serve` (webhook + upgrade
 * controller) against it. Pods and SidecarSets are created through the API, so they pass through
 * the webhooks over HTTPS exactly as in a real cluster.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';

import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';

import type { ControllerFlags } from '../../src/cli/flags.js';
import type { LeaderElectionConfig } from '../../src/controller/controller.js';
import { DEFAULT_CONTROLLER_FLAGS } from '../../src/cli/flags.js';
import type { Served } from '../../src/cli/serve.js';
import { startServe } from '../../src/cli/serve.js';
import { parseAllowList } from '../../src/core/validation/patch-metadata-allowlist.js';
import { EXAMPLE_COM_ALLOWLIST } from '../support/allow-list.js';
import type {
  FakeApiServer,
  FakeKubelet,
  JsonObject,
  JsonValue,
  KubeObject,
} from '../fake-apiserver/index.js';
import {
  PODS,
  SIDECARSETS,
  admissionReviewHook,
  startFakeApiServer,
  waitForStore,
} from '../fake-apiserver/index.js';
import { eventually as poll } from '../support/eventually.js';
import { postJson } from '../support/https.js';
import { replaceSidecarSet } from '../support/replace-sidecarset.js';

export interface TestCluster {
  api: FakeApiServer;
  kubelet: FakeKubelet;
  served: Served;
  core: CoreV1Api;
  custom: CustomObjectsApi;
  kubeconfigFile: string;
  /** Sends an AdmissionReview to one of our webhook paths. */
  send: (path: string) => (review: JsonObject) => Promise<JsonValue>;
  /** What the process has logged so far (with `logLevel`; empty otherwise). */
  logs: () => string;
  close(): Promise<void>;
}

export interface ClusterOptions {
  controller?: boolean;
  flags?: Partial<ControllerFlags>;
  kubeletDelayMs?: number;
  /** Keep the process's log at this level, for `logs()`. */
  logLevel?: string;
  /** --patch-pod-metadata-allowlist; default EXAMPLE_COM_ALLOWLIST, null: none. */
  patchPodMetadataAllowlist?: string | null;
}

export async function startTestCluster(options: ClusterOptions = {}): Promise<TestCluster> {
  // sidecarset-system: where serve keeps the SidecarSets' ControllerRevisions (as deployed).
  const api = await startFakeApiServer({
    namespaces: ['default', 'kube-system', 'kube-public', 'kube-node-lease', 'sidecarset-system'],
  });
  const kubelet = api.startKubelet({ delayMs: options.kubeletDelayMs ?? 10 });
  const dir = await mkdtemp(join(tmpdir(), 'cluster-'));
  const stdout = new PassThrough();
  let logged = '';
  if (options.logLevel !== undefined) {
    stdout.on('data', (chunk: Buffer) => {
      logged += chunk.toString();
    });
  } else if (process.env['TEST_LOG_LEVEL']) {
    stdout.pipe(process.stdout);
  }
  const allowList =
    options.patchPodMetadataAllowlist === undefined
      ? EXAMPLE_COM_ALLOWLIST
      : options.patchPodMetadataAllowlist;
  const kubeconfigFile = join(dir, 'kubeconfig');
  await writeFile(kubeconfigFile, api.kubeConfig().exportConfig());
  const served = await startServe(
    {
      kubeconfig: kubeconfigFile,
      port: 0,
      metricsPort: 0,
      host: '127.0.0.1',
      logLevel: options.logLevel ?? process.env['TEST_LOG_LEVEL'] ?? 'silent',
      devCertDir: dir,
      controller: options.controller ?? true,
      controllerOptions: { ...DEFAULT_CONTROLLER_FLAGS, ...options.flags },
      ...(allowList === null ? {} : { patchPodMetadataAllowlist: parseAllowList(allowList) }),
    },
    {
      stdin: new PassThrough(),
      stdout,
      stderr: new PassThrough(),
    },
  );
  const ca = await readFile(join(dir, 'ca.crt'), 'utf8');
  const send =
    (path: string) =>
    async (review: JsonObject): Promise<JsonValue> =>
      (await postJson(`${served.url}${path}`, review, ca)).json as JsonValue;
  api.control.addAdmissionHook(
    admissionReviewHook(
      send('/mutate-pods'),
      (a) => a.resource.resource === 'pods' && a.operation === 'CREATE',
    ),
  );
  api.control.addAdmissionHook(
    admissionReviewHook(send('/mutate-sidecarsets'), (a) => a.resource.resource === 'sidecarsets'),
  );
  api.control.addAdmissionHook(
    admissionReviewHook(
      send('/validate-sidecarsets'),
      (a) => a.resource.resource === 'sidecarsets',
    ),
  );
  const kc = api.kubeConfig();
  return {
    api,
    kubelet,
    served,
    core: kc.makeApiClient(CoreV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    kubeconfigFile,
    send,
    logs: () => logged,
    async close() {
      await served.close();
      await api.close();
    },
  };
}

/** Leader election on the Lease default/sidecarset-controller, timed for tests (takeover in ~2 s). */
export function quickLeaderElection(identity: string): LeaderElectionConfig {
  return {
    namespace: 'default',
    name: 'sidecarset-controller',
    identity,
    leaseDurationMs: 2000,
    renewDeadlineMs: 1500,
    retryPeriodMs: 200,
  };
}

/** The process's Prometheus metrics, as text. */
export async function metrics(cluster: TestCluster): Promise<string> {
  const response = await fetch(`${cluster.served.metricsUrl ?? ''}/metrics`);
  return response.text();
}

/** How many reconciles the controller has finished, from its metrics endpoint. */
export async function reconcileCount(cluster: TestCluster): Promise<number> {
  const text = await metrics(cluster);
  let count = 0;
  for (const m of text.matchAll(/^sidecarset_controller_reconciles_total\{[^}]*\} (\d+)$/gm)) {
    count += Number(m[1]);
  }
  return count;
}

/** Resolves once `check` holds, trying every 20 ms. */
export function eventually(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  return poll(check, what, timeoutMs, 20);
}

/** Resolves once the process has logged `text` (a cluster started with `logLevel`). */
export async function waitForLog(cluster: TestCluster, text: string): Promise<void> {
  await eventually(() => Promise.resolve(cluster.logs().includes(text)), `"${text}" in the log`);
}

/** Runs `fn` on a fresh cluster and always tears it down. */
export async function withCluster(
  fn: (cluster: TestCluster) => Promise<void>,
  options: ClusterOptions = {},
): Promise<void> {
  const cluster = await startTestCluster(options);
  try {
    await fn(cluster);
  } finally {
    await cluster.close();
  }
}

export function sidecarSet(name: string, spec: JsonObject): JsonObject {
  return { apiVersion: 'apps.kruise.io/v1beta1', kind: 'SidecarSet', metadata: { name }, spec };
}

export async function createSidecarSet(cluster: TestCluster, body: JsonObject): Promise<void> {
  await cluster.custom.createClusterCustomObject({
    group: 'apps.kruise.io',
    version: 'v1beta1',
    plural: 'sidecarsets',
    body,
  });
}

/**
 * Read, change, replace: an update through the API (and so through the webhooks), read again and
 * retried when the controller wrote the status in between (409), as kubectl edit would be.
 */
export function updateSidecarSet(
  cluster: TestCluster,
  name: string,
  change: (spec: Record<string, unknown>) => void,
): Promise<void> {
  return replaceSidecarSet(cluster.custom, name, change);
}

export async function createPods(
  cluster: TestCluster,
  count: number,
  make: (i: number) => JsonObject,
): Promise<void> {
  for (let i = 0; i < count; i++) {
    await cluster.core.createNamespacedPod({ namespace: 'default', body: make(i) });
  }
}

export function nginxPod(
  name: string,
  labels: Record<string, string> = { app: 'nginx' },
): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels },
    spec: {
      containers: [
        {
          name: 'nginx',
          image: 'nginx:1.27',
          env: [{ name: 'TZ', value: 'Asia/Shanghai' }],
          volumeMounts: [{ name: 'nginx-log', mountPath: '/var/log/nginx' }],
        },
      ],
      volumes: [{ name: 'nginx-log', emptyDir: {} }],
    },
  };
}

export function pods(cluster: TestCluster): KubeObject[] {
  return cluster.api.store.list(PODS, { namespace: 'default' }).items;
}

export function status(cluster: TestCluster, name: string): Record<string, unknown> | undefined {
  const obj = cluster.api.store.get(SIDECARSETS, '', name);
  const s = obj?.['status'];
  return s !== null && typeof s === 'object' && !Array.isArray(s) ? s : undefined;
}

export function container(pod: KubeObject, name: string): Record<string, unknown> | undefined {
  const spec = pod['spec'] as { containers?: Record<string, unknown>[] } | undefined;
  return spec?.containers?.find((c) => c['name'] === name);
}

export function containerStatus(
  pod: KubeObject,
  name: string,
): Record<string, unknown> | undefined {
  const st = pod['status'] as { containerStatuses?: Record<string, unknown>[] } | undefined;
  return st?.containerStatuses?.find((c) => c['name'] === name);
}

export function isReady(pod: KubeObject): boolean {
  const st = pod['status'] as { conditions?: { type: string; status: string }[] } | undefined;
  return st?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

export async function waitFor(
  cluster: TestCluster,
  check: () => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  await waitForStore(cluster.api.store, () => (check() ? true : undefined), { what, timeoutMs });
}

/** Resolves once an Event with this reason has been created (the request log, not the store). */
export async function eventSent(cluster: TestCluster, reason: string): Promise<void> {
  await cluster.api.control.waitForRequest(
    (r) =>
      r.method === 'POST' &&
      r.resource === 'events' &&
      (r.body as { reason?: string } | undefined)?.reason === reason,
    { timeoutMs: 20_000, what: `an event ${reason}` },
  );
}

/**
 * The SidecarSet "agent" (agent:1, selecting app=nginx) with `strategy`, and `count` nginx pods
 * `web-00`, `web-01`, … (with extra `labels`), injected and ready.
 */
export async function setUpAgent(
  cluster: TestCluster,
  count: number,
  strategy: JsonObject,
  labels?: (i: number) => Record<string, string>,
): Promise<void> {
  await createSidecarSet(
    cluster,
    sidecarSet('agent', {
      selector: { matchLabels: { app: 'nginx' } },
      containers: [{ name: 'agent', image: 'agent:1' }],
      updateStrategy: strategy,
    }),
  );
  await createPods(cluster, count, (i) =>
    nginxPod(`web-${String(i).padStart(2, '0')}`, { app: 'nginx', ...labels?.(i) }),
  );
  await waitFor(cluster, () => status(cluster, 'agent')?.['readyPods'] === count, 'pods ready');
}
