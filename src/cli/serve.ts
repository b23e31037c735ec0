/**
 * `sidecarset serve`: the composition root of the webhook. Everything is wired here and nowhere
 * else: logger, SidecarSet cache, certificates, HTTPS app, metrics port, graceful shutdown.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import type { Logger } from 'pino';

import { SidecarSetError } from '../core/errors.js';
import { INSTALLATION } from '../core/api/installation-names.js';
import type { JobSidecarMode } from '../core/inject/job-sidecars.js';
import type { PatchMetadataAllowList } from '../core/validation/patch-metadata-allowlist.js';
import { createFilesSource } from '../cache/files-source.js';
import type { SnapshotSource } from '../cache/snapshot.js';
import type { WebhookConfigurationRef } from '../k8s/webhook-configuration-ref.js';
import { buildApp, buildHealthApp } from '../server/app.js';
import { writeLinesTogether } from '../server/log-batching.js';
import type { ShutdownStep } from './shutdown-steps.js';
import { runShutdownSteps } from './shutdown-steps.js';
import type { ServerLimits } from '../server/http-server.js';
import { DEFAULT_SERVER_LIMITS, replaceCertificate } from '../server/http-server.js';
import { serviceDnsNames } from '../server/cert-plan.js';
import type { WebhookMetrics } from '../server/metrics.js';
import { createMetrics } from '../server/metrics.js';
import type { TlsPair, TlsWatch } from '../server/tls.js';
import { ensureDevCertificates, readTlsPair, watchTlsPair } from '../server/tls.js';
import type { Io } from './io.js';
import { UsageError, closeOnSignal } from './io.js';
import { DEFAULT_CONTROLLER_FLAGS } from './flags.js';
import type { ControllerFlags } from './flags.js';
import type * as ClusterWiring from './serve-cluster.js';
import type { LaunchedController } from './serve-cluster.js';
import type { SharedCaches } from '../k8s/shared-caches.js';

export interface ServeOptions {
  sidecarsets?: string;
  namespaces?: string;
  kubeconfig?: string;
  port: number;
  host: string;
  cert?: string;
  key?: string;
  metricsPort?: number;
  logLevel: string;
  devCertDir: string;
  /** Run the upgrade controller too (cluster mode only); default true. */
  controller?: boolean;
  controllerOptions?: ControllerFlags;
  /** Seconds to receive a request (TLS handshake, headers, body); DEFAULT_SERVER_LIMITS. */
  readTimeout?: number;
  maxConnections?: number;
  /** Request-body bytes received at once, all connections together. */
  maxInflightBodyBytes?: number;
  /** Seconds a cache may fail to list or watch before /readyz answers 503; 0 never. */
  maxCacheStaleness?: number;
  /**
   * Self-managed certificate (cluster mode without --cert/--key): the Secret, in the webhook's
   * namespace (--leader-election-namespace), that holds it. Default: DEFAULT_CERT_SECRET when
   * running in a pod (in-cluster config), else none (the development certificate).
   */
  certSecret?: string;
  /** Whose caBundle to keep; default DEFAULT_WEBHOOK_CONFIGURATIONS. */
  webhookConfigurations?: WebhookConfigurationRef[];
  /** Names in the self-managed certificate; default the two Services' (serviceDnsNames). */
  certDnsNames?: string[];
  certIpAddresses?: string[];
  /** How often the Secret and caBundles are checked (src/k8s/certificates.ts); for tests. */
  certResyncMs?: number;
  /** Sidecars that stop with a Job: native sidecars, or containers (docs/adr/0021-job-sidecars.md). */
  jobSidecars?: JobSidecarMode;
  /** What patchPodMetadata may write (docs/security.md); none: nothing. */
  patchPodMetadataAllowlist?: PatchMetadataAllowList;
}

export const DEFAULT_CERT_SECRET = 'sidecarset-webhook-certs';
export const DEFAULT_WEBHOOK_CONFIGURATIONS: readonly WebhookConfigurationRef[] = [
  { kind: 'mutating', name: INSTALLATION.mutatingWebhookConfiguration },
  { kind: 'validating', name: INSTALLATION.validatingWebhookConfiguration },
  { kind: 'crd', name: INSTALLATION.crd },
];

export interface Served {
  /** Addresses actually bound (port 0 picks a free port). */
  url: string;
  metricsUrl?: string;
  close(): Promise<void>;
}

/**
 * Starts everything; resolves once the webhook listens. When any step fails, what was already
 * started (informers, controller, certificate watcher, listeners) is stopped before the error is
 * thrown, so that nothing keeps the process alive.
 */
