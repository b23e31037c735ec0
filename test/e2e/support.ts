/**
 * What the e2e tests share: the real control plane for one test file, and this project installed
 * into it from `manifests/` with its processes authenticated as the manifests' ServiceAccount.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { after, before } from 'node:test';

import { EXAMPLE_COM_ALLOWLIST } from '../support/allow-list.js';
import { eventually } from '../support/eventually.js';
import { ensureDevCertificates } from '../../src/server/tls.js';
import { binariesIn } from '../kube-fixture/binaries.js';
import type { ControlPlane } from '../kube-fixture/control-plane.js';
import { freePorts, startControlPlane } from '../kube-fixture/control-plane.js';
import { findRunc, nodeBinariesIn } from '../node-fixture/binaries.js';
import type { KubeNode } from '../node-fixture/node.js';
import { startNode } from '../node-fixture/node.js';
import type { AuditEvent } from './audit.js';
import { readAudit } from './audit.js';
import { installManifests, webhooksInUse } from './install.js';
import type { SidecarsetProcess } from './processes.js';
import { startSidecarset } from './processes.js';

export interface ControlPlaneFixture {
  /** The running control plane (inside tests and hooks). */
  readonly plane: () => ControlPlane;
  /** The running node (only with `useControlPlane({ node: true })`). */
  readonly node: () => KubeNode;
  /** Runs `cleanup` after the file's tests, before the control plane stops; last deferred first. */
  readonly defer: (cleanup: () => Promise<unknown>) => void;
  /**
   * Our requests received from `from` to `to` (Date.now() values) may be forbidden: a restarted
   * API server answers 403 until its RBAC caches have filled (ControlPlane.restartApiServer).
   */
  readonly forgiveForbidden: (window: { from: number; to: number }) => void;
}

/**
 * A control plane started before the file's tests and stopped after them, once everything deferred
 * has run (our processes and kubelets stop while the API server still answers). The binaries come
 * from KUBE_FIXTURE_BIN (and NODE_FIXTURE_BIN), which `npm run test:e2e` (test/e2e/run.ts) sets
 * after building them. With `node: true`, a whole cluster: the controller-manager, the scheduler
 * and one real node (test/node-fixture), stopped before the control plane.
 */
export function useControlPlane(
  options: { node?: boolean; kubernetes?: string } = {},
): ControlPlaneFixture {
  let plane: ControlPlane | undefined;
  let node: KubeNode | undefined;
  const cleanups: (() => Promise<unknown>)[] = [];
  const forgiven: { from: number; to: number }[] = [];
  before(async () => {
    const dir =
      options.kubernetes === undefined
        ? process.env['KUBE_FIXTURE_BIN']
        : kubernetesBuilds()[options.kubernetes];
    if (dir === undefined) {
      throw new Error(
        `no binaries for Kubernetes ${options.kubernetes ?? 'newest'}: run npm run test:e2e`,
      );
    }
    const binaries = binariesIn(dir);
    plane = await startControlPlane({
      binaries,
      controllers: options.node === true,
      network: options.node === true,
    });
    if (options.node === true) {
      const nodeDir = process.env['NODE_FIXTURE_BIN'];
      const runc = findRunc();
      if (nodeDir === undefined || runc === undefined) {
        throw new Error('NODE_FIXTURE_BIN is not set or runc is missing: run npm run test:e2e');
      }
      node = await startNode({
        plane,
        binaries: nodeBinariesIn(nodeDir, runc),
        kubelet: binaries.kubelet,
        kubeProxy: binaries.kubeProxy,
      });
    }
  });
  after(async () => {
    if (plane === undefined) return;
    try {
      for (const cleanup of cleanups.reverse()) await cleanup();
      await node?.stop();
      await checkOurRequests(plane, forgiven);
    } finally {
      await plane.stop();
    }
  });
  return {
    plane: () => {
      if (plane === undefined) throw new Error('the control plane is not running');
      return plane;
    },
    node: () => {
      if (node === undefined) throw new Error('the node is not running');
      return node;
    },
    defer: (cleanup) => {
      cleanups.push(cleanup);
    },
    forgiveForbidden: (window) => {
      forgiven.push(window);
    },
  };
}

/**
 * RBAC for real: any request of ours that the API server forbade fails the file. Our requests are
 * also kept in E2E_AUDIT_DIR (set by test/e2e/run.ts) for the least-privilege check at the end.
 */
async function checkOurRequests(
  plane: ControlPlane,
  forgiven: readonly { from: number; to: number }[],
): Promise<void> {
  const ours = await readAudit(plane.auditLog, OUR_USER);
  const auditDir = process.env['E2E_AUDIT_DIR'];
  if (auditDir !== undefined) {
    const lines = ours.map((e) => JSON.stringify(e)).join('\n');
    await writeFile(join(auditDir, `${basename(plane.dir)}.jsonl`), lines);
  }
  const receivedAt = (e: AuditEvent): number => Date.parse(e.requestReceivedTimestamp ?? '');
  // RBAC's denials say who cannot do what; other 403s (a resize the node cannot fit) are answers.
  const denied = (e: AuditEvent): boolean =>
    e.responseStatus?.code === 403 && / cannot /.test(e.responseStatus.message ?? '');
  const forbidden = ours.filter(
    (e) => denied(e) && !forgiven.some((w) => receivedAt(e) >= w.from && receivedAt(e) <= w.to),
  );
  assert.deepEqual(
    forbidden.map((e) => `${e.verb} ${e.requestURI}: ${e.responseStatus?.message ?? ''}`),
    [],
    'requests of ours that RBAC forbade',
  );
}

