/**
 * A keyed work queue with client-go's workqueue semantics (k8s.io/client-go/util/workqueue):
 *
 * - `queue`, `dirty` and `processing` as in client-go's Type: a key waiting is queued once; a key
 *   being processed is never handed to a second worker; a key added while in flight is marked
 *   dirty and queued again when its run ends. Keys are handed out first in, first out.
 * - delays as in the delaying queue: `addAfter` keeps the earliest pending time per key. Unlike
 *   client-go, an immediate `add` cancels the key's pending delay instead of letting it fire a
 *   second, redundant run later.
 * - per-key backoff as in ItemExponentialFailureRateLimiter: initialMs * 2^failures, capped at
 *   maxMs, reset by `forget` (which a successful run calls).
 *
 * There is no overall rate limit here: API writes are limited by the token bucket in
 * rate-limiter.ts instead. Timers and the clock are injected so tests never sleep.
 */

/** setTimeout/clearTimeout and a monotonic clock in milliseconds; see `realTimers`. */
export interface Timers {
  now: () => number;
  setTimeout: (callback: () => void, ms: number) => unknown;
  clearTimeout: (handle: unknown) => void;
}

export const realTimers: Timers = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};

export interface QueueBackoff {
  initialMs: number;
  maxMs: number;
}

/** client-go's default per-item limiter starts at 5ms; we cap at a minute rather than 1000s. */
export const DEFAULT_QUEUE_BACKOFF: QueueBackoff = { initialMs: 5, maxMs: 60_000 };

/** The subset of a pino logger the queue uses. */
export interface QueueLogger {
  warn: (obj: Record<string, unknown>, msg: string) => void;
}

export interface ProcessResult {
  /** Process the key again after this long (0 or less: right away); also resets its backoff. */
  requeueAfterMs?: number;
}

export type ProcessFn = (
  key: string,
  signal: AbortSignal,
  // A reconciler that has nothing to say returns nothing.
  // eslint-disable-next-line @typescript-eslint/no-invalid-void-type
) => Promise<ProcessResult | void>;

/**
 * What the queue reports for metrics (client-go's workqueue metrics: depth, adds, retries, work
 * duration; src/server/controller-metrics.ts names them).
 */
export interface QueueMetrics {
  /** Keys waiting for a worker, after every change. */
  depth: (keys: number) => void;
  /** A key queued that was not queued yet. */
  added: () => void;
  /** A failed key queued again after its backoff. */
  retried: () => void;
  /** A run of `process` ended, after this long. */
  processed: (seconds: number) => void;
}

export interface WorkQueueOptions {
  /** Called with one key at a time per key; throwing retries the key with backoff. */
  process: ProcessFn;
  /** How many keys may be processed at once (default 2). */
  workers?: number;
  backoff?: QueueBackoff;
  timers?: Timers;
  logger?: QueueLogger;
  /** Every `resyncMs` after `start()`, add every key that `keys()` returns. */
  resyncMs?: number;
  keys?: () => Iterable<string>;
  metrics?: QueueMetrics;
  /** Seconds on a monotonic clock, for `metrics.processed` (default performance.now). */
  clock?: () => number;
}

export interface ShutdownOptions {
  /** true: let in-flight runs finish; false: abort the signal they were given. */
  drain: boolean;
}

export interface WorkQueue {
  /** Queue the key now (once, however often it is added) and cancel its pending delay. */
  add: (key: string) => void;
  /** Queue the key after `ms`; the earliest pending time wins; no-op if it is already queued. */
  addAfter: (key: string, ms: number) => void;
  /** Queue the key after its backoff, and count one more failure. */
  addRateLimited: (key: string) => void;
  /** Reset the key's backoff. */
  forget: (key: string) => void;
  /** Consecutive failures counted for the key. */
  failures: (key: string) => number;
  /** Keys waiting for a worker (neither delayed nor in flight). */
  len: () => number;
  /** Begin handing keys to workers (and resyncing). Keys may be added before. */
  start: () => void;
  /**
   * Take no more work: later adds are ignored, queued and delayed keys are dropped. Resolves
   * once in-flight runs have ended. Calling it again with `drain: false` aborts a drain.
   */
  shutdown: (options: ShutdownOptions) => Promise<void>;
  /** Resolves when nothing is queued, delayed or in flight (for tests). */
  idle: () => Promise<void>;
}

