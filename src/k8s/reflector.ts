/**
 * A reflector in the manner of client-go's: list, then watch from the list's resourceVersion,
 * keeping a keyed cache of *transformed* objects (the raw object is never retained), with handlers
 * for adds, updates and deletes. client-node's ListWatch keeps every full object and has no
 * transform, which does not fit 10,000+ pods; this replaces it.
 *
 * Recovery rules:
 * - a watch that ends cleanly (server timeout, closed stream) is re-opened at once from the last
 *   resourceVersion seen (events and BOOKMARKs both advance it), unless it ended within a second
 *   with no event at all, which counts as a failure (client-go's "very short watch");
 * - a 410 Gone, as a watch ERROR event or as an HTTP status, clears the resourceVersion and
 *   relists at once; the relist is diffed against the cache, so objects that vanished meanwhile
 *   get onDelete, new ones onAdd and changed ones (by resourceVersion) onUpdate;
 * - any other failure (list error, watch error, dropped connection, ERROR event) waits an
 *   exponential backoff and retries: the list if none succeeded yet, else the watch from the last
 *   resourceVersion (a version too old then comes back as 410 and relists). The backoff resets
 *   after a successful list and after a watch that delivered at least one event;
 * - while a backoff longer than the probe interval runs, the API server's /readyz is probed each
 *   interval. When the server was seen down or starting in this run of failures (a request that
 *   got no HTTP answer, or a probe that did not answer ok) and a probe then answers ok, the wait
 *   ends and the backoff resets: a restarted API server answers 403 (RBAC) and 5xx while it warms
 *   up, which would otherwise push the backoff to its maximum just before the server is ready
 *   (issue 23). client-go's reflector has no such probe: it backs off up to 30 s and resets only
 *   after 2 min without failures (wait.NewExponentialBackoffManager(800ms, 30s, 2m, ...) in
 *   k8s.io/client-go/tools/cache/reflector.go). A ready server that keeps refusing (RBAC) keeps
 *   its growing backoff. docs/troubleshooting.md describes what operators see.
 *
 * failingSince() tells since when the cache has not been current: from the first failure of a run
 * of failures until a list succeeds or a watch opens (the webhook's /readyz reads it).
 */
import type { RequestOptions } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';

import type { KubeConfig } from '@kubernetes/client-node';
import { Watch } from '@kubernetes/client-node';
import type { Logger } from 'pino';

import { getReadyz } from './readyz-probe.js';

export interface Backoff {
  initialMs: number;
  maxMs: number;
}

const DEFAULT_BACKOFF: Backoff = { initialMs: 500, maxMs: 30_000 };

/** How often /readyz is probed during a backoff (ReflectorOptions.probeIntervalMs). */
const DEFAULT_PROBE_INTERVAL_MS = 1000;

/** Resolves true when the API server answers that it is ready; false otherwise, never rejects. */
export type ReadinessProbe = (signal: AbortSignal) => Promise<boolean>;

/** What the reflector passes to the list call, named as client-node's list requests name them. */
export interface ListParams {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  _continue?: string;
}

/** The part of a list response the reflector reads (client-node list results fit it). */
export interface ListPage<Raw> {
  items: readonly Raw[];
  metadata?: { resourceVersion?: string; _continue?: string; continue?: string } | undefined;
}

export interface ReflectorHandlers<T> {
  onAdd?: (obj: T) => void;
  onUpdate?: (oldObj: T, obj: T) => void;
  onDelete?: (obj: T) => void;
  /** Once, after the first complete list has been stored and its handlers called. */
  onSynced?: () => void;
  /** After each later successful list (a relist), once its differences have been emitted. */
  onRelist?: () => void;
}

