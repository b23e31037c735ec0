/**
 * /readyz and stale caches (issue 23): a cache whose list or watch has failed for longer than
 * --max-cache-staleness makes /readyz answer 503 with the reason, while /healthz stays ok; the
 * cluster source reports its failing caches while the API server warms up after a restart. The
 * standalone controller's /readyz (src/cli/controller.ts) does the same with its own caches.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { pino } from 'pino';

import type { FailingCache, SnapshotSource } from '../../src/cache/snapshot.js';
import { makeSnapshot } from '../../src/cache/snapshot.js';
import { createClusterSource } from '../../src/cache/cluster-source.js';
import { SharedCaches } from '../../src/k8s/shared-caches.js';
import { controllerNotReady } from '../../src/cli/controller.js';
import { Controller } from '../../src/controller/controller.js';
import { buildHealthApp } from '../../src/server/app.js';
import { createMetrics } from '../../src/server/metrics.js';
import { withServer } from '../fake-apiserver/harness.js';
import type { FakeApiServer } from '../fake-apiserver/server.js';
import { eventually } from '../support/eventually.js';

function fakeSource(failing: FailingCache[], synced = true): SnapshotSource {
  return {
    read: () => makeSnapshot([], new Map(), 0),
    isSynced: () => synced,
    failing: () => failing,
    start: () => Promise.resolve(),
    stop: () => Promise.resolve(),
  };
}

async function probes(
  source: SnapshotSource,
  nowMs: number,
  maxCacheStalenessSeconds?: number,
): Promise<{ readyz: number; reason: string; healthz: number; metrics: string }> {
  const app = buildHealthApp({
    source,
    logger: pino({ level: 'silent' }),
    metrics: createMetrics(
      () => source,
      () => nowMs,
    ),
    now: () => new Date(nowMs),
    ...(maxCacheStalenessSeconds === undefined ? {} : { maxCacheStalenessSeconds }),
  });
  try {
    const readyz = await app.inject({ method: 'GET', url: '/readyz' });
    const healthz = await app.inject({ method: 'GET', url: '/healthz' });
    const metrics = await app.inject({ method: 'GET', url: '/metrics' });
    const body = readyz.statusCode === 200 ? {} : readyz.json<{ message?: string }>();
    return {
      readyz: readyz.statusCode,
      reason: body.message ?? '',
      healthz: healthz.statusCode,
      metrics: metrics.body,
    };
  } finally {
    await app.close();
  }
}

/**
 * With a watch open per cache (`all`, sorted), cuts them while the API server warms up: every
 * cache is reported failing, then none once it is ready.
 */
async function failWhileWarmingUp(
  server: FakeApiServer,
  failing: () => FailingCache[],
  all: string[],
): Promise<void> {
  await server.control.waitForWatches((open) => open.length === all.length);
  assert.deepEqual(failing(), []);
  const warmUp = server.control.warmUp();
  server.control.closeWatches(() => true, { abrupt: true });
  const names = (): string =>
    failing()
      .map((c) => c.name)
      .sort()
      .join();
  await eventually(() => names() === all.join(), 'every cache failing', 10_000);
  warmUp.end();
  await eventually(() => names() === '', 'the caches current again', 10_000);
}

describe('/readyz and stale caches', () => {
  const failing: FailingCache[] = [
    { name: 'SidecarSets', sinceMs: 100_000, reason: 'Forbidden (HTTP 403)' },
    { name: 'Namespaces', sinceMs: 125_000, reason: 'connect ECONNREFUSED' },
  ];

  it('by default stays ready however long a cache fails, and says so in a gauge', async () => {
    const got = await probes(fakeSource(failing), 10_000_000);
    assert.equal(got.readyz, 200);
    assert.equal(got.healthz, 200);
    const failingSeconds = got.metrics
      .split('\n')
      .filter((line) => line.startsWith('sidecarset_cache_failing_seconds{'));
    assert.deepEqual(failingSeconds, [
      'sidecarset_cache_failing_seconds{cache="SidecarSets"} 9900',
      'sidecarset_cache_failing_seconds{cache="Namespaces"} 9875',
    ]);
    const working = await probes(fakeSource([]), 10_000_000);
    assert.doesNotMatch(working.metrics, /^sidecarset_cache_failing_seconds\{/m);
  });

  it('with a bound, stays ready while the caches have failed for no longer (30 s)', async () => {
    const got = await probes(fakeSource(failing), 130_000, 30);
    assert.deepEqual([got.readyz, got.reason, got.healthz], [200, '', 200]);
  });

  it('answers 503 naming each cache failing beyond the bound, liveness still ok', async () => {
    const got = await probes(fakeSource(failing), 142_000, 30);
    assert.equal(got.readyz, 503);
    assert.equal(got.healthz, 200);
    assert.equal(
      got.reason,
      'the SidecarSet cache is stale, over --max-cache-staleness 30 s: ' +
        'SidecarSets: list/watch failing for 42 s (Forbidden (HTTP 403))',
    );
  });

  it('takes its bound from --max-cache-staleness, and 0 turns the check off', async () => {
    const tight = await probes(fakeSource(failing), 142_000, 10);
    assert.equal(tight.readyz, 503);
    assert.match(tight.reason, /over --max-cache-staleness 10 s: SidecarSets: .*; Namespaces: /);
    assert.equal((await probes(fakeSource(failing), 10_000_000, 0)).readyz, 200);
  });

  it('still says first that the caches have not synced', async () => {
    const got = await probes(fakeSource(failing, false), 142_000, 30);
    assert.equal(got.reason, 'the SidecarSet cache has not synced yet');
  });

  it('the cluster source reports its caches failing while the API server warms up', async () => {
    await withServer(async (server) => {
      const logger = pino({ level: 'silent' });
      const caches = new SharedCaches({ kubeConfig: server.kubeConfig(), logger });
      const source = createClusterSource({ caches, logger });
      try {
        await source.start();
        const all = ['ControllerRevisions', 'Namespaces', 'SidecarSets'];
        await failWhileWarmingUp(server, () => source.failing?.() ?? [], all);
      } finally {
        await source.stop();
      }
    });
  });

  it('the standalone controller answers the same way from its own caches', () => {
    const controller = { synced: () => true, failing: () => failing };
    const at = (nowMs: number, maxSeconds: number): string | undefined =>
      controllerNotReady(controller, maxSeconds, () => nowMs)();
    assert.equal(at(130_000, 30), undefined);
    assert.equal(
      at(142_000, 30),
      'the controller caches are stale, over --max-cache-staleness 30 s: ' +
        'SidecarSets: list/watch failing for 42 s (Forbidden (HTTP 403))',
    );
    assert.equal(at(10_000_000, 0), undefined);
    const syncing = { synced: () => false, failing: () => failing };
    assert.equal(controllerNotReady(syncing, 30)(), 'the controller caches have not synced yet');
  });

  it('the controller reports its caches failing while the API server warms up', async () => {
    await withServer(async (server) => {
      const controller = new Controller({
        kubeConfig: server.kubeConfig(),
        logger: pino({ level: 'silent' }),
      });
      try {
        await controller.start();
        const all = ['ControllerRevisions', 'Namespaces', 'Pods', 'SidecarSets'];
        await failWhileWarmingUp(server, () => controller.failing(), all);
      } finally {
        await controller.stop();
      }
    });
  });
});