export function createWorkQueue(options: WorkQueueOptions): WorkQueue {
  const workers = options.workers ?? 2;
  const backoff = options.backoff ?? DEFAULT_QUEUE_BACKOFF;
  const timers = options.timers ?? realTimers;
  const { logger, resyncMs, keys, metrics } = options;
  const clock = options.clock ?? ((): number => performance.now() / 1000);
  checkOptions(workers, backoff, resyncMs, keys);

  const queue: string[] = [];
  const dirty = new Set<string>();
  const processing = new Set<string>();
  const delayed = new Map<string, { readyAt: number; handle: unknown }>();
  const failureCounts = new Map<string, number>();
  const abort = new AbortController();
  let idleWaiters: (() => void)[] = [];
  let started = false;
  let stopping = false;
  let stopped: Promise<void> | undefined;
  let resolveStopped: (() => void) | undefined;
  let resyncHandle: unknown;

  function add(key: string): void {
    if (stopping) return;
    cancelDelay(key);
    if (dirty.has(key)) return;
    dirty.add(key);
    // An in-flight key is queued again by `finish`.
    metrics?.added();
    if (processing.has(key)) return;
    queue.push(key);
    pump();
  }

  function addAfter(key: string, ms: number): void {
    if (stopping) return;
    if (ms <= 0) {
      add(key);
      return;
    }
    // Already due without a delay.
    if (dirty.has(key)) return;
    const readyAt = timers.now() + ms;
    const pending = delayed.get(key);
    if (pending !== undefined) {
      if (pending.readyAt <= readyAt) return;
      timers.clearTimeout(pending.handle);
    }
    const handle = timers.setTimeout(() => {
      delayed.delete(key);
      add(key);
      checkIdle();
    }, ms);
    delayed.set(key, { readyAt, handle });
  }

  function cancelDelay(key: string): void {
    const pending = delayed.get(key);
    if (pending === undefined) return;
    timers.clearTimeout(pending.handle);
    delayed.delete(key);
  }

  function nextBackoff(key: string): number {
    const exp = failureCounts.get(key) ?? 0;
    failureCounts.set(key, exp + 1);
    // The exponent is capped so that 2^exp stays finite.
    return Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(exp, 62));
  }

  function addRateLimited(key: string): void {
    metrics?.retried();
    addAfter(key, nextBackoff(key));
  }

  function forget(key: string): void {
    failureCounts.delete(key);
  }

  function pump(): void {
    while (started && !stopping && processing.size < workers) {
      const key = queue.shift();
      if (key === undefined) break;
      dirty.delete(key);
      processing.add(key);
      void run(key);
    }
    metrics?.depth(queue.length);
    checkIdle();
  }

  async function run(key: string): Promise<void> {
    const started = clock();
    try {
      // Start the reconcile on a fresh microtask so that pump() never recurses through it.
      await Promise.resolve();
      const result = await options.process(key, abort.signal);
      forget(key);
      if (typeof result === 'object' && result.requeueAfterMs !== undefined) {
        addAfter(key, result.requeueAfterMs);
      }
    } catch (err) {
      // A run we aborted is expected to throw; nothing to retry or report.
      if (!abort.signal.aborted) {
        const retryInMs = nextBackoff(key);
        const attempt = failureCounts.get(key) ?? 0;
        logger?.warn({ key, attempt, retryInMs, err }, 'reconcile failed; retrying');
        metrics?.retried();
        addAfter(key, retryInMs);
      }
    } finally {
      metrics?.processed(clock() - started);
      finish(key);
    }
  }

  function finish(key: string): void {
    processing.delete(key);
    if (dirty.has(key)) queue.push(key);
    if (stopping && processing.size === 0) resolveStopped?.();
    pump();
  }

  function checkIdle(): void {
    if (queue.length > 0 || delayed.size > 0 || processing.size > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  function scheduleResync(): void {
    if (resyncMs === undefined || keys === undefined) return;
    resyncHandle = timers.setTimeout(() => {
      resyncHandle = undefined;
      try {
        for (const key of keys()) add(key);
      } catch (err) {
        logger?.warn({ err }, 'resync failed to list keys');
      }
      scheduleResync();
    }, resyncMs);
  }

  function start(): void {
    if (started || stopping) return;
    started = true;
    scheduleResync();
    pump();
  }

  function shutdown({ drain }: ShutdownOptions): Promise<void> {
    if (!drain) abort.abort();
    if (stopped !== undefined) return stopped;
    stopping = true;
    if (resyncHandle !== undefined) timers.clearTimeout(resyncHandle);
    resyncHandle = undefined;
    for (const { handle } of delayed.values()) timers.clearTimeout(handle);
    delayed.clear();
    queue.length = 0;
    metrics?.depth(0);
    dirty.clear();
    stopped = new Promise<void>((resolve) => {
      resolveStopped = resolve;
    });
    if (processing.size === 0) resolveStopped?.();
    checkIdle();
    return stopped;
  }

  function idle(): Promise<void> {
    return new Promise<void>((resolve) => {
      idleWaiters.push(resolve);
      checkIdle();
    });
  }

  return {
    add,
    addAfter,
    addRateLimited,
    forget,
    failures: (key) => failureCounts.get(key) ?? 0,
    len: () => queue.length,
    start,
    shutdown,
    idle,
  };
}

function checkOptions(
  workers: number,
  backoff: QueueBackoff,
  resyncMs: number | undefined,
  keys: (() => Iterable<string>) | undefined,
): void {
  if (!Number.isInteger(workers) || workers < 1) {
    throw new RangeError(`workers must be a positive integer, got ${workers}`);
  }
  if (!(backoff.initialMs > 0 && backoff.maxMs >= backoff.initialMs)) {
    throw new RangeError('backoff needs 0 < initialMs <= maxMs');
  }
  if (resyncMs !== undefined && !(resyncMs > 0)) {
    throw new RangeError(`resyncMs must be positive, got ${resyncMs}`);
  }
  if ((resyncMs === undefined) !== (keys === undefined)) {
    throw new TypeError('resyncMs and keys go together');
  }
}
