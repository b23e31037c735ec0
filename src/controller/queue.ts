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
 *   maxMs, reset by `forget` (which a successful run calls). Unlike client-go, a key waiting out a
 *   failed run's backoff is not run sooner when it is added again: the events of a failing
 *   round's own writes would otherwise run it again at once, and a failing write would be retried
 *   without pause (an add during the backoff is served when it ends).
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

const realTimers: Timers = {
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
const DEFAULT_QUEUE_BACKOFF: QueueBackoff = { initialMs: 5, maxMs: 60_000 };

/** The subset of a pino logger the queue uses. */
export interface QueueLogger {
  warn: (obj: Record<string, unknown>, msg: string) => void;
}

interface ProcessResult {
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

interface DelayedKey {
  readyAt: number;
  handle: unknown;
}

/**
 * The queue: client-go's Type (`add`, `get`, `done`, `shutdown`), its delaying queue
 * (`addAfter`), its rate-limiting queue (`addRateLimited`, `forget`, `failures`), and the worker
 * loop that hands each key from `get` to `process` and calls `done` when the run ends.
 */
export class WorkQueue {
  private readonly process: ProcessFn;
  private readonly workers: number;
  private readonly backoff: QueueBackoff;
  private readonly timers: Timers;
  private readonly logger: QueueLogger | undefined;
  private readonly resyncMs: number | undefined;
  private readonly keys: (() => Iterable<string>) | undefined;
  private readonly metrics: QueueMetrics | undefined;
  private readonly clock: () => number;

  /** Keys waiting for a worker, first in first out. */
  private readonly queue: string[] = [];
  /** Keys that need a run: queued, or added again while in flight. */
  private readonly dirty = new Set<string>();
  /** Keys a worker is running now. */
  private readonly processing = new Set<string>();
  private readonly delayed = new Map<string, DelayedKey>();
  private readonly failureCounts = new Map<string, number>();
  /** Keys waiting out a failed run's backoff. */
  private readonly backingOff = new Set<string>();
  private readonly abort = new AbortController();
  private idleWaiters: (() => void)[] = [];
  private started = false;
  private stopping = false;
  private stopped: Promise<void> | undefined;
  private resolveStopped: (() => void) | undefined;
  private resyncHandle: unknown;

  constructor(options: WorkQueueOptions) {
    this.process = options.process;
    this.workers = options.workers ?? 2;
    this.backoff = options.backoff ?? DEFAULT_QUEUE_BACKOFF;
    this.timers = options.timers ?? realTimers;
    this.logger = options.logger;
    this.resyncMs = options.resyncMs;
    this.keys = options.keys;
    this.metrics = options.metrics;
    this.clock = options.clock ?? ((): number => performance.now() / 1000);
    checkOptions(this.workers, this.backoff, this.resyncMs, this.keys);
  }

  /** Queue the key now (once, however often it is added) and cancel its pending delay. */
  add(key: string): void {
    if (this.stopping || this.backingOff.has(key)) return;
    this.cancelDelay(key);
    if (this.dirty.has(key)) return;
    this.dirty.add(key);
    // An in-flight key is queued again by `done`.
    this.metrics?.added();
    if (this.processing.has(key)) return;
    this.queue.push(key);
    this.pump();
  }

  /** Queue the key after `ms`; the earliest pending time wins; no-op if it is already queued. */
  addAfter(key: string, ms: number): void {
    if (this.stopping) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    // Already due without a delay, or due when its backoff ends.
    if (this.dirty.has(key) || this.backingOff.has(key)) return;
    const readyAt = this.timers.now() + ms;
    const pending = this.delayed.get(key);
    if (pending !== undefined) {
      if (pending.readyAt <= readyAt) return;
      this.timers.clearTimeout(pending.handle);
    }
    const handle = this.timers.setTimeout(() => {
      this.delayed.delete(key);
      this.backingOff.delete(key);
      this.add(key);
      this.checkIdle();
    }, ms);
    this.delayed.set(key, { readyAt, handle });
  }

  /** Queue the key after its backoff, and count one more failure. */
  addRateLimited(key: string): void {
    this.metrics?.retried();
    this.addAfter(key, this.nextBackoff(key));
    if (this.delayed.has(key)) this.backingOff.add(key);
  }

  /** Reset the key's backoff. */
  forget(key: string): void {
    this.failureCounts.delete(key);
  }

  /** Consecutive failures counted for the key. */
  failures(key: string): number {
    return this.failureCounts.get(key) ?? 0;
  }

  /** Keys waiting for a worker (neither delayed nor in flight). */
  len(): number {
    return this.queue.length;
  }

  /** Begin handing keys to workers (and resyncing). Keys may be added before. */
  start(): void {
    if (this.started || this.stopping) return;
    this.started = true;
    this.scheduleResync();
    this.pump();
  }

  /**
   * Take no more work: later adds are ignored, queued and delayed keys are dropped. Resolves
   * once in-flight runs have ended. Calling it again with `drain: false` aborts a drain.
   */
  shutdown({ drain }: ShutdownOptions): Promise<void> {
    if (!drain) this.abort.abort();
    if (this.stopped !== undefined) return this.stopped;
    this.stopping = true;
    if (this.resyncHandle !== undefined) this.timers.clearTimeout(this.resyncHandle);
    this.resyncHandle = undefined;
    for (const { handle } of this.delayed.values()) this.timers.clearTimeout(handle);
    this.delayed.clear();
    this.backingOff.clear();
    this.queue.length = 0;
    this.metrics?.depth(0);
    this.dirty.clear();
    this.stopped = new Promise<void>((resolve) => {
      this.resolveStopped = resolve;
    });
    if (this.processing.size === 0) this.resolveStopped?.();
    this.checkIdle();
    return this.stopped;
  }

  /** Resolves when nothing is queued, delayed or in flight (for tests). */
  idle(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.idleWaiters.push(resolve);
      this.checkIdle();
    });
  }

  private cancelDelay(key: string): void {
    const pending = this.delayed.get(key);
    if (pending === undefined) return;
    this.timers.clearTimeout(pending.handle);
    this.delayed.delete(key);
  }

  private nextBackoff(key: string): number {
    const exp = this.failureCounts.get(key) ?? 0;
    this.failureCounts.set(key, exp + 1);
    // The exponent is capped so that 2^exp stays finite.
    return Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** Math.min(exp, 62));
  }

  /** Hand queued keys to idle workers. */
  private pump(): void {
    while (this.started && !this.stopping && this.processing.size < this.workers) {
      const key = this.get();
      if (key === undefined) break;
      void this.processItem(key);
    }
    this.metrics?.depth(this.queue.length);
    this.checkIdle();
  }

  /** The next queued key, now in flight; undefined when none is queued. */
  private get(): string | undefined {
    const key = this.queue.shift();
    if (key === undefined) return undefined;
    this.dirty.delete(key);
    this.processing.add(key);
    return key;
  }

  /** One run of `process`; success forgets the key's backoff, failure queues it after it. */
  private async processItem(key: string): Promise<void> {
    const startedAt = this.clock();
    try {
      // Start the reconcile on a fresh microtask so that pump() never recurses through it.
      await Promise.resolve();
      const result = await this.process(key, this.abort.signal);
      this.forget(key);
      if (typeof result === 'object' && result.requeueAfterMs !== undefined) {
        this.addAfter(key, result.requeueAfterMs);
      }
    } catch (err) {
      // A run we aborted is expected to throw; nothing to retry or report.
      if (!this.abort.signal.aborted) {
        const retryInMs = this.nextBackoff(key);
        const attempt = this.failures(key);
        this.logger?.warn({ key, attempt, retryInMs, err }, 'reconcile failed; retrying');
        this.metrics?.retried();
        this.dirty.delete(key);
        this.addAfter(key, retryInMs);
        this.backingOff.add(key);
      }
    } finally {
      this.metrics?.processed(this.clock() - startedAt);
      this.done(key);
    }
  }

  /** The key's run ended: queue it again if it was added meanwhile. */
  private done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) this.queue.push(key);
    if (this.stopping && this.processing.size === 0) this.resolveStopped?.();
    this.pump();
  }

  private checkIdle(): void {
    if (this.queue.length > 0 || this.delayed.size > 0 || this.processing.size > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private scheduleResync(): void {
    const { resyncMs, keys } = this;
    if (resyncMs === undefined || keys === undefined) return;
    this.resyncHandle = this.timers.setTimeout(() => {
      this.resyncHandle = undefined;
      try {
        for (const key of keys()) this.add(key);
      } catch (err) {
        this.logger?.warn({ err }, 'resync failed to list keys');
      }
      this.scheduleResync();
    }, resyncMs);
  }
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
