/**
 * The upgrade controller, assembled: caches (the SidecarSets, Namespaces and ControllerRevisions
 * it shares with the webhook of its process, src/k8s/shared-caches.ts, and its own slim pods), a
 * keyed work queue, leader election, and reconcile. Every replica keeps its caches warm; only the
 * leader runs the queue, so a takeover starts from a complete cache at once.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { CoreV1Api } from '@kubernetes/client-node';
import type { Logger } from 'pino';

import type { FailingCache } from '../cache/snapshot.js';
import type { Pod } from '../core/api/k8s-types.js';
import type { SidecarSet } from '../core/api/sidecarset-types.js';
import type { LeaderElection } from '../k8s/leader-election.js';
import { defaultIdentity, startLeaderElection } from '../k8s/leader-election.js';
import { createKubeWriter } from '../k8s/kube-writer.js';
import type { Reflector } from '../k8s/reflector.js';
import { createReflector, objectKey } from '../k8s/reflector.js';
import { readableApiError } from '../k8s/api-error.js';
import { createRecreationExpectations } from './recreation-expectations.js';
import { failingCaches } from '../k8s/failing-caches.js';
import type { RevisionWriter } from '../k8s/revisions.js';
import { DEFAULT_REVISION_NAMESPACE, createRevisionWriter, revisionsOf } from '../k8s/revisions.js';
import { SharedCaches } from '../k8s/shared-caches.js';
import { slimPod } from '../k8s/slim-pod.js';
import type { WebhookScope } from '../core/scope/webhook-scope.js';
import type { ScopeWriter } from '../k8s/webhook-scope-writer.js';
import { createScopeWriter } from '../k8s/webhook-scope-writer.js';
import type { UpgradeExpectations } from './expectations.js';
import { createUpgradeExpectations } from './expectations.js';
import type { PodIndex } from './pod-index.js';
import { createPodIndex } from './pod-index.js';
import type { QueueMetrics } from './queue.js';
import { WorkQueue } from './queue.js';
import { createTokenBucket } from './rate-limiter.js';
import type { ReconcileDeps, ReconcileResult } from './reconcile.js';
import { reconcileSidecarSet } from './reconcile.js';
import type { MissedPodsScanner } from './missed-pods.js';
import { createMissedPodsScanner } from './missed-pods.js';
import type { ScopeKeeper } from './scope-keeper.js';
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
  /**
   * The SidecarSets, Namespaces and ControllerRevisions shared with the webhook of this process
   * (src/k8s/shared-caches.ts); without them the controller watches its own.
   */
  caches?: SharedCaches;
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

/**
 * The controller, shaped like controller-runtime's: `start` syncs the caches and then leads (or
 * campaigns for leadership); while leading, a WorkQueue runs `reconcileHandler` for each queued
 * SidecarSet; the caches' event handlers (`onSidecarSetAdd` and the rest) queue the SidecarSets an
 * event concerns.
 */
export class Controller {
  private readonly options: ControllerOptions;
  private readonly log: Logger;
  private readonly now: () => Date;
  private readonly pods: PodIndex = createPodIndex();
  private readonly expectations: UpgradeExpectations = createUpgradeExpectations();
  private readonly scopeWriter: ScopeWriter | undefined;
  private readonly scopeKeeper: ScopeKeeper | undefined;
  private readonly caches: SharedCaches;
  private readonly podCache: Reflector<Pod>;
  private readonly missedPods: MissedPodsScanner;
  private readonly deps: ReconcileDeps;
  /** The queue of the current leadership; undefined when not leading. */
  private queue: WorkQueue | undefined;
  private isLeading = false;
  private election: LeaderElection | undefined;
  /** Without leader election: the leadership that `stop` ends. */
  private standalone: AbortController | undefined;
  /**
   * Aborted by stop(), for good: it also ends a start() still waiting for caches that another
   * user keeps open.
   */
  private readonly stopping = new AbortController();
  /** start() counted this controller among the shared caches' users: stop() must uncount it. */
  private usesCaches = false;

