/**
 * What `serve` wires only in cluster mode: the KubeConfig, the caches of the cluster that the
 * webhook and the upgrade controller share, and the self-managed certificate. src/cli/serve.ts
 * imports this module only when there is a cluster, because @kubernetes/client-node, which
 * everything here needs, costs about 60 MiB of resident set once loaded and files mode has no
 * use for it.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

import type { SnapshotSource } from '../cache/snapshot.js';
import { createClusterSource } from '../cache/cluster-source.js';
import { Controller } from '../controller/controller.js';
import { createCertificateManager } from '../k8s/certificates.js';
import { shareKeepAliveAgent } from '../k8s/keep-alive.js';
import { withRequestTimeout } from '../k8s/request-timeout.js';
import { SharedCaches } from '../k8s/shared-caches.js';
import { observeApiRequests } from '../k8s/api-metrics.js';
import { loadKubeConfig } from '../k8s/kubeconfig.js';
import type { WebhookConfigurationRef } from '../k8s/webhook-configuration-ref.js';
import { DEFAULT_CERTIFICATE_TIMES } from '../server/cert-plan.js';
import { createClientMetrics } from '../server/client-metrics.js';
import { createControllerMetrics } from '../server/controller-metrics.js';
import type { TlsPair } from '../server/tls.js';
import type { ControllerFlags } from './flags.js';
import type { ShutdownStep } from './shutdown-steps.js';

/**
 * The cluster's KubeConfig, its API requests sharing keep-alive connections, each with a deadline
 * (src/k8s/request-timeout.ts), and counted in `registry` (rest_client_*).
 */
export function clusterKubeConfig(file: string | undefined, registry: Registry): KubeConfig {
  return observeApiRequests(
    withRequestTimeout(shareKeepAliveAgent(loadKubeConfig(file))),
    createClientMetrics(registry),
  );
}

/** The SidecarSets, Namespaces and ControllerRevisions of the cluster, watched once. */
export function sharedCaches(
  kubeConfig: KubeConfig,
  logger: Logger,
  revisionNamespace: string,
): SharedCaches {
  return new SharedCaches({ kubeConfig, logger, revisionNamespace });
}

/** The webhook's SidecarSets, from `caches`. */
export function clusterSource(
  caches: SharedCaches,
  logger: Logger,
  onRelist: () => void,
): SnapshotSource {
  return createClusterSource({ caches, logger, onRelist });
}

/** What callers use of a launched controller; its `stop` also waits for `start` to settle. */
export type LaunchedController = Pick<Controller, 'synced' | 'failing' | 'stop'>;

/**
 * Creates and starts the controller; start-up failures are logged, not thrown. Without `caches`
 * (the webhook's, when both run in one process) it watches its own.
 */
export function launchController(
  kubeConfig: KubeConfig,
  flags: ControllerFlags,
  logger: Logger,
  registry: Registry,
  caches?: SharedCaches,
): LaunchedController {
  const hooks = createControllerMetrics(registry, () => ({
    leading: controller.leading(),
    cachedPods: controller.cachedPods(),
  }));
  const controller = new Controller({
    kubeConfig,
    logger,
    workers: flags.workers,
    qps: flags.qps,
    burst: flags.burst,
    dryRun: flags.dryRun,
    podEvents: flags.podEvents,
    podWebhookScope: {
      configurationName: flags.podWebhookConfiguration,
      enabled: flags.scopePodWebhook,
    },
    namespace: flags.leaderElectionNamespace,
    ...(caches === undefined ? {} : { caches }),
    ...(flags.leaderElect
      ? { leaderElection: { namespace: flags.leaderElectionNamespace, name: flags.leaseName } }
      : {}),
    ...hooks,
  });
  const starting = controller.start().catch((err: unknown) => {
    logger.error({ err }, 'the upgrade controller failed to start');
  });
  return {
    synced: () => controller.synced(),
    failing: () => controller.failing(),
    async stop(stopOptions) {
      await controller.stop(stopOptions);
      await starting;
    },
  };
}

export interface ManagedCertificate {
  kubeConfig: KubeConfig;
  /** The Secret, in `namespace`, that holds it. */
  secretName: string;
  namespace: string;
  webhookConfigurations: readonly WebhookConfigurationRef[];
  dnsNames: string[];
  ipAddresses: string[];
  /** How often the Secret and caBundles are checked (src/k8s/certificates.ts); for tests. */
  resyncMs?: number;
}

/**
 * The CA and serving certificate in a Secret, made, shared by the replicas and renewed by
 * src/k8s/certificates.ts, which also keeps the webhook configurations' caBundle. Resolves with
 * the pair once the Secret is settled; later pairs go to onChange.
 */
export async function manageCertificate(
  where: ManagedCertificate,
  logger: Logger,
  stops: ShutdownStep[],
  onChange: (pair: TlsPair) => void,
): Promise<TlsPair> {
  const { kubeConfig, namespace, secretName } = where;
  let first = true;
  const manager = createCertificateManager({
    kubeConfig,
    namespace,
    secretName,
    webhookConfigurations: where.webhookConfigurations,
    policy: {
      ...DEFAULT_CERTIFICATE_TIMES,
      dnsNames: where.dnsNames,
      ipAddresses: where.ipAddresses,
    },
    logger,
    ...(where.resyncMs === undefined ? {} : { resyncMs: where.resyncMs }),
    onCertificate: (pair) => {
      if (!first) onChange(pair);
    },
  });
  const pair = await manager.ensure();
  first = false;
  logger.info(
    { secret: `${namespace}/${secretName}`, notAfter: pair.notAfter.toISOString() },
    'serving the self-managed certificate',
  );
  manager.start();
  stops.push({ what: 'certificate manager', stop: () => manager.stop() });
  return pair;
}