/**
 * The binaries of every Kubernetes version test/e2e/run.ts built (KUBE_FIXTURE_VERSIONS: minor →
 * folder).
 */
export function kubernetesBuilds(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return JSON.parse(env['KUBE_FIXTURE_VERSIONS'] ?? '{}') as Record<string, string>;
}

export const NAMESPACE = 'sidecarset-system';
export const SERVICE_ACCOUNT = 'sidecarset';
/** The user the API server sees for our processes. */
export const OUR_USER = `system:serviceaccount:${NAMESPACE}:${SERVICE_ACCOUNT}`;

export interface Installation {
  /** https://127.0.0.1:PORT, where the webhook configurations send their requests. */
  readonly webhookUrl: string;
  /** A kubeconfig with a token of the manifests' ServiceAccount. */
  readonly kubeconfig: string;
  /** `sidecarset serve` in cluster mode on the webhook's port; resolves once it is ready. */
  serve(extraArgs?: readonly string[]): Promise<SidecarsetProcess>;
  /** `sidecarset controller` as the ServiceAccount. */
  controller(extraArgs?: readonly string[]): Promise<SidecarsetProcess>;
}

/**
 * The flags of our processes as the Deployment in manifests/ runs them, with `kubeconfig`: leader
 * election on, in the webhook's namespace.
 */
export function clusterArgs(kubeconfig: string): string[] {
  return [
    '--kubeconfig',
    kubeconfig,
    '--host',
    '127.0.0.1',
    '--log-level',
    'info',
    '--leader-elect',
    'true',
    '--leader-election-namespace',
    NAMESPACE,
  ];
}

/** Installs the project with its webhooks pointed at `webhook.url`, trusting `webhook.caPem`. */
export type Installer = (
  plane: ControlPlane,
  webhook: { url: string; caPem: string },
) => Promise<void>;

/**
 * Applies `manifests/` (or runs another installer: the chart's) with the webhooks pointed at
 * 127.0.0.1 and the caBundle set, makes a ServiceAccount token for our processes, and returns how
 * to start them. Our certificate is made first, so the caBundle is known before the webhook runs.
 */
export async function install(
  plane: ControlPlane,
  installer: Installer = installManifests,
): Promise<Installation> {
  const [port] = (await freePorts(1)) as [number];
  const certs = await ensureDevCertificates(join(plane.dir, 'webhook-certs'), new Date());
  const webhookUrl = `https://127.0.0.1:${port}`;
  await installer(plane, { url: webhookUrl, caPem: await readFile(certs.caFile, 'utf8') });
  const token = await plane.serviceAccountToken(NAMESPACE, SERVICE_ACCOUNT);
  const kubeconfig = await plane.writeKubeconfig('sidecarset.kubeconfig', token);
  const common = clusterArgs(kubeconfig);
  let webhooksChecked = false;
  return {
    webhookUrl,
    kubeconfig,
    async serve(extraArgs = []) {
      const served = await startSidecarset([
        'serve',
        ...common,
        '--port',
        String(port),
        '--cert',
        certs.certFile,
        '--key',
        certs.keyFile,
        '--metrics-port',
        '0',
        '--patch-pod-metadata-allowlist',
        EXAMPLE_COM_ALLOWLIST,
        ...extraArgs,
      ]);
      const listening = await served.waitForLog((e) => e.msg === 'webhook listening', 'listening');
      const readyz = `${String(listening['metricsUrl'])}/readyz`;
      await eventually(async () => (await fetch(readyz)).status === 200, 'the webhook ready');
      if (!webhooksChecked) {
        await webhooksInUse(plane);
        webhooksChecked = true;
      }
      return served;
    },
    controller: (extraArgs = []) => startSidecarset(['controller', ...common, ...extraArgs]),
  };
}

/** The pod webhook's scope condition (docs/adr/0012-scoped-pod-webhook.md); undefined when none. */
export async function podWebhookScope(plane: ControlPlane): Promise<string | undefined> {
  const got = await plane.kubectl([
    'get',
    'mutatingwebhookconfiguration',
    'sidecarset-mutating-webhook',
    '-o',
    'jsonpath={.webhooks[?(@.name=="mpod.sidecarset.kruise.io")].matchConditions[?(@.name=="sidecarset.kruise.io/scope")].expression}',
  ]);
  assert.equal(got.code, 0, got.stderr);
  return got.stdout === '' ? undefined : got.stdout;
}

/**
 * Waits until the scope the leader wrote names `value` (a new SidecarSet's namespace or label
 * value): a pod created before that skips the webhook and is only reported as missed.
 */
export async function scopeIncludes(plane: ControlPlane, value: string): Promise<void> {
  await eventually(
    async () => (await podWebhookScope(plane))?.includes(JSON.stringify(value)) === true,
    `the pod webhook scope naming ${value}`,
  );
}
