/**
 * A fake clock for code that takes injected timers (`now`, `setTimeout`, `clearTimeout`,
 * `delay`). Time moves only through `advance` and `runAll`, which fire due timers in time order
 * (ties in creation order) and let promise chains settle after each one, so tests never sleep.
 */

export interface FakeClock {
  now: () => number;
  setTimeout: (callback: () => void, ms: number) => unknown;
  clearTimeout: (handle: unknown) => void;
  delay: (ms: number) => Promise<void>;
  /** Every delay passed to setTimeout, in call order. */
  readonly requested: number[];
  /** How far in the future each pending timer fires, soonest first. */
  pending: () => number[];
  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  advance: (ms: number) => Promise<void>;
  /** Fires timers, soonest first, until none is left; throws after `limit` of them. */
  runAll: (limit?: number) => Promise<void>;
}

interface Timer {
  at: number;
  seq: number;
  callback: () => void;
}

/** Lets every pending promise reaction run: setImmediate comes after the microtask queue. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export function createFakeClock(start = 0): FakeClock {
  let time = start;
  let seq = 0;
  const timers = new Set<Timer>();
  const requested: number[] = [];

  function nextDue(limit: number): Timer | undefined {
    let next: Timer | undefined;
    for (const t of timers) {
      if (t.at > limit) continue;
      if (next === undefined || t.at < next.at || (t.at === next.at && t.seq < next.seq)) next = t;
    }
    return next;
  }

  async function fire(timer: Timer): Promise<void> {
    timers.delete(timer);
    time = Math.max(time, timer.at);
    timer.callback();
    await settle();
  }

  const setTimeoutFake = (callback: () => void, ms: number): unknown => {
    requested.push(ms);
    const timer: Timer = { at: time + Math.max(0, ms), seq: seq++, callback };
    timers.add(timer);
    return timer;
  };

  return {
    now: () => time,
    setTimeout: setTimeoutFake,
    clearTimeout: (handle) => {
      timers.delete(handle as Timer);
    },
    delay: (ms) =>
      new Promise<void>((resolve) => {
        setTimeoutFake(resolve, ms);
      }),
    requested,
    pending: () => [...timers].sort((a, b) => a.at - b.at || a.seq - b.seq).map((t) => t.at - time),
    advance: async (ms) => {
      const target = time + ms;
      await settle();
      for (let t = nextDue(target); t !== undefined; t = nextDue(target)) await fire(t);
      time = target;
      await settle();
    },
    runAll: async (limit = 10_000) => {
      await settle();
      for (let fired = 0; ; fired++) {
        const t = nextDue(Infinity);
        if (t === undefined) return;
        if (fired >= limit) throw new Error(`runAll: more than ${limit} timers fired`);
        await fire(t);
      }
    },
  };
}