export async function startServe(options: ServeOptions, io: Io): Promise<Served> {
  if ((options.cert === undefined) !== (options.key === undefined)) {
    throw new UsageError('--cert and --key go together');
  }
  if (options.sidecarsets === undefined && options.namespaces !== undefined) {
    throw new UsageError(
      '--namespaces needs --sidecarsets (files mode); in a cluster, Namespaces are watched',
    );
  }
  const logger = pino({ level: options.logLevel, base: { service: 'sidecarset' } }, io.stdout);
  // Stopped in reverse order of start.
  const stops: ShutdownStep[] = [];
  const stopAll = (): Promise<void> => runShutdownSteps(stops, logger);
  try {
    // Admission lines of one event-loop turn reach stdout in one write.
    const served = await startAll(options, logger, writeLinesTogether(io.stdout), stops);
    return { ...served, close: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

async function startAll(
  options: ServeOptions,
  logger: Logger,
  beforeLogLine: () => void,
  stops: ShutdownStep[],
): Promise<Omit<Served, 'close'>> {
  // The cache-size gauge reads the source lazily, at scrape time.
  const metrics = createMetrics(() => source);
  const cluster = await clusterOf(options, metrics, logger);
  const source = createSource(options, cluster, logger, metrics);
  stops.push({ what: 'SidecarSet cache', stop: () => source.stop() });
  const controller = startControllerIfWanted(options, cluster, logger, metrics);
  if (controller) stops.push({ what: 'controller', stop: () => controller.stop() });
  // Certificate changes before the app exists are already in tls.pair.
  let swap: (pair: TlsPair) => void = () => undefined;
  const tls = await loadCertificate(options, cluster, logger, stops, (pair) => {
    swap(pair);
  });
  metrics.certificateExpiry.set(tls.pair.notAfter.getTime() / 1000);

  const d = DEFAULT_SERVER_LIMITS;
  const limits: ServerLimits = {
    readTimeoutSeconds: options.readTimeout ?? d.readTimeoutSeconds,
    maxConnections: options.maxConnections ?? d.maxConnections,
    maxInflightBodyBytes: options.maxInflightBodyBytes ?? d.maxInflightBodyBytes,
  };
  const app = buildApp({
    source,
    logger,
    metrics,
    now: () => new Date(),
    random: Math.random,
    ...(options.jobSidecars === undefined ? {} : { jobSidecars: options.jobSidecars }),
    ...(options.patchPodMetadataAllowlist === undefined
      ? {}
      : { patchMetadataAllowList: options.patchPodMetadataAllowlist }),
    https: { cert: tls.pair.cert, key: tls.pair.key },
    limits,
    ...(options.maxCacheStaleness === undefined
      ? {}
      : { maxCacheStalenessSeconds: options.maxCacheStaleness }),
    beforeLogLine,
  });
  swap = (pair) => {
    swapCertificate(app, pair, metrics, logger);
  };
  const certWatch = watchCertificate(options, swap, logger);
  if (certWatch) stops.push({ what: 'certificate file watch', stop: () => certWatch.close() });

  // Files mode fails fast on bad input; cluster mode serves /readyz 503 until the informers sync.
  if (options.sidecarsets !== undefined) await source.start();
  else
    source.start().catch((err: unknown) => {
      logger.error({ err }, 'SidecarSet cache failed');
    });

  stops.push({ what: 'webhook server', stop: () => app.close() });
  const url = await app.listen({ port: options.port, host: options.host });
  let metricsUrl: string | undefined;
  if (options.metricsPort !== undefined) {
    const metricsApp = buildHealthApp({
      source,
      logger,
      metrics,
      limits,
      ...(options.maxCacheStaleness === undefined
        ? {}
        : { maxCacheStalenessSeconds: options.maxCacheStaleness }),
    });
    stops.push({ what: 'metrics server', stop: () => metricsApp.close() });
    metricsUrl = await metricsApp.listen({ port: options.metricsPort, host: options.host });
  }
  const port = new URL(url).port;
  logger.info(
    { url, metricsUrl, mode: options.sidecarsets ? 'files' : 'cluster', limits },
    'webhook listening',
  );
  if (tls.caFile !== undefined) {
    logger.info(
      `try it: curl --cacert ${tls.caFile} -H 'Content-Type: application/json' --data @examples/admission-review.json https://localhost:${port}/mutate-pods`,
    );
  }
  return { url, ...(metricsUrl ? { metricsUrl } : {}) };
}

/** `serve` from the command line: starts, then shuts down gracefully on SIGTERM/SIGINT. */
export async function runServe(options: ServeOptions, io: Io): Promise<number> {
  const served = await startServe(options, io);
  closeOnSignal(io, 'finishing requests in flight, then stopping', () => served.close());
  return 0;
}

/**
 * Cluster mode: the KubeConfig, the caches the webhook and the controller share, and the module
 * that wires what uses them (src/cli/serve-cluster.ts).
 */
interface Cluster {
  kubeConfig: KubeConfig;
  caches: SharedCaches;
  wiring: typeof ClusterWiring;
}

/** Undefined in files mode, which so never loads @kubernetes/client-node. */
async function clusterOf(
  options: ServeOptions,
  metrics: WebhookMetrics,
  logger: Logger,
): Promise<Cluster | undefined> {
  if (options.sidecarsets !== undefined) return undefined;
  const wiring = await import('./serve-cluster.js');
  const kubeConfig = wiring.clusterKubeConfig(options.kubeconfig, metrics.registry);
  const { leaderElectionNamespace } = options.controllerOptions ?? DEFAULT_CONTROLLER_FLAGS;
  const caches = wiring.sharedCaches(kubeConfig, logger, leaderElectionNamespace);
  return { kubeConfig, caches, wiring };
}

function createSource(
  options: ServeOptions,
  cluster: Cluster | undefined,
  logger: Logger,
  metrics: WebhookMetrics,
): SnapshotSource {
  if (cluster === undefined) {
    return createFilesSource({
      sidecarSets: options.sidecarsets ?? '',
      ...(options.namespaces ? { namespaces: options.namespaces } : {}),
      logger,
      onReload: (ok) => {
        metrics.reloads.inc({ result: ok ? 'success' : 'failure' });
      },
    });
  }
  return cluster.wiring.clusterSource(cluster.caches, logger, () => {
    metrics.reloads.inc({ result: 'relist' });
  });
}

/** The upgrade controller beside the webhook: on by default in cluster mode, off in files mode. */
function startControllerIfWanted(
  options: ServeOptions,
  cluster: Cluster | undefined,
  logger: Logger,
  metrics: WebhookMetrics,
): LaunchedController | undefined {
  if (options.controller === false) return undefined;
  if (cluster === undefined) {
    logger.info('files mode: the upgrade controller needs a cluster and is not started');
    return undefined;
  }
  return cluster.wiring.launchController(
    cluster.kubeConfig,
    options.controllerOptions ?? DEFAULT_CONTROLLER_FLAGS,
    logger,
    metrics.registry,
    cluster.caches,
  );
}

/** --cert and --key at start: a pair that cannot be used is the user's input, not a bug. */
async function readUserTlsPair(cert: string, key: string): Promise<TlsPair> {
  try {
    return await readTlsPair(cert, key);
  } catch (err) {
    throw new SidecarSetError(
      'SI_ERR_BAD_INPUT',
      `--cert ${cert} and --key ${key} cannot be used: ${err instanceof Error ? err.message : String(err)}`,
      400,
    );
  }
}

async function loadCertificate(
  options: ServeOptions,
  cluster: Cluster | undefined,
  logger: Logger,
  stops: ShutdownStep[],
  onChange: (pair: TlsPair) => void,
): Promise<{ pair: TlsPair; caFile?: string }> {
  if (options.cert !== undefined && options.key !== undefined) {
    return { pair: await readUserTlsPair(options.cert, options.key) };
  }
  // A pod's client-node config is named inClusterContext (KubeConfig.loadFromCluster).
  const inCluster = cluster?.kubeConfig.getCurrentContext() === 'inClusterContext';
  const secret = options.certSecret ?? (inCluster ? DEFAULT_CERT_SECRET : undefined);
  if (cluster !== undefined && secret !== undefined && secret !== '') {
    const namespace = (options.controllerOptions ?? DEFAULT_CONTROLLER_FLAGS)
      .leaderElectionNamespace;
    const where = {
      kubeConfig: cluster.kubeConfig,
      secretName: secret,
      namespace,
      webhookConfigurations: options.webhookConfigurations ?? DEFAULT_WEBHOOK_CONFIGURATIONS,
      dnsNames: options.certDnsNames ?? [
        ...serviceDnsNames(INSTALLATION.service, namespace),
        ...serviceDnsNames(INSTALLATION.conversionService, namespace),
      ],
      ipAddresses: options.certIpAddresses ?? [],
      ...(options.certResyncMs === undefined ? {} : { resyncMs: options.certResyncMs }),
    };
    return { pair: await cluster.wiring.manageCertificate(where, logger, stops, onChange) };
  }
  const dev = await ensureDevCertificates(options.devCertDir, new Date());
  logger.warn(
    { ca: dev.caFile, cert: dev.certFile, reused: dev.reused },
    'no --cert/--key: serving a development certificate for localhost (not for clusters)',
  );
  return { pair: await readTlsPair(dev.certFile, dev.keyFile), caFile: dev.caFile };
}

/** New connections get the new certificate; connections already open keep theirs. */
function swapCertificate(
  app: FastifyInstance,
  pair: TlsPair,
  metrics: WebhookMetrics,
  logger: Logger,
): void {
  replaceCertificate(app.server, pair);
  metrics.certificateExpiry.set(pair.notAfter.getTime() / 1000);
  logger.info({ notAfter: pair.notAfter.toISOString() }, 'serving certificate reloaded');
}

function watchCertificate(
  options: ServeOptions,
  onChange: (pair: TlsPair) => void,
  logger: Logger,
): TlsWatch | undefined {
  if (options.cert === undefined || options.key === undefined) return undefined;
  return watchTlsPair(options.cert, options.key, {
    onChange,
    onError: (err) => {
      logger.error(
        { err: messageOf(err) },
        'cannot reload the serving certificate; keeping the current one',
      );
    },
    onPending: (err) => {
      logger.debug(
        { err: messageOf(err) },
        'certificate files changed; waiting for a matching pair',
      );
    },
  });
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