export interface ReflectorOptions<Raw, T> {
  kubeConfig: KubeConfig;
  /** The collection's path, used for the watch: /api/v1/pods, /apis/apps.kruise.io/v1beta1/sidecarsets. */
  path: string;
  /** One page of the collection; pass every param on to client-node. */
  list: (params: ListParams) => Promise<ListPage<Raw>>;
  /**
   * Applied to every listed and watched object before it is stored. Listed objects come from
   * client-node's typed API (class instances, times as Date), watched ones are plain JSON (times
   * as strings): the transform must accept both.
   */
  transform: (raw: Raw) => T;
  logger: Logger;
  labelSelector?: string;
  fieldSelector?: string;
  handlers?: ReflectorHandlers<T>;
  backoff?: Backoff;
  /** Waits `ms` (the backoff); rejects or resolves early when `signal` aborts. Injectable for tests. */
  delay?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Items per list page (limit/continue); 0 lists in one request. Default 500, as client-go. */
  pageSize?: number;
  /** Random number in [0, 1) for the watch timeout (5 to 10 minutes, as client-go). */
  random?: () => number;
  /** Milliseconds since the epoch; injectable for tests. */
  now?: () => number;
  /** Whether the API server is ready; default probeReadyz(kubeConfig). */
  probe?: ReadinessProbe;
  /** How often to probe during a backoff; 0 never probes. Default DEFAULT_PROBE_INTERVAL_MS. */
  probeIntervalMs?: number;
}

export interface Reflector<T> {
  /**
   * Starts listing and watching. Resolves after the first successful list (retrying until then),
   * or when stop() is called first. A reflector runs once: start() after stop() does nothing.
   */
  start(): Promise<void>;
  /** Aborts the watch and any pending backoff; resolves when the loop has ended. */
  stop(): Promise<void>;
  synced(): boolean;
  get(key: string): T | undefined;
  list(): T[];
  size(): number;
  /** The resourceVersion the next watch would start from; '' before the first list. */
  resourceVersion(): string;
  /**
   * When (on the `now` clock) the list or watch started failing, undefined while the cache is
   * current: cleared when a list succeeds or a watch opens.
   */
  failingSince(): number | undefined;
  /** Why the last list or watch failed, while failingSince() is set. */
  lastFailure(): string | undefined;
  /**
   * Adds handlers; they get onAdd for every object already stored (and onSynced if already
   * synced), then events. Returns the remover.
   */
  addHandlers(handlers: ReflectorHandlers<T>): () => void;
}

interface Entry<T> {
  obj: T;
  resourceVersion: string;
}

interface Meta {
  key: string;
  resourceVersion: string;
}

type WatchOutcome =
  | { kind: 'closed'; events: number; elapsedMs: number }
  | { kind: 'expired'; reason: string }
  | { kind: 'failed'; events: number; reason: string; noAnswer?: boolean }
  | { kind: 'stopped' };

const MIN_WATCH_TIMEOUT_SECONDS = 300;
const SHORT_WATCH_MS = 1000;

