/**
 * Limits on API writes: a token bucket (client-go's rest.Config QPS/Burst, golang.org/x/time/rate)
 * and a bounded-concurrency runner for the pod patches of one reconcile.
 */

export interface TokenBucketOptions {
  /** Tokens added per second. */
  qps: number;
  /** Bucket size, and the tokens available at the start. */
  burst: number;
  /** Monotonic clock in milliseconds (default performance.now). */
  now?: () => number;
  /** Resolves after `ms` (default setTimeout). */
  delay?: (ms: number) => Promise<void>;
}

export interface TokenBucket {
  /** Resolves once a token is ours; waiters are served first come, first served. */
  take: (signal?: AbortSignal) => Promise<void>;
  /** Takes a token if one is free and nobody is waiting. */
  tryTake: () => boolean;
}

// Refill arithmetic is in floating point: 0.999999… tokens count as one.
const EPSILON = 1e-9;

export function createTokenBucket(options: TokenBucketOptions): TokenBucket {
  const { qps, burst } = options;
  if (!(Number.isFinite(qps) && qps > 0)) throw new RangeError(`qps must be positive, got ${qps}`);
  if (!(Number.isInteger(burst) && burst >= 1)) {
    throw new RangeError(`burst must be a positive integer, got ${burst}`);
  }
  const now = options.now ?? (() => performance.now());
  const delay = options.delay ?? realDelay;
  const waiters: { grant: () => void }[] = [];
  let tokens = burst;
  let last = now();
  let pumping = false;

  function refill(): void {
    const t = now();
    tokens = Math.min(burst, tokens + ((t - last) * qps) / 1000);
    last = t;
  }

  function tryTake(): boolean {
    if (waiters.length > 0) return false;
    refill();
    if (tokens < 1 - EPSILON) return false;
    tokens -= 1;
    return true;
  }

  function take(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted === true) return Promise.reject(abortReason(signal));
    if (tryTake()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const i = waiters.indexOf(waiter);
        if (i >= 0) waiters.splice(i, 1);
        reject(abortReason(signal));
      };
      const waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      waiters.push(waiter);
      void pump();
    });
  }

  // One loop hands tokens to waiters in order, sleeping until the next token is due. A waiter
  // that aborts just leaves the line; the loop stops when the line is empty.
  async function pump(): Promise<void> {
    if (pumping) return;
    pumping = true;
    try {
      for (;;) {
        refill();
        while (waiters.length > 0 && tokens >= 1 - EPSILON) {
          tokens -= 1;
          waiters.shift()?.grant();
        }
        if (waiters.length === 0) return;
        await delay(((1 - tokens) * 1000) / qps);
      }
    } finally {
      pumping = false;
    }
  }

  return { take, tryTake };
}

function realDelay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error
    ? reason
    : new DOMException('The operation was aborted', 'AbortError');
}
