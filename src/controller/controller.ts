/**
 * The upgrade controller, assembled: caches (reflectors over SidecarSets, Namespaces and slim
 * pods), a keyed work queue, leader election, and reconcile. Every replica keeps its caches warm;
 * only the leader runs the queue, so a takeover starts from a complete cache at once.
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { CoreV1Api } from '@kubernetes/client-node';
import type { Logger } from 'pino';

import type { FailingCache } from '../cache/snapshot.js';
import type { Pod } from '../core/api/k8s-types.js';
import type { SidecarSet } from '../core/api/sidecarset-types.js';
import type { CachedNamespace } from '../k8s/collections.js';
import {
  NAMESPACES_PATH,
  SIDECARSETS_PATH,
  cachedNamespace,
  listNamespaces,
  listSidecarSets,
} from '../k8s/collections.js';
import type { LeaderElection } from '../k8s/leader-election.js';
import { defaultIdentity, startLeaderElection } from '../k8s/leader-election.js';
import { createKubeWriter } from '../k8s/kube-writer.js';
import type { Reflector } from '../k8s/reflector.js';
import { createReflector, objectKey } from '../k8s/reflector.js';
import { failingCaches } from '../k8s/failing-caches.js';
import type { StoredRevision } from '../core/revisions/history.js';
import {
  DEFAULT_REVISION_NAMESPACE,
  createRevisionReflector,
  createRevisionWriter,
  revisionsOf,
} from '../k8s/revisions.js';
import { slimPod } from '../k8s/slim-pod.js';
import type { WebhookScope } from '../core/scope/webhook-scope.js';
import { createScopeWriter } from '../k8s/webhook-scope-writer.js';
import { createUpgradeExpectations } from './expectations.js';
import { createPodIndex } from './pod-index.js';
import type { QueueMetrics } from './queue.js';
import { WorkQueue } from './queue.js';
import { createTokenBucket } from './rate-limiter.js';
import type { ReconcileDeps } from './reconcile.js';
import { reconcileSidecarSet } from './reconcile.js';
import { createMissedPodsScanner } from './missed-pods.js';
import { createScopeKeeper } from './scope-keeper.js';
import { dryRunRevisionWriter, registerLatestRevision } from './revisions.js';
import type { ClusterWriter, ControllerView, RoundObserver } from './ports.js';
import { dryRunWriter } from './ports.js';

export interface LeaderElectionConfig {
  namespace: string;
  name: string;
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export interface ControllerOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  /** Reconciles of different SidecarSets run in parallel up to this (default 3, as OpenKruise). */
  workers?: number;
  /** Every SidecarSet is reconciled at least this often (default 5 minutes). */
  resyncMs?: number;
  /** API writes per second and burst (default 20 / 30). */
  qps?: number;
  burst?: number;
  /** Where the SidecarSets' ControllerRevisions live (default sidecarset-system). */
  namespace?: string;
  /** Without it, this process reconciles as soon as its caches have synced. */
  leaderElection?: LeaderElectionConfig;
  /** Plan and log, write nothing, send no events. */
  dryRun?: boolean;
  /** Events on each upgraded pod (default false); the SidecarSet's own events are always sent. */
  podEvents?: boolean;
  now?: () => Date;
  /** Replaces the client-node writer (tests). */
  writer?: ClusterWriter;
  /**
   * Called when leadership starts (true) or ends (false); at the end, no round of that leadership
   * reports to `observer` or `onMissedPods` any more.
   */
  onLeading?: (leading: boolean) => void;
  /** Called after each reconcile with its outcome and how long it took. */
  onReconcile?: (outcome: 'success' | 'requeue' | 'error', seconds: number) => void;
  /** Told what each round found and wrote. */
  observer?: RoundObserver;
  /** How often pods are checked for missed injections (default 30 s; src/controller/missed-pods.ts). */
  missedPodsResyncMs?: number;
  /** The missed pods of each SidecarSet after each check (the metric). */
  onMissedPods?: (counts: ReadonlyMap<string, number>) => void;
  /** Keep the pod webhook's scope (docs/adr/0012-scoped-pod-webhook.md); not in a dry run. */
  podWebhookScope?: PodWebhookScopeConfig;
  /** The work queue's metrics (depth, adds, retries, work duration). */
  queueMetrics?: QueueMetrics;
}