/** namespace/name, or name for cluster-scoped objects (client-go's MetaNamespaceKeyFunc). */
export function objectKey(namespace: string | undefined, name: string): string {
  return namespace === undefined || namespace === '' ? name : `${namespace}/${name}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function stringField(obj: Record<string, unknown>, field: string): string | undefined {
  const value = obj[field];
  return typeof value === 'string' ? value : undefined;
}

function metaOf(raw: unknown): Meta | undefined {
  if (!isRecord(raw) || !isRecord(raw['metadata'])) return undefined;
  const name = stringField(raw['metadata'], 'name');
  if (name === undefined || name === '') return undefined;
  return {
    key: objectKey(stringField(raw['metadata'], 'namespace'), name),
    resourceVersion: stringField(raw['metadata'], 'resourceVersion') ?? '',
  };
}

function statusCodeOf(err: unknown): number | undefined {
  if (!isRecord(err)) return undefined;
  for (const field of ['code', 'statusCode']) {
    const value = err[field];
    if (typeof value === 'number') return value;
  }
  return undefined;
}

/**
 * No HTTP answer at all, a system error instead (ECONNREFUSED, ECONNRESET, ETIMEDOUT, as
 * node-fetch's FetchError and Node's streams carry it in `code`): the server is down or restarting.
 */
function noAnswer(err: unknown): boolean {
  return statusCodeOf(err) === undefined && isRecord(err) && typeof err['code'] === 'string';
}

/**
 * GET /readyz of the kubeconfig's server, with its credentials (allowed to every user by the
 * default `system:public-info-viewer` ClusterRole). Only an HTTP 200 is ready: kube-apiserver
 * answers 500 while a readiness check fails, and a starting server may answer 401 or 403.
 */
export function probeReadyz(kubeConfig: KubeConfig, timeoutMs = 5000): ReadinessProbe {
  return async (signal) => {
    const server = kubeConfig.getCurrentCluster()?.server;
    if (server === undefined) return false;
    const options: RequestOptions = {};
    await kubeConfig.applyToHTTPSOptions(options);
    const url = new URL(`${server.replace(/\/+$/, '')}/readyz`);
    const answer = await getReadyz(url, options, timeoutMs, signal);
    return 'status' in answer && answer.status === 200;
  };
}

function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code = statusCodeOf(err);
    return code === undefined ? err.message : `${err.message} (HTTP ${code})`;
  }
  if (isRecord(err)) return JSON.stringify(err);
  return String(err);
}

async function defaultDelay(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch {
    // aborted by stop()
  }
}

/**
 * A transform that drops metadata.managedFields, which the API server adds to every object and
 * nothing here reads (controller-runtime's cache.TransformStripManagedFields): a shallow copy.
 */
export function withoutManagedFields<T extends { metadata?: object }>(raw: T): T {
  const metadata: Record<string, unknown> = { ...raw.metadata };
  delete metadata['managedFields'];
  return { ...raw, metadata };
}

export function createReflector<Raw, T>(options: ReflectorOptions<Raw, T>): Reflector<T> {
  return new CacheReflector(options);
}

/**
 * client-go's cache.Reflector with its store: lists and watches the collection, keeps the
 * transformed objects by key and calls the handlers for every change.
 */
class CacheReflector<Raw, T> implements Reflector<T> {
  private readonly options: ReflectorOptions<Raw, T>;
  private readonly log: Logger;
  private readonly backoff: Backoff;
  private readonly delay: (ms: number, signal: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly pageSize: number;
  private readonly now: () => number;
  private readonly probe: ReadinessProbe;
  private readonly probeIntervalMs: number;
  private readonly watcher: Watch;
  private readonly handlerSets = new Set<ReflectorHandlers<T>>();

  private store = new Map<string, Entry<T>>();
  /** The resourceVersion the next watch starts from (client-go's lastSyncResourceVersion). */
  private lastSyncResourceVersion = '';
  private hasSynced = false;
  private started = false;
  private stopped = false;
  /** Failures in a row: the backoff's exponent. */
  private failures = 0;
  /** The server was seen down or starting since the last success (see the module comment). */
  private serverSuspect = false;
  private failingSinceMs: number | undefined;
  private lastFailureReason: string | undefined;
  private readonly stopping = new AbortController();
  private cancelWatch: (() => void) | undefined;
  private loop: Promise<void> = Promise.resolve();
  private resolveFirstList: () => void = () => undefined;
  private readonly firstList: Promise<void>;
  private readonly stoppedSignal: Promise<'stopped'>;

  constructor(options: ReflectorOptions<Raw, T>) {
    this.options = options;
    this.log = options.logger.child({ reflector: options.path });
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.delay = options.delay ?? defaultDelay;
    this.random = options.random ?? Math.random;
    this.pageSize = options.pageSize ?? 500;
    this.now = options.now ?? Date.now;
    this.probe = options.probe ?? probeReadyz(options.kubeConfig);
    this.probeIntervalMs = options.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS;
    this.watcher = new Watch(options.kubeConfig);
    if (options.handlers !== undefined) this.handlerSets.add(options.handlers);
    this.firstList = new Promise<void>((resolve) => {
      this.resolveFirstList = resolve;
    });
    this.stoppedSignal = new Promise<'stopped'>((resolve) => {
      this.stopping.signal.addEventListener('abort', () => {
        resolve('stopped');
      });
    });
  }

  start(): Promise<void> {
    if (this.started || this.stopped) return this.stopped ? Promise.resolve() : this.firstList;
    this.started = true;
    this.loop = this.listAndWatch().catch((err: unknown) => {
      this.log.error({ err: describeError(err) }, 'reflector loop failed');
    });
    return this.firstList;
  }

  async stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      this.stopping.abort();
      this.cancelWatch?.();
      this.resolveFirstList();
    }
    await this.loop;
  }

  synced(): boolean {
    return this.hasSynced;
  }

  get(key: string): T | undefined {
    return this.store.get(key)?.obj;
  }

  list(): T[] {
    return Array.from(this.store.values(), (e) => e.obj);
  }

  size(): number {
    return this.store.size;
  }

  resourceVersion(): string {
    return this.lastSyncResourceVersion;
  }

  failingSince(): number | undefined {
    return this.failingSinceMs;
  }

  lastFailure(): string | undefined {
    return this.lastFailureReason;
  }

  addHandlers(handlers: ReflectorHandlers<T>): () => void {
    this.handlerSets.add(handlers);
    for (const entry of this.store.values()) {
      try {
        handlers.onAdd?.(entry.obj);
      } catch (err: unknown) {
        this.log.error({ err: describeError(err) }, 'add handler threw');
      }
    }
    if (this.hasSynced) handlers.onSynced?.();
    return () => this.handlerSets.delete(handlers);
  }

  /** Read through a call: `stopped` changes while the loop awaits. */
  private isStopped(): boolean {
    return this.stopped;
  }

  /** client-go's Run and ListAndWatch: list when needed, then watch, until stop(). */
  private async listAndWatch(): Promise<void> {
    let needList = true;
    while (!this.stopped) {
      if (needList) {
        try {
          if (!(await this.relist())) return;
          needList = false;
        } catch (err: unknown) {
          if (this.isStopped()) return;
          await this.waitBackoff('list failed', describeError(err), noAnswer(err));
          continue;
        }
      }
      const outcome = await this.watch();
      switch (outcome.kind) {
        case 'stopped':
          return;
        case 'closed':
          if (outcome.events > 0) this.resetBackoff();
          else if (outcome.elapsedMs < SHORT_WATCH_MS) {
            // As client-go: a watch closed at once with nothing in it is an error, not a timeout.
            await this.waitBackoff('watch closed at once with no events', 'very short watch');
            break;
          }
          this.log.debug(
            { resourceVersion: this.lastSyncResourceVersion },
            'watch ended; watching again',
          );
          break;
        case 'expired':
          this.log.info({ reason: outcome.reason }, 'resourceVersion expired (410); relisting');
          this.lastSyncResourceVersion = '';
          needList = true;
          break;
        case 'failed':
          if (this.isStopped()) return;
          if (outcome.events > 0) this.resetBackoff();
          await this.waitBackoff('watch failed', outcome.reason, outcome.noAnswer);
          break;
      }
    }
  }

  /** Lists every page, stores the result and calls the handlers; false when stopped meanwhile. */
  private async relist(): Promise<boolean> {
    const result = await Promise.race([this.listAll(), this.stoppedSignal]);
    if (result === 'stopped' || this.stopped) return false;
    this.replace(result.objects);
    this.lastSyncResourceVersion = result.resourceVersion;
    this.resetBackoff();
    this.markCurrent();
    this.log.debug(
      { objects: this.store.size, resourceVersion: this.lastSyncResourceVersion },
      'listed',
    );
    if (this.hasSynced) {
      this.emit((h) => h.onRelist?.(), 'relist');
    } else {
      this.hasSynced = true;
      this.log.info({ objects: this.store.size }, 'synced');
      this.emit((h) => h.onSynced?.(), 'synced');
      this.resolveFirstList();
    }
    return true;
  }

  private async listAll(): Promise<{ objects: Map<string, Entry<T>>; resourceVersion: string }> {
    const { options, pageSize } = this;
    const objects = new Map<string, Entry<T>>();
    let listVersion: string | undefined;
    let token: string | undefined;
    do {
      const params: ListParams = {};
      if (options.labelSelector !== undefined) params.labelSelector = options.labelSelector;
      if (options.fieldSelector !== undefined) params.fieldSelector = options.fieldSelector;
      if (pageSize > 0) params.limit = pageSize;
      if (token !== undefined) params._continue = token;
      const page = await options.list(params);
      if (this.stopped) break;
      // All pages of one list share the first page's version (a snapshot on a real API server).
      listVersion ??= page.metadata?.resourceVersion ?? '';
      for (const raw of page.items) {
        const meta = metaOf(raw);
        if (meta === undefined) continue;
        const obj = this.transform(raw, meta.key);
        if (obj !== undefined)
          objects.set(meta.key, { obj, resourceVersion: meta.resourceVersion });
      }
      const next = page.metadata?._continue ?? page.metadata?.continue;
      if (next !== undefined && next !== '' && next === token) {
        throw new Error(
          'the list returned the same continue token again (is _continue passed on?)',
        );
      }
      token = pageSize > 0 && next !== undefined && next !== '' ? next : undefined;
    } while (token !== undefined);
    return { objects, resourceVersion: listVersion ?? '' };
  }

  /** Swaps in the listed objects and emits the difference as deletes, adds and updates. */
  private replace(objects: Map<string, Entry<T>>): void {
    const old = this.store;
    this.store = objects;
    for (const [key, entry] of old) {
      if (!objects.has(key)) this.emit((h) => h.onDelete?.(entry.obj), 'delete');
    }
    for (const [key, entry] of objects) {
      const before = old.get(key);
      if (before === undefined) this.emit((h) => h.onAdd?.(entry.obj), 'add');
      else if (before.resourceVersion !== entry.resourceVersion)
        this.emit((h) => h.onUpdate?.(before.obj, entry.obj), 'update');
    }
  }

  /** Opens one watch from the last resourceVersion and applies its events until it ends. */
  private watch(): Promise<WatchOutcome> {
    return new Promise<WatchOutcome>((resolve) => {
      let settled = false;
      let events = 0;
      const opened = this.now();
      let request: AbortController | undefined;
      const finish = (outcome: WatchOutcome): void => {
        if (settled) return;
        settled = true;
        this.cancelWatch = undefined;
        request?.abort();
        resolve(outcome);
      };
      this.cancelWatch = () => {
        finish({ kind: 'stopped' });
      };
      const onEvent = (type: string, raw: unknown): void => {
        if (settled) return;
        events++;
        const outcome = this.handleEvent(type, raw);
        if (outcome !== undefined) finish(outcome);
      };
      const onDone = (err: unknown): void => {
        if (err === null || err === undefined) {
          finish({ kind: 'closed', events, elapsedMs: this.now() - opened });
        } else if (statusCodeOf(err) === 410) {
          finish({ kind: 'expired', reason: describeError(err) });
        } else {
          finish({ kind: 'failed', events, reason: describeError(err), noAnswer: noAnswer(err) });
        }
      };
      this.watcher.watch(this.options.path, this.watchQuery(), onEvent, onDone).then(
        (controller) => {
          request = controller;
          // Resolved before the stream ended: the server answered 200, the watch is open.
          if (settled) controller.abort();
          else this.markCurrent();
        },
        (err: unknown) => {
          onDone(err ?? new Error('watch failed'));
        },
      );
    });
  }

  private watchQuery(): Record<string, string | number | boolean> {
    const timeoutSeconds = Math.floor(MIN_WATCH_TIMEOUT_SECONDS * (1 + this.random()));
    const query: Record<string, string | number | boolean> = {
      resourceVersion: this.lastSyncResourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds,
    };
    if (this.options.labelSelector !== undefined) {
      query['labelSelector'] = this.options.labelSelector;
    }
    if (this.options.fieldSelector !== undefined) {
      query['fieldSelector'] = this.options.fieldSelector;
    }
    return query;
  }

  /** Applies one watch event; returns an outcome when the event ends the watch. */
  private handleEvent(type: string, raw: unknown): WatchOutcome | undefined {
    if (type === 'ERROR') {
      const code = isRecord(raw) ? raw['code'] : undefined;
      const reason = `watch ERROR event: ${isRecord(raw) ? JSON.stringify(raw) : String(raw)}`;
      return code === 410 ? { kind: 'expired', reason } : { kind: 'failed', events: 0, reason };
    }
    if (type === 'BOOKMARK') {
      const meta = isRecord(raw) && isRecord(raw['metadata']) ? raw['metadata'] : {};
      const version = stringField(meta, 'resourceVersion');
      if (version !== undefined && version !== '') this.lastSyncResourceVersion = version;
      return undefined;
    }
    const meta = metaOf(raw);
    if (meta === undefined || !['ADDED', 'MODIFIED', 'DELETED'].includes(type)) {
      this.log.warn({ type }, 'ignoring an unexpected watch event');
      return undefined;
    }
    // Watched objects are the JSON form of what the list returns.
    const obj = this.transform(raw as Raw, meta.key);
    if (meta.resourceVersion !== '') this.lastSyncResourceVersion = meta.resourceVersion;
    const before = this.store.get(meta.key);
    if (type === 'DELETED') {
      if (before === undefined) return undefined;
      this.store.delete(meta.key);
      this.emit((h) => h.onDelete?.(obj ?? before.obj), 'delete');
      return undefined;
    }
    if (obj === undefined) return undefined;
    this.store.set(meta.key, { obj, resourceVersion: meta.resourceVersion });
    if (before === undefined) this.emit((h) => h.onAdd?.(obj), 'add');
    else this.emit((h) => h.onUpdate?.(before.obj, obj), 'update');
    return undefined;
  }

  private transform(raw: Raw, key: string): T | undefined {
    try {
      return this.options.transform(raw);
    } catch (err: unknown) {
      this.log.error({ key, err: describeError(err) }, 'transform failed; object left out');
      return undefined;
    }
  }

  private emit(call: (h: ReflectorHandlers<T>) => void, what: string): void {
    for (const handlers of this.handlerSets) {
      try {
        call(handlers);
      } catch (err: unknown) {
        this.log.error({ err: describeError(err) }, `${what} handler threw`);
      }
    }
  }

  private resetBackoff(): void {
    this.failures = 0;
    this.serverSuspect = false;
  }

  private markCurrent(): void {
    this.failingSinceMs = undefined;
    this.lastFailureReason = undefined;
  }

  /**
   * Waits the backoff for one more failure. `down`: the failure got no HTTP answer. The wait ends
   * early on stop(), or when a probe finds the server ready after it was seen down or starting.
   */
  private async waitBackoff(what: string, reason: string, down = false): Promise<void> {
    this.failures++;
    this.failingSinceMs ??= this.now();
    this.lastFailureReason = reason;
    if (down) this.serverSuspect = true;
    const { failures } = this;
    const ms = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** (failures - 1));
    this.log.warn({ reason, retryInMs: ms, failures }, `${what}; retrying after backoff`);
    const wake = new AbortController();
    const signal = AbortSignal.any([this.stopping.signal, wake.signal]);
    const probing =
      this.probeIntervalMs > 0 && ms > this.probeIntervalMs
        ? this.probeUntilReady(wake, signal)
        : undefined;
    await this.delay(ms, signal);
    wake.abort();
    await probing;
  }

  /** Probes /readyz each interval until `signal` aborts; aborts `wake` when the server is back. */
  private async probeUntilReady(wake: AbortController, signal: AbortSignal): Promise<void> {
    // Read through a call: the signal aborts while the loop awaits.
    const ended = (): boolean => signal.aborted;
    for (;;) {
      await this.delay(this.probeIntervalMs, signal);
      if (ended()) return;
      const ready = await this.probe(signal).catch(() => false);
      if (ended()) return;
      if (!ready) {
        this.serverSuspect = true;
      } else if (this.serverSuspect) {
        this.log.info('the API server is ready again; retrying now');
        this.resetBackoff();
        wake.abort();
        return;
      }
    }
  }
}