  constructor(options: ControllerOptions) {
    this.options = options;
    this.log = options.logger.child({ component: 'controller' });
    this.now = options.now ?? (() => new Date());
    const scopeConfig = options.dryRun ? undefined : options.podWebhookScope;
    if (scopeConfig !== undefined) {
      this.scopeWriter = createScopeWriter({
        kubeConfig: options.kubeConfig,
        configurationName: scopeConfig.configurationName,
        logger: this.log,
      });
      this.scopeKeeper = this.createScopeKeeper(scopeConfig, this.scopeWriter);
    }
    const revisionNamespace = options.namespace ?? DEFAULT_REVISION_NAMESPACE;
    this.caches =
      options.caches ??
      new SharedCaches({ kubeConfig: options.kubeConfig, logger: this.log, revisionNamespace });
    this.handleCacheEvents();
    this.podCache = this.createPodReflector();

    const { sidecarSets, namespaces } = this.caches;
    const view: ControllerView = {
      sidecarSet: (name) => sidecarSets.get(objectKey(undefined, name)),
      podsInjectedBy: (name) => this.pods.podsOf(name),
      namespaces: { get: (name) => namespaces.get(objectKey(undefined, name))?.labels },
    };
    const logPlan = (msg: string, fields: Record<string, unknown>): void => {
      this.log.info(fields, msg);
    };
    const realWriter = options.writer ?? createKubeWriter(options.kubeConfig);
    const writer = options.dryRun ? dryRunWriter(realWriter, logPlan) : realWriter;
    const revisionWriter = options.dryRun
      ? dryRunRevisionWriter(logPlan)
      : createRevisionWriter(options.kubeConfig, revisionNamespace);
    this.missedPods = createMissedPodsScanner({
      sidecarSets: () => sidecarSets.list(),
      pods: () => this.podCache.list(),
      namespaces: view.namespaces,
      webhookSelectors: () => this.scopeWriter?.webhookSelectors() ?? {},
      writer,
      logger: this.log,
      ...(options.missedPodsResyncMs === undefined ? {} : { resyncMs: options.missedPodsResyncMs }),
      ...(options.onMissedPods === undefined ? {} : { onCounts: options.onMissedPods }),
    });
    this.deps = this.createReconcileDeps(view, writer, revisionWriter);
  }

  /** Starts the caches and leader election; resolves once the caches have synced. */
  async start(): Promise<void> {
    if (this.isStopped()) return;
    this.usesCaches = true;
    const synced = Promise.all([this.caches.start(), this.podCache.start()]);
    const stopped = new Promise((resolve) => {
      this.stopping.signal.addEventListener('abort', resolve, { once: true });
    });
    await Promise.race([synced, stopped]);
    // stop() while the caches were syncing: never begin to lead.
    if (this.isStopped()) return;
    this.log.info(
      { pods: this.pods.size(), sidecarSets: this.caches.sidecarSets.size() },
      'controller caches synced',
    );
    const le = this.options.leaderElection;
    if (le === undefined) {
      this.standalone = new AbortController();
      this.lead(this.standalone.signal);
      return;
    }
    this.election = this.campaign(le);
  }

  /**
   * Stops reconciling and the caches; `release: false` keeps the Lease, as a crash would. The
   * rounds under way end first, their writes in flight answered: the next leader takes over as
   * soon as the Lease is released, and must not meet them.
   */
  async stop(stopOptions: { release?: boolean } = {}): Promise<void> {
    this.stopping.abort();
    this.standalone?.abort();
    await this.queue?.shutdown({ drain: false });
    await this.election?.stop({ release: stopOptions.release ?? true });
    const caches = this.usesCaches ? this.caches.stop() : undefined;
    this.usesCaches = false;
    await Promise.all([caches, this.podCache.stop()]);
  }

  private isStopped(): boolean {
    return this.stopping.signal.aborted;
  }

  synced(): boolean {
    return this.caches.synced() && this.podCache.synced();
  }

  /** The caches not current now because their list or watch fails. */
  failing(): FailingCache[] {
    return failingCaches({ ...this.caches.named(), Pods: this.podCache });
  }

  leading(): boolean {
    return this.isLeading;
  }

  cachedPods(): number {
    return this.pods.size();
  }

