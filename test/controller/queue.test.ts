import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import type { ProcessFn, QueueLogger, WorkQueueOptions } from '../../src/controller/queue.js';
import { WorkQueue } from '../../src/controller/queue.js';
import type { FakeClock } from '../support/fake-timers.js';
import { createFakeClock, settle } from '../support/fake-timers.js';

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: Error) => void;
}

function deferred(): Deferred {
  let resolve: () => void = () => undefined;
  let reject: (err: Error) => void = () => undefined;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A process function that records calls and waits until the test releases each run. */
function gated(): {
  process: ProcessFn;
  calls: string[];
  release: (key: string) => void;
  fail: (key: string) => void;
  inFlight: () => string[];
  signals: AbortSignal[];
} {
  const calls: string[] = [];
  const gates = new Map<string, Deferred>();
  const signals: AbortSignal[] = [];
  function gate(key: string): Deferred {
    const d = gates.get(key);
    if (d === undefined) throw new Error(`${key} is not in flight`);
    gates.delete(key);
    return d;
  }
  return {
    calls,
    signals,
    process: async (key, signal) => {
      calls.push(key);
      signals.push(signal);
      const d = deferred();
      gates.set(key, d);
      await d.promise;
    },
    release: (key) => {
      gate(key).resolve();
    },
    fail: (key) => {
      gate(key).reject(new Error(`${key} failed`));
    },
    inFlight: () => [...gates.keys()],
  };
}

function queueWith(clock: FakeClock, options: Partial<WorkQueueOptions> & { process: ProcessFn }) {
  return new WorkQueue({ timers: clock, ...options });
}

describe('work queue: dedup, one run per key, FIFO', () => {
  it('queues a key once however often it is added', async () => {
    const clock = createFakeClock();
    const calls: string[] = [];
    const q = queueWith(clock, { process: (key) => Promise.resolve(void calls.push(key)) });
    q.add('a');
    q.add('b');
    q.add('a');
    q.add('a');
    assert.equal(q.len(), 2);
    q.start();
    await q.idle();
    assert.deepEqual(calls, ['a', 'b']);
    assert.equal(q.len(), 0);
  });

  it('hands keys out first in, first out', async () => {
    const clock = createFakeClock();
    const g = gated();
    const q = queueWith(clock, { process: g.process, workers: 1 });
    for (const key of ['c', 'a', 'b']) q.add(key);
    q.start();
    await settle();
    q.add('d');
    q.add('c'); // c is in flight: it goes to the back, after d
    for (const key of ['c', 'a', 'b', 'd', 'c']) {
      await settle();
      assert.deepEqual(g.inFlight(), [key]);
      g.release(key);
    }
    await q.idle();
    assert.deepEqual(g.calls, ['c', 'a', 'b', 'd', 'c']);
  });

  it('processes up to `workers` keys at once, and the next when one ends', async () => {
    const clock = createFakeClock();
    const g = gated();
    const q = queueWith(clock, { process: g.process, workers: 3 });
    for (const key of ['a', 'b', 'c', 'd', 'e']) q.add(key);
    q.start();
    await settle();
    assert.deepEqual(g.inFlight(), ['a', 'b', 'c']);
    assert.equal(q.len(), 2);
    g.release('b');
    await settle();
    assert.deepEqual(g.inFlight(), ['a', 'c', 'd']);
    g.release('a');
    g.release('c');
    g.release('d');
    await settle();
    assert.deepEqual(g.inFlight(), ['e']);
    g.release('e');
    await q.idle();
  });

  it('defaults to two workers', async () => {
    const clock = createFakeClock();
    const g = gated();
    const q = queueWith(clock, { process: g.process });
    for (const key of ['a', 'b', 'c']) q.add(key);
    q.start();
    await settle();
    assert.deepEqual(g.inFlight(), ['a', 'b']);
    for (const key of ['a', 'b']) g.release(key);
    await settle();
    g.release('c');
    await q.idle();
  });

  it('runs a key added while in flight once more, after the run in flight', async () => {
    const clock = createFakeClock();
    const g = gated();
    const q = queueWith(clock, { process: g.process, workers: 4 });
    q.add('a');
    q.start();
    await settle();
    q.add('a');
    q.add('a');
    await settle();
    assert.deepEqual(g.calls, ['a'], 'not processed concurrently');
    assert.equal(q.len(), 0, 'a dirty key in flight is not queued');
    g.release('a');
    await settle();
    assert.deepEqual(g.calls, ['a', 'a']);
    g.release('a');
    await q.idle();
    assert.deepEqual(g.calls, ['a', 'a']);
  });

  it('never runs one key twice at once under many adds, and runs each key after its last add', async () => {
    const clock = createFakeClock();
    const keys = ['k0', 'k1', 'k2', 'k3', 'k4'];
    const inFlight = new Map<string, number>();
    const lastAdd = new Map<string, number>();
    const lastStart = new Map<string, number>();
    let maxPerKey = 0;
    let maxTotal = 0;
    let total = 0;
    let step = 0;
    const q = queueWith(clock, {
      workers: 3,
      process: async (key) => {
        const n = (inFlight.get(key) ?? 0) + 1;
        inFlight.set(key, n);
        total += 1;
        maxPerKey = Math.max(maxPerKey, n);
        maxTotal = Math.max(maxTotal, total);
        lastStart.set(key, step);
        await clock.delay(7 + (key.charCodeAt(1) % 3));
        inFlight.set(key, n - 1);
        total -= 1;
      },
    });
    q.start();
    let seed = 42;
    for (step = 1; step <= 400; step++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const key = keys[seed % keys.length] ?? 'k0';
      q.add(key);
      lastAdd.set(key, step);
      if (step % 4 === 0) await clock.advance(3);
    }
    const idle = q.idle();
    await clock.runAll();
    await idle;
    assert.equal(maxPerKey, 1);
    assert.equal(maxTotal, 3);
    for (const key of keys) {
      assert.ok(
        (lastStart.get(key) ?? 0) >= (lastAdd.get(key) ?? 0),
        `${key} ran after its last add`,
      );
    }
  });
});

describe('work queue: backoff and requeue', () => {
  it('retries a failing key after 5, 10, 20, … ms, capped; a success resets it', async () => {
    const clock = createFakeClock();
    let failing = true;
    const runs: number[] = [];
    const q = queueWith(clock, {
      workers: 1,
      backoff: { initialMs: 5, maxMs: 80 },
      process: () => {
        runs.push(clock.now());
        return failing ? Promise.reject(new Error('boom')) : Promise.resolve();
      },
    });
    q.add('a');
    q.start();
    for (let i = 0; i < 6; i++) {
      await settle();
      assert.deepEqual(clock.pending(), [[5, 10, 20, 40, 80, 80][i]]);
      await clock.advance(clock.pending()[0] ?? 0);
    }
    assert.deepEqual(clock.requested, [5, 10, 20, 40, 80, 80, 80]);
    assert.deepEqual(runs, [0, 5, 15, 35, 75, 155, 235]);
    assert.equal(q.failures('a'), 7);
    failing = false;
    await clock.advance(80);
    assert.equal(q.failures('a'), 0, 'success forgets');
    assert.deepEqual(clock.pending(), []);
    failing = true;
    q.add('a');
    await settle();
    assert.deepEqual(clock.pending(), [5], 'backoff starts again at initialMs');
    await q.shutdown({ drain: true });
  });

  it('a key waiting out its backoff is not run sooner when added again, nor when added in flight', async () => {
    const clock = createFakeClock();
    const g = gated();
    const q = queueWith(clock, {
      workers: 1,
      backoff: { initialMs: 100, maxMs: 1000 },
      process: g.process,
    });
    q.add('a');
    q.start();
    await settle();
    // Added while its run is in flight (the run's own writes produce events), then the run fails.
    q.add('a');
    g.fail('a');
    await settle();
    assert.deepEqual(clock.pending(), [100]);
    q.add('a');
    q.addAfter('a', 10);
    await settle();
    assert.deepEqual(g.calls, ['a'], 'no run before the backoff ends');
    await clock.advance(100);
    assert.deepEqual(g.calls, ['a', 'a'], 'one run when it ends');
    g.release('a');
    await settle();
    q.add('a');
    await settle();
    assert.deepEqual(g.calls, ['a', 'a', 'a'], 'after a success, adds run at once again');
    g.release('a');
    await q.shutdown({ drain: true });
  });

  it('keeps backoff per key', async () => {
    const clock = createFakeClock();
    const q = queueWith(clock, {
      process: (key) => (key === 'bad' ? Promise.reject(new Error('no')) : Promise.resolve()),
    });
    q.addRateLimited('good');
    q.addRateLimited('good');
    q.add('bad');
    q.start();
    await settle();
    assert.equal(q.failures('bad'), 1);
    assert.equal(q.failures('good'), 2, 'counted though the key was already waiting');
    // good's second delay (10 ms) is later than its pending 5 ms, so it sets no timer.
    assert.deepEqual(clock.requested, [5, 5]);
    q.forget('good');
    assert.equal(q.failures('good'), 0);
    await q.shutdown({ drain: false });
  });

  it('defaults to client-go backoff starting at 5 ms and capped at 60 s', async () => {
    const clock = createFakeClock();
    let failuresLeft = 16;
    const q = queueWith(clock, {
      process: () => (failuresLeft-- > 0 ? Promise.reject(new Error('again')) : Promise.resolve()),
    });
    q.add('a');
    q.start();
    await clock.runAll();
    const doubling = Array.from({ length: 14 }, (_, i) => 5 * 2 ** i); // 5 … 40_960
    assert.deepEqual(clock.requested, [...doubling, 60_000, 60_000]);
    assert.equal(q.failures('a'), 0);
  });

  it('logs failures with the key and the attempt through a pino logger', async () => {
    const clock = createFakeClock();
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { base: null, timestamp: false },
      { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    const asQueueLogger: QueueLogger = logger;
    const q = queueWith(clock, {
      logger: asQueueLogger,
      process: () => Promise.reject(new Error('conflict')),
    });
    q.add('ns/set');
    q.start();
    await settle();
    await clock.advance(5);
    await q.shutdown({ drain: true });
    assert.equal(lines.length, 2);
    assert.deepEqual(
      lines.map((l) => [l['key'], l['attempt'], l['retryInMs'], l['msg']]),
      [
        ['ns/set', 1, 5, 'reconcile failed; retrying'],
        ['ns/set', 2, 10, 'reconcile failed; retrying'],
      ],
    );
    assert.equal((lines[0]?.['err'] as { message?: string }).message, 'conflict');
  });

  it('requeues after requeueAfterMs and resets the backoff', async () => {
    const clock = createFakeClock();
    const results = [Promise.reject(new Error('first')), Promise.resolve({ requeueAfterMs: 1000 })];
    results[0]?.catch(() => undefined);
    const runs: number[] = [];
    const q = queueWith(clock, {
      process: () => {
        runs.push(clock.now());
        return results.shift() ?? Promise.resolve();
      },
    });
    q.add('a');
    q.start();
    await settle();
    assert.equal(q.failures('a'), 1);
    await clock.advance(5);
    assert.equal(q.failures('a'), 0);
    assert.deepEqual(clock.pending(), [1000]);
    await clock.advance(999);
    assert.deepEqual(runs, [0, 5]);
    await clock.advance(1);
    assert.deepEqual(runs, [0, 5, 1005]);
    await q.idle();
  });

  it('requeueAfterMs 0 processes the key again right away; {} does not requeue', async () => {
    const clock = createFakeClock();
    const results = [{ requeueAfterMs: 0 }, {}];
    let runs = 0;
    const q = queueWith(clock, {
      process: () => {
        runs += 1;
        return Promise.resolve(results.shift());
      },
    });
    q.add('a');
    q.start();
    await q.idle();
    assert.equal(runs, 2);
    assert.deepEqual(clock.requested, []);
  });
});

describe('work queue: addAfter', () => {
  function counting(clock: FakeClock) {
    const runs: [string, number][] = [];
    const q = queueWith(clock, {
      process: (key) => Promise.resolve(void runs.push([key, clock.now()])),
    });
    q.start();
    return { q, runs };
  }

  it('keeps the earliest pending time: a later addAfter does not postpone', async () => {
    const clock = createFakeClock();
    const { q, runs } = counting(clock);
    q.addAfter('a', 50);
    q.addAfter('a', 100);
    assert.deepEqual(clock.pending(), [50]);
    await clock.runAll();
    assert.deepEqual(runs, [['a', 50]]);
  });

  it('keeps the earliest pending time: an earlier addAfter advances', async () => {
    const clock = createFakeClock();
    const { q, runs } = counting(clock);
    q.addAfter('a', 100);
    await clock.advance(40);
    q.addAfter('a', 50); // due at 90 < 100
    assert.deepEqual(clock.pending(), [50]);
    await clock.runAll();
    assert.deepEqual(runs, [['a', 90]]);
  });

  it('an immediate add supersedes a pending delay', async () => {
    const clock = createFakeClock();
    const { q, runs } = counting(clock);
    q.addAfter('a', 100);
    q.add('a');
    assert.deepEqual(clock.pending(), []);
    await clock.advance(200);
    assert.deepEqual(runs, [['a', 0]]);
  });

  it('addAfter of a key already queued is a no-op; ms <= 0 adds now', async () => {
    const clock = createFakeClock();
    const g = gated();
    const q = queueWith(clock, { process: g.process, workers: 4 });
    q.add('a');
    q.addAfter('a', 10);
    assert.deepEqual(clock.pending(), []);
    q.addAfter('b', 0);
    q.addAfter('c', -5);
    assert.equal(q.len(), 3);
    q.start();
    await settle();
    q.addAfter('a', 10); // in flight, not dirty: delayed
    assert.deepEqual(clock.pending(), [10]);
    await clock.advance(10);
    g.release('a');
    await settle();
    assert.deepEqual(g.calls, ['a', 'b', 'c', 'a']);
    for (const key of ['b', 'c', 'a']) g.release(key);
    await q.idle();
  });

  it('idle() waits for delayed keys', async () => {
    const clock = createFakeClock();
    const { q, runs } = counting(clock);
    q.addAfter('a', 30);
    let idle = false;
    void q.idle().then(() => (idle = true));
    await clock.advance(29);
    assert.equal(idle, false);
    await clock.advance(1);
    assert.equal(idle, true);
    assert.deepEqual(runs, [['a', 30]]);
  });
});

describe('work queue: shutdown and resync', () => {
  it('drains: in-flight runs finish unaborted, queued and delayed keys are dropped', async () => {
    const clock = createFakeClock();
    const g = gated();
    const q = queueWith(clock, { process: g.process, workers: 1 });
    q.add('a');
    q.add('b');
    q.addAfter('c', 10);
    q.start();
    await settle();
    let done = false;
    const stopped = q.shutdown({ drain: true }).then(() => (done = true));
    q.add('d');
    q.addAfter('e', 5);
    assert.equal(q.len(), 0);
    assert.deepEqual(clock.pending(), []);
    await settle();
    assert.equal(done, false, 'waits for the run in flight');
    assert.equal(g.signals[0]?.aborted, false);
    g.release('a');
    await stopped;
    assert.deepEqual(g.calls, ['a']);
    q.start();
    q.add('a');
    await q.idle();
    assert.deepEqual(g.calls, ['a'], 'a stopped queue does not restart');
  });

  it('without drain aborts the signal of runs in flight and does not retry them', async () => {
    const clock = createFakeClock();
    const warnings: Record<string, unknown>[] = [];
    const q = queueWith(clock, {
      logger: { warn: (obj) => void warnings.push(obj) },
      process: (_key, signal) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => {
            reject(new Error('aborted'));
          });
        }),
    });
    q.add('a');
    q.add('b');
    q.start();
    await settle();
    await q.shutdown({ drain: false });
    assert.deepEqual(warnings, []);
    assert.equal(q.failures('a'), 0);
    assert.deepEqual(clock.pending(), []);
  });

  it('shutdown({ drain: false }) after a drain aborts the drain', async () => {
    const clock = createFakeClock();
    const g = gated();
    const q = queueWith(clock, { process: g.process });
    q.add('a');
    q.start();
    await settle();
    const [signal] = g.signals;
    assert.ok(signal);
    const first = q.shutdown({ drain: true });
    const abortedWhileDraining = signal.aborted;
    const second = q.shutdown({ drain: false });
    assert.equal(first, second);
    assert.deepEqual([abortedWhileDraining, signal.aborted], [false, true]);
    g.release('a');
    await first;
  });

  it('uses real timers by default (an add cancels the real delay, so nothing sleeps)', async () => {
    const calls: string[] = [];
    const q = new WorkQueue({ process: (key) => Promise.resolve(void calls.push(key)) });
    q.start();
    q.addAfter('a', 60_000);
    q.add('a');
    await q.idle();
    assert.deepEqual(calls, ['a']);
    await q.shutdown({ drain: true });
  });

  it('shutdown of an idle queue resolves at once', async () => {
    const q = new WorkQueue({ process: () => Promise.resolve() });
    await q.shutdown({ drain: true });
    await q.idle();
  });

  it('resync adds every key each period, and stops with the queue', async () => {
    const clock = createFakeClock();
    let known = ['a', 'b'];
    const runs: [string, number][] = [];
    const q = queueWith(clock, {
      resyncMs: 1000,
      keys: () => known,
      process: (key) => Promise.resolve(void runs.push([key, clock.now()])),
    });
    await clock.advance(5000);
    assert.deepEqual(runs, [], 'not before start()');
    q.start();
    await clock.advance(999);
    assert.deepEqual(runs, []);
    await clock.advance(1);
    known = ['c'];
    await clock.advance(1000);
    assert.deepEqual(runs, [
      ['a', 6000],
      ['b', 6000],
      ['c', 7000],
    ]);
    await q.shutdown({ drain: true });
    assert.deepEqual(clock.pending(), []);
  });

  it('a resync source that throws is logged and tried again next period', async () => {
    const clock = createFakeClock();
    const warnings: string[] = [];
    let calls = 0;
    const q = queueWith(clock, {
      resyncMs: 100,
      logger: { warn: (_obj, msg) => void warnings.push(msg) },
      keys: () => {
        calls += 1;
        if (calls === 1) throw new Error('cache gone');
        return ['a'];
      },
      process: () => Promise.resolve(),
    });
    q.start();
    await clock.advance(200);
    assert.deepEqual(warnings, ['resync failed to list keys']);
    assert.equal(calls, 2);
    await q.shutdown({ drain: true });
  });

  it('rejects bad options', () => {
    const process = (): Promise<void> => Promise.resolve();
    assert.throws(() => new WorkQueue({ process, workers: 0 }), RangeError);
    assert.throws(() => new WorkQueue({ process, workers: 1.5 }), RangeError);
    assert.throws(
      () => new WorkQueue({ process, backoff: { initialMs: 0, maxMs: 10 } }),
      RangeError,
    );
    assert.throws(() => new WorkQueue({ process, resyncMs: 0, keys: () => [] }), RangeError);
    assert.throws(() => new WorkQueue({ process, resyncMs: 10 }), TypeError);
  });
});

