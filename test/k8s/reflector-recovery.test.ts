/**
 * The reflector after an API server restart (issue 23): the new server's warm-up answers 403 and
 * its /readyz fails, which grew the backoff to 8 s and more; the watch must come back within
 * seconds of /readyz answering ok, without cutting short the backoff of a server that is ready
 * and keeps refusing. Time is the fake clock's (test/support/fake-timers.ts), or no time at all:
 * a backoff that never ends on its own, which only a probe can cut short.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';

import { CoreV1Api } from '@kubernetes/client-node';
import { pino } from 'pino';

import type { Reflector, ReflectorOptions } from '../../src/k8s/reflector.js';
import { createReflector, probeReadyz } from '../../src/k8s/reflector.js';
import type { FakeApiServer, KubeObject, RequestInfo } from '../fake-apiserver/index.js';
import { PODS } from '../fake-apiserver/index.js';
import { Recorder, withServer } from '../fake-apiserver/harness.js';
import type { FakeClock } from '../support/fake-timers.js';
import { createFakeClock } from '../support/fake-timers.js';

const isPodWatch = (r: RequestInfo): boolean => r.verb === 'watch' && r.resource === 'pods';
const isReadyz = (r: RequestInfo): boolean => r.path === '/readyz';
const podWatchOpen = (server: FakeApiServer): boolean =>
  server.control.watches((w) => w.resource.resource === 'pods').length > 0;

function pod(name: string): KubeObject {
  return { metadata: { name }, spec: { containers: [{ name: 'app', image: 'app:1' }] } };
}

function reflectorOn(
  server: FakeApiServer,
  events: Recorder<string>,
  extra: Partial<ReflectorOptions<unknown, string>>,
): Reflector<string> {
  const kc = server.kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  return createReflector<unknown, string>({
    kubeConfig: kc,
    path: '/api/v1/namespaces/default/pods',
    list: (params) => core.listNamespacedPod({ namespace: 'default', ...params }),
    transform: (raw) => (raw as { metadata: { name: string } }).metadata.name,
    logger: pino({ level: 'silent' }),
    handlers: {
      onAdd: (name) => {
        events.push(`add ${name}`);
      },
    },
    ...extra,
  });
}

/** Real-time polling for what real I/O (the fake server's answers) brings about. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(1);
  }
}

/** The reflector's delay on the fake clock: a timer that an abort clears and resolves. */
function clockDelay(clock: FakeClock): (ms: number, signal: AbortSignal) => Promise<void> {
  return (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) {
        resolve();
        return;
      }
      const timer = clock.setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = (): void => {
        clock.clearTimeout(timer);
        resolve();
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
}

describe('the reflector after an API server restart', () => {
  it('watches again within 2 s of /readyz answering ok, after a 20 s warm-up of 403s', async () => {
    await withServer(async (server) => {
      server.store.create(PODS, 'default', pod('a'));
      const clock = createFakeClock(1_000_000);
      const events = new Recorder<string>();
      // The probes are the real ones, counted so that time moves only once each has answered.
      let probing = 0;
      const probe = probeReadyz(server.kubeConfig());
      const reflector = reflectorOn(server, events, {
        delay: clockDelay(clock),
        now: clock.now,
        probe: async (signal) => {
          probing++;
          try {
            return await probe(signal);
          } finally {
            probing--;
          }
        },
      });
      /**
       * Once the reflector waits (a timer pending, no probe out), fires its next timer, not
       * beyond `notAfter`; returns at once when `done`.
       */
      const step = async (notAfter: number, done: () => boolean): Promise<void> => {
        await until(
          () => done() || (clock.pending().length > 0 && probing === 0),
          'the reflector to wait',
        );
        if (done()) return;
        await clock.advance(Math.min(clock.pending()[0] ?? 0, notAfter - clock.now()));
      };
      try {
        await reflector.start();
        await server.control.waitForWatch();
        assert.equal(reflector.failingSince(), undefined);

        const restartedAt = clock.now();
        const warmUp = server.control.warmUp();
        server.control.closeWatches(() => true, { abrupt: true });
        const readyAt = restartedAt + 20_000;
        while (clock.now() < readyAt) await step(readyAt, () => false);
        assert.ok(server.control.requests((r) => isPodWatch(r) && r.status === 403).length >= 4);
        assert.equal(reflector.failingSince(), restartedAt, 'failing since the watch dropped');
        warmUp.end();

        while (!podWatchOpen(server)) {
          assert.ok(clock.now() - readyAt < 60_000, 'the watch never came back');
          await step(Infinity, () => podWatchOpen(server));
        }
        const recoveredInMs = clock.now() - readyAt;
        assert.ok(recoveredInMs <= 2_000, `watching again ${recoveredInMs} ms after ready`);
        // The server registers the watch just before the client reads its answer.
        await until(() => reflector.failingSince() === undefined, 'the watch open');
        server.store.create(PODS, 'default', pod('b'));
        await events.until((e) => e.includes('add b'), 'the event after the restart');
      } finally {
        await reflector.stop();
      }
    });
  });

  /** Backoffs that end only when their signal aborts; the probe interval (3 ms) is real. */
  const PROBE_MS = 3;
  const endless = (ms: number, signal: AbortSignal): Promise<void> =>
    ms === PROBE_MS
      ? sleep(ms, undefined, { signal }).catch(() => undefined)
      : new Promise((resolve) => {
          signal.addEventListener('abort', () => {
            resolve();
          });
        });

  /** A reflector watching pods with `endless` backoffs, stopped after `body`. */
  const withEndlessBackoff = (
    body: (
      server: FakeApiServer,
      events: Recorder<string>,
      reflector: Reflector<string>,
    ) => Promise<void>,
  ): Promise<void> =>
    withServer(async (server) => {
      const events = new Recorder<string>();
      const reflector = reflectorOn(server, events, {
        delay: endless,
        probeIntervalMs: PROBE_MS,
      });
      try {
        await reflector.start();
        await server.control.waitForWatch();
        await body(server, events, reflector);
      } finally {
        await reflector.stop();
      }
    });

  it('ends a backoff when /readyz answers ok after the server was seen starting', async () => {
    await withEndlessBackoff(async (server, events) => {
      const warmUp = server.control.warmUp();
      server.control.closeWatches(() => true, { abrupt: true });
      await server.control.waitForRequest((r) => isReadyz(r) && r.status === 500);
      assert.equal(podWatchOpen(server), false);
      warmUp.end();
      await server.control.waitForWatch();
      server.store.create(PODS, 'default', pod('b'));
      await events.until((e) => e.includes('add b'), 'the event after the warm-up');
    });
  });

  it('keeps the backoff of a ready server that refuses the watch (RBAC), probing meanwhile', async () => {
    await withEndlessBackoff(async (server, _events, reflector) => {
      const forbidden = server.control.failNext({
        match: isPodWatch,
        status: 403,
        times: Infinity,
      });
      server.control.closeWatches(() => true, { abrupt: true });
      await until(
        () => server.control.requests((r) => isReadyz(r) && r.status === 200).length >= 5,
        'five probes answered ok',
      );
      // The dropped connection (no answer) was retried once a probe said ready; the 403 from a
      // ready server is not retried before its backoff ends.
      assert.equal(forbidden.hits(), 1);
      assert.ok(reflector.failingSince() !== undefined);
      forbidden.cancel();
    });
  });
});
