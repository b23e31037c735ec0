import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTokenBucket } from '../../src/controller/rate-limiter.js';
import type { FakeClock } from '../support/fake-timers.js';
import { createFakeClock, settle } from '../support/fake-timers.js';

function bucket(clock: FakeClock, qps: number, burst: number) {
  return createTokenBucket({ qps, burst, now: clock.now, delay: clock.delay });
}

function isAbortError(err: unknown): boolean {
  return err instanceof Error && err.name === 'AbortError';
}

describe('token bucket', () => {
  it('starts full, refills at qps, and holds at most burst', async () => {
    const clock = createFakeClock();
    const b = bucket(clock, 10, 3);
    assert.deepEqual(
      [b.tryTake(), b.tryTake(), b.tryTake(), b.tryTake()],
      [true, true, true, false],
    );
    await clock.advance(99);
    assert.equal(b.tryTake(), false);
    await clock.advance(1);
    assert.equal(b.tryTake(), true, 'one token per 100 ms at 10 qps');
    assert.equal(b.tryTake(), false);
    await clock.advance(10_000);
    assert.deepEqual(
      [b.tryTake(), b.tryTake(), b.tryTake(), b.tryTake()],
      [true, true, true, false],
    );
  });

  it('take() lets a burst through at once, then one per 1/qps', async () => {
    const clock = createFakeClock();
    const b = bucket(clock, 20, 30);
    const granted: number[] = [];
    for (let i = 0; i < 40; i++) void b.take().then(() => granted.push(clock.now()));
    await clock.runAll();
    assert.deepEqual(granted, [
      ...Array<number>(30).fill(0),
      ...Array.from({ length: 10 }, (_, i) => 50 * (i + 1)),
    ]);
  });

  it('keeps 20 qps over a long run', async () => {
    const clock = createFakeClock();
    const b = bucket(clock, 20, 1);
    let granted = 0;
    for (let i = 0; i < 201; i++) void b.take().then(() => (granted += 1));
    await clock.advance(10_000);
    assert.equal(granted, 201, '1 at once + 200 over 10 s');
    assert.deepEqual(clock.pending(), []);
  });

  it('serves waiters first come, first served, and tryTake does not jump the line', async () => {
    const clock = createFakeClock();
    const b = bucket(clock, 10, 1);
    assert.equal(b.tryTake(), true);
    const order: string[] = [];
    for (const name of ['a', 'b', 'c']) void b.take().then(() => order.push(name));
    await clock.advance(100);
    assert.deepEqual(order, ['a']);
    assert.equal(b.tryTake(), false, 'b and c are waiting');
    void b.take().then(() => order.push('d'));
    await clock.advance(300);
    assert.deepEqual(order, ['a', 'b', 'c', 'd']);
  });

  it('an aborted waiter leaves the line and rejects; the next one takes its place', async () => {
    const clock = createFakeClock();
    const b = bucket(clock, 10, 1);
    b.tryTake();
    const order: [string, number][] = [];
    const ac = new AbortController();
    void b.take().then(() => order.push(['a', clock.now()]));
    const aborted = b.take(ac.signal);
    void b.take().then(() => order.push(['c', clock.now()]));
    await settle();
    ac.abort();
    await assert.rejects(aborted, isAbortError);
    await clock.runAll();
    assert.deepEqual(order, [
      ['a', 100],
      ['c', 200],
    ]);
  });

  it('rejects with the abort reason, and at once for an aborted signal without taking a token', async () => {
    const clock = createFakeClock();
    const b = bucket(clock, 1, 1);
    const reason = new Error('leader lost');
    await assert.rejects(b.take(AbortSignal.abort(reason)), (err) => err === reason);
    assert.equal(b.tryTake(), true, 'the token is still there');
    const ac = new AbortController();
    const waiting = b.take(ac.signal);
    ac.abort('not an Error');
    await assert.rejects(waiting, isAbortError);
  });

  it('the abort listener goes away once a token is granted', async () => {
    const clock = createFakeClock();
    const b = bucket(clock, 10, 1);
    b.tryTake();
    const ac = new AbortController();
    const taken = b.take(ac.signal);
    await clock.advance(100);
    await taken;
    ac.abort();
    assert.equal(b.tryTake(), false, 'aborting afterwards gives nothing back');
  });

  it('defaults to the real clock (a smoke test: waits about 2 ms)', async () => {
    const b = createTokenBucket({ qps: 1000, burst: 1 });
    await Promise.all([b.take(), b.take(), b.take()]);
  });

  it('rejects bad options', () => {
    assert.throws(() => createTokenBucket({ qps: 0, burst: 1 }), RangeError);
    assert.throws(() => createTokenBucket({ qps: Infinity, burst: 1 }), RangeError);
    assert.throws(() => createTokenBucket({ qps: 1, burst: 0 }), RangeError);
    assert.throws(() => createTokenBucket({ qps: 1, burst: 1.5 }), RangeError);
  });
});