  private campaign(le: LeaderElectionConfig): LeaderElection {
    return startLeaderElection({
      kubeConfig: this.options.kubeConfig,
      namespace: le.namespace,
      name: le.name,
      identity: le.identity ?? defaultIdentity(),
      now: this.now,
      ...(le.leaseDurationMs ? { leaseDurationMs: le.leaseDurationMs } : {}),
      ...(le.renewDeadlineMs ? { renewDeadlineMs: le.renewDeadlineMs } : {}),
      ...(le.retryPeriodMs ? { retryPeriodMs: le.retryPeriodMs } : {}),
      logger: this.log,
      onStartedLeading: (signal) => {
        this.lead(signal);
      },
      onStoppedLeading: () => undefined,
      onNewLeader: (identity) => {
        this.log.info({ leader: identity }, 'new leader');
      },
    });
  }

  /** Leadership began: reconcile every SidecarSet, then what events queue, until `signal` aborts. */
  private lead(signal: AbortSignal): void {
    this.isLeading = true;
    this.options.onLeading?.(true);
    this.log.info('leading: reconciling SidecarSets');
    const q = new WorkQueue({
      workers: this.options.workers ?? 3,
      logger: this.log,
      resyncMs: this.options.resyncMs ?? 5 * 60_000,
      keys: () => this.reconcileKeys(),
      ...(this.options.queueMetrics === undefined ? {} : { metrics: this.options.queueMetrics }),
      process: (key, queueSignal) => this.reconcileHandler(key, signal, queueSignal),
    });
    this.queue = q;
    this.enqueue(this.reconcileKeys());
    q.start();
    this.scopeKeeper?.lead(signal);
    this.missedPods.lead(signal);
    signal.addEventListener('abort', () => {
      this.stopLeading(q);
    });
  }

  private stopLeading(q: WorkQueue): void {
    this.isLeading = false;
    this.options.onLeading?.(false);
    if (this.queue === q) this.queue = undefined;
    void q.shutdown({ drain: false });
    this.log.info('stopped leading');
  }

  /** One reconcile of the SidecarSet `key`, reported to `onReconcile`; throwing retries it. */
  private async reconcileHandler(
    key: string,
    leadership: AbortSignal,
    queueSignal: AbortSignal,
  ): Promise<ReconcileResult> {
    // A process frozen past its renew deadline (SIGSTOP, a long pause) may run this before the
    // election's deadline timer: isLeader() reads the clock and steps down first, so the
    // round writes nothing (docs/adr/0016-leader-only-metrics.md).
    this.election?.isLeader();
    const either = AbortSignal.any([leadership, queueSignal]);
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    try {
      const result = await reconcileSidecarSet(key, this.deps, either);
      const outcome = result.requeueAfterMs === undefined ? 'success' : 'requeue';
      this.options.onReconcile?.(outcome, seconds());
      return result;
    } catch (err) {
      // A round cut short by the end of leadership is not a failed reconcile.
      if (!either.aborted) this.options.onReconcile?.('error', seconds());
      throw err;
    }
  }

  private enqueue(names: Iterable<string>): void {
    for (const name of names) this.queue?.add(name);
  }

  /**
   * Every SidecarSet, and every name pods are injected by: a deleted SidecarSet's round opens
   * the readiness gates it left closed (src/core/upgrade/readiness-gate.ts).
   */
  private reconcileKeys(): Set<string> {
    const names = this.caches.sidecarSets.list().map((ss) => ss.metadata.name ?? '');
    return new Set([...names, ...this.pods.sidecarSets()]);
  }

  private sidecarSetsWithNamespaceRules(): string[] {
    return this.caches.sidecarSets
      .list()
      .filter((ss) => ss.spec.namespaceSelector !== undefined || ss.spec.namespace)
      .map((ss) => ss.metadata.name ?? '');
  }

  private onSidecarSetAdd(ss: SidecarSet): void {
    this.scopeKeeper?.changed();
    this.missedPods.changed();
    this.enqueue([ss.metadata.name ?? '']);
  }

  // Spec and annotation changes only (the health gate's settings and resume are annotations):
  // our own status writes must not trigger another round.
  private onSidecarSetUpdate(old: SidecarSet, ss: SidecarSet): void {
    if (old.metadata.generation !== ss.metadata.generation) {
      this.scopeKeeper?.changed();
      this.missedPods.changed();
    }
    if (
      old.metadata.generation !== ss.metadata.generation ||
      !sameAnnotations(old.metadata.annotations, ss.metadata.annotations)
    ) {
      this.enqueue([ss.metadata.name ?? '']);
    }
  }