describe('work queue: metrics', () => {
  it('reports depth, adds, retries and work duration as client-go counts them', async () => {
    const clock = createFakeClock();
    const g = gated();
    const depths: number[] = [];
    const counts = { added: 0, retried: 0 };
    const processed: number[] = [];
    const q = queueWith(clock, {
      process: g.process,
      workers: 1,
      clock: () => clock.now() / 1000,
      metrics: {
        depth: (n) => void depths.push(n),
        added: () => {
          counts.added++;
        },
        retried: () => {
          counts.retried++;
        },
        processed: (s) => void processed.push(s),
      },
    });
    q.add('a');
    q.add('b');
    q.add('a'); // already queued: not an add
    assert.deepEqual(counts, { added: 2, retried: 0 });
    q.start();
    await settle();
    assert.equal(depths.at(-1), 1); // a in flight, b waiting
    await clock.advance(1500);
    g.fail('a');
    await settle();
    assert.deepEqual(processed, [1.5]);
    assert.equal(counts.retried, 1);
    g.release('b');
    await settle();
    assert.equal(depths.at(-1), 0);
    await clock.runAll();
    await settle();
    g.release('a');
    await q.idle();
    // The retry is an add again, after its backoff.
    assert.deepEqual(counts, { added: 3, retried: 1 });
    assert.equal(processed.length, 3);
    q.addRateLimited('c');
    assert.equal(counts.retried, 2);
    await q.shutdown({ drain: true });
    assert.equal(depths.at(-1), 0);
  });
});
