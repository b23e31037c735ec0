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
import { request as httpRequest } from 'node:http';
import type { RequestOptions } from 'node:https';
import { request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';

import type { KubeConfig } from '@kubernetes/client-node';
import { Watch } from '@kubernetes/client-node';
import type { Logger } from 'pino';

export interface Backoff {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 500, maxMs: 30_000 };

/** How often /readyz is probed during a backoff (ReflectorOptions.probeIntervalMs). */
export const DEFAULT_PROBE_INTERVAL_MS = 1000;

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
    const url = new URL(`${server.replace(/\/+$/, '')}/readyz`);
    const options: RequestOptions = {};
    await kubeConfig.applyToHTTPSOptions(options);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<boolean>((resolve) => {
      const req = send(
        url,
        { ...options, method: 'GET', agent: false, signal, timeout: timeoutMs },
        (res) => {
          res.resume();
          resolve(res.statusCode === 200);
        },
      );
      req.on('timeout', () => req.destroy());
      req.on('error', () => {
        resolve(false);
      });
      req.end();
    });
  };
}

export function describeError(err: unknown): string {
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

export function createReflector<Raw, T>(options: ReflectorOptions<Raw, T>): Reflector<T> {
  const log = options.logger.child({ reflector: options.path });
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const delay = options.delay ?? defaultDelay;
  const random = options.random ?? Math.random;
  const pageSize = options.pageSize ?? 500;
  const now = options.now ?? Date.now;
  const probe = options.probe ?? probeReadyz(options.kubeConfig);
  const probeIntervalMs = options.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS;
  const watcher = new Watch(options.kubeConfig);
  const handlerSets = new Set<ReflectorHandlers<T>>();
  if (options.handlers !== undefined) handlerSets.add(options.handlers);

  let store = new Map<string, Entry<T>>();
  let resourceVersion = '';
  let hasSynced = false;
  let started = false;
  let stopped = false;
  /** Failures in a row: the backoff's exponent. */
  let failures = 0;
  /** The server was seen down or starting since the last success (see the module comment). */
  let serverSuspect = false;
  let failingSinceMs: number | undefined;
  let lastFailureReason: string | undefined;
  const stopping = new AbortController();
  let cancelWatch: (() => void) | undefined;
  let loop: Promise<void> = Promise.resolve();
  let resolveFirstList: () => void = () => undefined;
  const firstList = new Promise<void>((resolve) => {
    resolveFirstList = resolve;
  });
  const stoppedSignal = new Promise<'stopped'>((resolve) => {
    stopping.signal.addEventListener('abort', () => {
      resolve('stopped');
    });
  });

  function emit(call: (h: ReflectorHandlers<T>) => void, what: string): void {
    for (const handlers of handlerSets) {
      try {
        call(handlers);
      } catch (err: unknown) {
        log.error({ err: describeError(err) }, `${what} handler threw`);
      }
    }
  }

  function transform(raw: Raw, key: string): T | undefined {
    try {
      return options.transform(raw);
    } catch (err: unknown) {
      log.error({ key, err: describeError(err) }, 'transform failed; object left out');
      return undefined;
    }
  }

  async function listAll(): Promise<{ objects: Map<string, Entry<T>>; resourceVersion: string }> {
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
      if (stopped) break;
      // All pages of one list share the first page's version (a snapshot on a real API server).
      listVersion ??= page.metadata?.resourceVersion ?? '';
      for (const raw of page.items) {
        const meta = metaOf(raw);
        if (meta === undefined) continue;
        const obj = transform(raw, meta.key);
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
  function replace(objects: Map<string, Entry<T>>): void {
    const old = store;
    store = objects;
    for (const [key, entry] of old) {
      if (!objects.has(key)) emit((h) => h.onDelete?.(entry.obj), 'delete');
    }
    for (const [key, entry] of objects) {
      const before = old.get(key);
      if (before === undefined) emit((h) => h.onAdd?.(entry.obj), 'add');
      else if (before.resourceVersion !== entry.resourceVersion)
        emit((h) => h.onUpdate?.(before.obj, entry.obj), 'update');
    }
  }

  async function relist(): Promise<boolean> {
    const result = await Promise.race([listAll(), stoppedSignal]);
    if (result === 'stopped' || stopped) return false;
    replace(result.objects);
    resourceVersion = result.resourceVersion;
    resetBackoff();
    markCurrent();
    log.debug({ objects: store.size, resourceVersion }, 'listed');
    if (hasSynced) {
      emit((h) => h.onRelist?.(), 'relist');
    } else {
      hasSynced = true;
      log.info({ objects: store.size }, 'synced');
      emit((h) => h.onSynced?.(), 'synced');
      resolveFirstList();
    }
    return true;
  }

  /** Applies one watch event; returns an outcome when the event ends the watch. */
  function apply(type: string, raw: unknown): WatchOutcome | undefined {
    if (type === 'ERROR') {
      const code = isRecord(raw) ? raw['code'] : undefined;
      const reason = `watch ERROR event: ${isRecord(raw) ? JSON.stringify(raw) : String(raw)}`;
      return code === 410 ? { kind: 'expired', reason } : { kind: 'failed', events: 0, reason };
    }
    if (type === 'BOOKMARK') {
      const meta = isRecord(raw) && isRecord(raw['metadata']) ? raw['metadata'] : {};
      const version = stringField(meta, 'resourceVersion');
      if (version !== undefined && version !== '') resourceVersion = version;
      return undefined;
    }
    const meta = metaOf(raw);
    if (meta === undefined || !['ADDED', 'MODIFIED', 'DELETED'].includes(type)) {
      log.warn({ type }, 'ignoring an unexpected watch event');
      return undefined;
    }
    // Watched objects are the JSON form of what the list returns.
    const obj = transform(raw as Raw, meta.key);
    if (meta.resourceVersion !== '') resourceVersion = meta.resourceVersion;
    const before = store.get(meta.key);
    if (type === 'DELETED') {
      if (before === undefined) return undefined;
      store.delete(meta.key);
      emit((h) => h.onDelete?.(obj ?? before.obj), 'delete');
      return undefined;
    }
    if (obj === undefined) return undefined;
    store.set(meta.key, { obj, resourceVersion: meta.resourceVersion });
    if (before === undefined) emit((h) => h.onAdd?.(obj), 'add');
    else emit((h) => h.onUpdate?.(before.obj, obj), 'update');
    return undefined;
  }

  function watchOnce(): Promise<WatchOutcome> {
    return new Promise<WatchOutcome>((resolve) => {
      let settled = false;
      let events = 0;
      const opened = now();
      let request: AbortController | undefined;
      const finish = (outcome: WatchOutcome): void => {
        if (settled) return;
        settled = true;
        cancelWatch = undefined;
        request?.abort();
        resolve(outcome);
      };
      cancelWatch = () => {
        finish({ kind: 'stopped' });
      };
      const timeoutSeconds = Math.floor(MIN_WATCH_TIMEOUT_SECONDS * (1 + random()));
      const query: Record<string, string | number | boolean> = {
        resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds,
      };
      if (options.labelSelector !== undefined) query['labelSelector'] = options.labelSelector;
      if (options.fieldSelector !== undefined) query['fieldSelector'] = options.fieldSelector;
      const onEvent = (type: string, raw: unknown): void => {
        if (settled) return;
        events++;
        const outcome = apply(type, raw);
        if (outcome !== undefined) finish(outcome);
      };
      const onDone = (err: unknown): void => {
        if (err === null || err === undefined) {
          finish({ kind: 'closed', events, elapsedMs: now() - opened });
        } else if (statusCodeOf(err) === 410) {
          finish({ kind: 'expired', reason: describeError(err) });
        } else {
          finish({ kind: 'failed', events, reason: describeError(err), noAnswer: noAnswer(err) });
        }
      };
      watcher.watch(options.path, query, onEvent, onDone).then(
        (controller) => {
          request = controller;
          // Resolved before the stream ended: the server answered 200, the watch is open.
          if (settled) controller.abort();
          else markCurrent();
        },
        (err: unknown) => {
          onDone(err ?? new Error('watch failed'));
        },
      );
    });
  }

  function resetBackoff(): void {
    failures = 0;
    serverSuspect = false;
  }

  function markCurrent(): void {
    failingSinceMs = undefined;
    lastFailureReason = undefined;
  }

  /**
   * Waits the backoff for one more failure. `down`: the failure got no HTTP answer. The wait ends
   * early on stop(), or when a probe finds the server ready after it was seen down or starting.
   */
  async function waitBackoff(what: string, reason: string, down = false): Promise<void> {
    failures++;
    failingSinceMs ??= now();
    lastFailureReason = reason;
    if (down) serverSuspect = true;
    const ms = Math.min(backoff.maxMs, backoff.initialMs * 2 ** (failures - 1));
    log.warn({ reason, retryInMs: ms, failures }, `${what}; retrying after backoff`);
    const wake = new AbortController();
    const signal = AbortSignal.any([stopping.signal, wake.signal]);
    const probing =
      probeIntervalMs > 0 && ms > probeIntervalMs ? probeUntilReady(wake, signal) : undefined;
    await delay(ms, signal);
    wake.abort();
    await probing;
  }

  /** Probes /readyz each interval until `signal` aborts; aborts `wake` when the server is back. */
  async function probeUntilReady(wake: AbortController, signal: AbortSignal): Promise<void> {
    // Read through a call: the signal aborts while the loop awaits.
    const ended = (): boolean => signal.aborted;
    for (;;) {
      await delay(probeIntervalMs, signal);
      if (ended()) return;
      const ready = await probe(signal).catch(() => false);
      if (ended()) return;
      if (!ready) {
        serverSuspect = true;
      } else if (serverSuspect) {
        log.info('the API server is ready again; retrying now');
        resetBackoff();
        wake.abort();
        return;
      }
    }
  }

  /** Read through a call: `stopped` changes while the loop awaits. */
  const isStopped = (): boolean => stopped;

  async function run(): Promise<void> {
    let needList = true;
    while (!stopped) {
      if (needList) {
        try {
          if (!(await relist())) return;
          needList = false;
        } catch (err: unknown) {
          if (isStopped()) return;
          await waitBackoff('list failed', describeError(err), noAnswer(err));
          continue;
        }
      }
      const outcome = await watchOnce();
      switch (outcome.kind) {
        case 'stopped':
          return;
        case 'closed':
          if (outcome.events > 0) resetBackoff();
          else if (outcome.elapsedMs < SHORT_WATCH_MS) {
            // As client-go: a watch closed at once with nothing in it is an error, not a timeout.
            await waitBackoff('watch closed at once with no events', 'very short watch');
            break;
          }
          log.debug({ resourceVersion }, 'watch ended; watching again');
          break;
        case 'expired':
          log.info({ reason: outcome.reason }, 'resourceVersion expired (410); relisting');
          resourceVersion = '';
          needList = true;
          break;
        case 'failed':
          if (isStopped()) return;
          if (outcome.events > 0) resetBackoff();
          await waitBackoff('watch failed', outcome.reason, outcome.noAnswer);
          break;
      }
    }
  }

  return {
    start() {
      if (started || stopped) return stopped ? Promise.resolve() : firstList;
      started = true;
      loop = run().catch((err: unknown) => {
        log.error({ err: describeError(err) }, 'reflector loop failed');
      });
      return firstList;
    },
    async stop() {
      if (!stopped) {
        stopped = true;
        stopping.abort();
        cancelWatch?.();
        resolveFirstList();
      }
      await loop;
    },
    synced: () => hasSynced,
    get: (key) => store.get(key)?.obj,
    list: () => Array.from(store.values(), (e) => e.obj),
    size: () => store.size,
    resourceVersion: () => resourceVersion,
    failingSince: () => failingSinceMs,
    lastFailure: () => lastFailureReason,
    addHandlers(handlers) {
      handlerSets.add(handlers);
      for (const entry of store.values()) {
        try {
          handlers.onAdd?.(entry.obj);
        } catch (err: unknown) {
          log.error({ err: describeError(err) }, 'add handler threw');
        }
      }
      if (hasSynced) handlers.onSynced?.();
      return () => handlerSets.delete(handlers);
    },
  };
}