export interface PodWebhookScopeConfig {
  /** The MutatingWebhookConfiguration holding the pod webhook. */
  configurationName: string;
  /** false: remove a scope an earlier run wrote, and keep none. */
  enabled: boolean;
  resyncMs?: number;
  onWritten?: (scope: WebhookScope | undefined) => void;
}

export interface Controller {
  /** Starts the caches and leader election; resolves once the caches have synced. */
  start(): Promise<void>;
  /** Stops reconciling and the caches; `release: false` keeps the Lease, as a crash would. */
  stop(options?: { release?: boolean }): Promise<void>;
  synced(): boolean;
  /** The caches not current now because their list or watch fails. */
  failing(): FailingCache[];
  leading(): boolean;
  cachedPods(): number;
}

export function createController(options: ControllerOptions): Controller {
  const log = options.logger.child({ component: 'controller' });
  const now = options.now ?? (() => new Date());
  const core = options.kubeConfig.makeApiClient(CoreV1Api);
  const pods = createPodIndex();
  const expectations = createUpgradeExpectations();
  let queue: WorkQueue | undefined;
  let leading = false;
  const enqueue = (names: Iterable<string>): void => {
    for (const name of names) queue?.add(name);
  };
  const scopeConfig = options.dryRun ? undefined : options.podWebhookScope;
  const scopeWriter =
    scopeConfig &&
    createScopeWriter({
      kubeConfig: options.kubeConfig,
      configurationName: scopeConfig.configurationName,
      logger: log,
    });
  const scopeKeeper =
    scopeConfig &&
    scopeWriter &&
    createScopeKeeper({
      writer: scopeWriter,
      sidecarSets: () => sidecarSets.list(),
      enabled: scopeConfig.enabled,
      logger: log,
      ...(scopeConfig.resyncMs === undefined ? {} : { resyncMs: scopeConfig.resyncMs }),
      ...(scopeConfig.onWritten === undefined ? {} : { onWritten: scopeConfig.onWritten }),
    });

  const sidecarSets: Reflector<SidecarSet> = createReflector({
    kubeConfig: options.kubeConfig,
    path: SIDECARSETS_PATH,
    list: listSidecarSets(options.kubeConfig),
    transform: withoutManagedFields,
    logger: log,
    handlers: {
      onAdd: (ss) => {
        scopeKeeper?.changed();
        missedPods.changed();
        enqueue([ss.metadata.name ?? '']);
      },
      // Spec and annotation changes only (the health gate's settings and resume are
      // annotations): our own status writes must not trigger another round.
      onUpdate: (old, ss) => {
        if (old.metadata.generation !== ss.metadata.generation) {
          scopeKeeper?.changed();
          missedPods.changed();
        }
        if (
          old.metadata.generation !== ss.metadata.generation ||
          !sameAnnotations(old.metadata.annotations, ss.metadata.annotations)
        ) {
          enqueue([ss.metadata.name ?? '']);
        }
      },
      onDelete: (ss) => {
        scopeKeeper?.changed();
        // The next check drops the deleted SidecarSet's sidecarset_missed_pods series.
        missedPods.changed();
        enqueue([ss.metadata.name ?? '']);
      },
    },
  });
  const namespaces: Reflector<CachedNamespace> = createReflector({
    kubeConfig: options.kubeConfig,
    path: NAMESPACES_PATH,
    list: listNamespaces(options.kubeConfig),
    transform: cachedNamespace,
    logger: log,
    handlers: {
      onUpdate: () => {
        enqueue(sidecarSetsWithNamespaceRules());
      },
      onAdd: () => {
        enqueue(sidecarSetsWithNamespaceRules());
      },
      onDelete: () => {
        enqueue(sidecarSetsWithNamespaceRules());
      },
    },
  });
  // The slim pod holds only what planning reads, so any change to it is worth a reconcile.
  const podCache: Reflector<Pod> = createReflector({
    kubeConfig: options.kubeConfig,
    path: '/api/v1/pods',
    list: (params) => core.listPodForAllNamespaces(params),
    transform: (raw: unknown) => slimPod(raw),
    logger: log,
    handlers: {
      onAdd: (pod) => {
        missedPods.changed();
        enqueue(pods.upsert(keyOf(pod), pod));
      },
      onUpdate: (old, pod) => {
        enqueue(pods.upsert(keyOf(pod), pod, old));
      },
      onDelete: (pod) => {
        expectations.podDeleted(keyOf(pod));
        enqueue(pods.remove(keyOf(pod), pod));
      },
    },
  });

  const revisionNamespace = options.namespace ?? DEFAULT_REVISION_NAMESPACE;
  const revisions: Reflector<StoredRevision> = createRevisionReflector({
    kubeConfig: options.kubeConfig,
    namespace: revisionNamespace,
    logger: log,
  });

  function sidecarSetsWithNamespaceRules(): string[] {
    return sidecarSets
      .list()
      .filter((ss) => ss.spec.namespaceSelector !== undefined || ss.spec.namespace)
      .map((ss) => ss.metadata.name ?? '');
  }

  const view: ControllerView = {
    sidecarSet: (name) => sidecarSets.get(objectKey(undefined, name)),
    podsInjectedBy: (name) => pods.podsOf(name),
    namespaces: { get: (name) => namespaces.get(objectKey(undefined, name))?.labels },
  };
  const realWriter = options.writer ?? createKubeWriter(options.kubeConfig);
  const writer = options.dryRun
    ? dryRunWriter(realWriter, (msg, fields) => {
        log.info(fields, msg);
      })
    : realWriter;
  const revisionWriter = options.dryRun
    ? dryRunRevisionWriter((msg, fields) => {
        log.info(fields, msg);
      })
    : createRevisionWriter(options.kubeConfig, revisionNamespace);
  const missedPods = createMissedPodsScanner({
    sidecarSets: () => sidecarSets.list(),
    pods: () => podCache.list(),
    namespaces: view.namespaces,
    webhookSelectors: () => scopeWriter?.webhookSelectors() ?? {},
    writer,
    logger: log,
    ...(options.missedPodsResyncMs === undefined ? {} : { resyncMs: options.missedPodsResyncMs }),
    ...(options.onMissedPods === undefined ? {} : { onCounts: options.onMissedPods }),
  });
  const bucket = createTokenBucket({ qps: options.qps ?? 20, burst: options.burst ?? 30 });
  const deps: ReconcileDeps = {
    view,
    writer,
    expectations,
    inFlight: new Map(),
    takeToken: (signal) => bucket.take(signal),
    now,
    logger: log,
    reported: new Map(),
    podEvents: options.podEvents ?? false,
    ...(options.observer === undefined ? {} : { observer: options.observer }),
    revisions: (name) => revisionsOf(revisions, name),
    registerRevision: (ss, matched) =>
      registerLatestRevision(
        ss,
        matched,
        revisionsOf(revisions, ss.metadata.name ?? ''),
        revisionWriter,
        log.child({ sidecarSet: ss.metadata.name }),
      ),
  };

  function lead(signal: AbortSignal): void {
    leading = true;
    options.onLeading?.(true);
    log.info('leading: reconciling SidecarSets');
    const q = new WorkQueue({
      workers: options.workers ?? 3,
      logger: log,
      resyncMs: options.resyncMs ?? 5 * 60_000,
      keys: () => sidecarSets.list().map((ss) => ss.metadata.name ?? ''),
      ...(options.queueMetrics === undefined ? {} : { metrics: options.queueMetrics }),
      process: async (key, queueSignal) => {
        // A process frozen past its renew deadline (SIGSTOP, a long pause) may run this before the
        // election's deadline timer: isLeader() reads the clock and steps down first, so the
        // round writes nothing (docs/adr/0016-leader-only-metrics.md).
        election?.isLeader();
        const either = AbortSignal.any([signal, queueSignal]);
        const started = performance.now();
        const seconds = (): number => (performance.now() - started) / 1000;
        try {
          const result = await reconcileSidecarSet(key, deps, either);
          const outcome = result.requeueAfterMs === undefined ? 'success' : 'requeue';
          options.onReconcile?.(outcome, seconds());
          return result;
        } catch (err) {
          // A round cut short by the end of leadership is not a failed reconcile.
          if (!either.aborted) options.onReconcile?.('error', seconds());
          throw err;
        }
      },
    });
    queue = q;
    enqueue(sidecarSets.list().map((ss) => ss.metadata.name ?? ''));
    q.start();
    scopeKeeper?.lead(signal);
    missedPods.lead(signal);
    signal.addEventListener('abort', () => {
      leading = false;
      options.onLeading?.(false);
      if (queue === q) queue = undefined;
      void q.shutdown({ drain: false });
      log.info('stopped leading');
    });
  }

  let election: LeaderElection | undefined;
  let standalone: AbortController | undefined;
  let stopped = false;

  return {
    async start() {
      await Promise.all([
        sidecarSets.start(),
        namespaces.start(),
        podCache.start(),
        revisions.start(),
      ]);
      // stop() while the caches were syncing: never begin to lead.
      if (stopped) return;
      log.info({ pods: pods.size(), sidecarSets: sidecarSets.size() }, 'controller caches synced');
      const le = options.leaderElection;
      if (le === undefined) {
        standalone = new AbortController();
        lead(standalone.signal);
        return;
      }
      election = startLeaderElection({
        kubeConfig: options.kubeConfig,
        namespace: le.namespace,
        name: le.name,
        identity: le.identity ?? defaultIdentity(),
        now,
        ...(le.leaseDurationMs ? { leaseDurationMs: le.leaseDurationMs } : {}),
        ...(le.renewDeadlineMs ? { renewDeadlineMs: le.renewDeadlineMs } : {}),
        ...(le.retryPeriodMs ? { retryPeriodMs: le.retryPeriodMs } : {}),
        logger: log,
        onStartedLeading: lead,
        onStoppedLeading: () => undefined,
        onNewLeader: (identity) => {
          log.info({ leader: identity }, 'new leader');
        },
      });
    },
    async stop(stopOptions = {}) {
      stopped = true;
      standalone?.abort();
      await election?.stop({ release: stopOptions.release ?? true });
      await queue?.shutdown({ drain: false });
      await Promise.all([sidecarSets.stop(), namespaces.stop(), podCache.stop(), revisions.stop()]);
    },
    synced: () =>
      sidecarSets.synced() && namespaces.synced() && podCache.synced() && revisions.synced(),
    failing: () =>
      failingCaches({
        SidecarSets: sidecarSets,
        Namespaces: namespaces,
        Pods: podCache,
        ControllerRevisions: revisions,
      }),
    leading: () => leading,
    cachedPods: () => pods.size(),
  };
}

function keyOf(pod: Pod): string {
  return objectKey(pod.metadata.namespace, pod.metadata.name ?? '');
}

/** A plain copy without metadata.managedFields, which nothing here reads. */
function withoutManagedFields(raw: KubernetesObject): SidecarSet {
  const copy = structuredClone(raw) as unknown as SidecarSet;
  delete copy.metadata['managedFields'];
  return copy;
}

function sameAnnotations(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  const left = Object.entries(a ?? {});
  return left.length === Object.keys(b ?? {}).length && left.every(([k, v]) => b?.[k] === v);
}