  private onSidecarSetDelete(ss: SidecarSet): void {
    this.scopeKeeper?.changed();
    // The next check drops the deleted SidecarSet's sidecarset_missed_pods series.
    this.missedPods.changed();
    this.enqueue([ss.metadata.name ?? '']);
  }

  private onPodAdd(pod: Pod): void {
    this.missedPods.changed();
    this.enqueue(this.pods.upsert(keyOf(pod), pod));
  }

  private onPodUpdate(old: Pod, pod: Pod): void {
    this.enqueue(this.pods.upsert(keyOf(pod), pod, old));
  }

  private onPodDelete(pod: Pod): void {
    this.expectations.podDeleted(keyOf(pod));
    this.enqueue(this.pods.remove(keyOf(pod), pod));
  }

  private createScopeKeeper(config: PodWebhookScopeConfig, writer: ScopeWriter): ScopeKeeper {
    return createScopeKeeper({
      writer,
      sidecarSets: () => this.caches.sidecarSets.list(),
      enabled: config.enabled,
      logger: this.log,
      ...(config.resyncMs === undefined ? {} : { resyncMs: config.resyncMs }),
      ...(config.onWritten === undefined ? {} : { onWritten: config.onWritten }),
    });
  }

  /** What SidecarSet and Namespace events queue (the ControllerRevisions queue nothing). */
  private handleCacheEvents(): void {
    this.caches.sidecarSets.addHandlers({
      onAdd: (ss) => {
        this.onSidecarSetAdd(ss);
      },
      onUpdate: (old, ss) => {
        this.onSidecarSetUpdate(old, ss);
      },
      onDelete: (ss) => {
        this.onSidecarSetDelete(ss);
      },
    });
    // A namespace's labels decide which pods of the SidecarSets with namespace rules match.
    const onNamespaceEvent = (): void => {
      this.enqueue(this.sidecarSetsWithNamespaceRules());
    };
    this.caches.namespaces.addHandlers({
      onAdd: onNamespaceEvent,
      onUpdate: onNamespaceEvent,
      onDelete: onNamespaceEvent,
    });
  }

  // The slim pod holds only what planning reads, so any change to it is worth a reconcile.
  private createPodReflector(): Reflector<Pod> {
    const core = this.options.kubeConfig.makeApiClient(CoreV1Api);
    return createReflector({
      kubeConfig: this.options.kubeConfig,
      path: '/api/v1/pods',
      list: (params) => core.listPodForAllNamespaces(params),
      transform: (raw: unknown) => slimPod(raw),
      logger: this.log,
      handlers: {
        onAdd: (pod) => {
          this.onPodAdd(pod);
        },
        onUpdate: (old, pod) => {
          this.onPodUpdate(old, pod);
        },
        onDelete: (pod) => {
          this.onPodDelete(pod);
        },
      },
    });
  }

  private createReconcileDeps(
    view: ControllerView,
    writer: ClusterWriter,
    revisionWriter: RevisionWriter,
  ): ReconcileDeps {
    const bucket = createTokenBucket({
      qps: this.options.qps ?? 20,
      burst: this.options.burst ?? 30,
    });
    return {
      view,
      writer,
      expectations: this.expectations,
      recreations: createRecreationExpectations(),
      inFlight: new Map(),
      podWrites: new Map(),
      takeToken: (signal) => bucket.take(signal),
      now: this.now,
      logger: this.log,
      reported: new Map(),
      podEvents: this.options.podEvents ?? false,
      ...(this.options.observer === undefined ? {} : { observer: this.options.observer }),
      revisions: (name) => revisionsOf(this.caches.revisions, name),
      // The failure is shown on the SidecarSet (RevisionHistoryFailure): its message for people.
      registerRevision: (ss, matched) =>
        registerLatestRevision(
          ss,
          matched,
          revisionsOf(this.caches.revisions, ss.metadata.name ?? ''),
          revisionWriter,
          this.log.child({ sidecarSet: ss.metadata.name }),
        ).catch((err: unknown) => {
          throw readableApiError(err);
        }),
    };
  }
}

function keyOf(pod: Pod): string {
  return objectKey(pod.metadata.namespace, pod.metadata.name ?? '');
}

function sameAnnotations(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  const left = Object.entries(a ?? {});
  return left.length === Object.keys(b ?? {}).length && left.every(([k, v]) => b?.[k] === v);
}
