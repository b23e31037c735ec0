/**
 * What a SidecarSet's status write costs the webhook in cluster mode: the controller writes a
 * status after most of its rounds, and the next admission rebuilds the snapshot
 * (src/cache/cluster-source.ts), on the event loop that serves every admission. Measured with
 * 1,000 of the admission benchmarks' SidecarSets (bench/admission-fixtures.ts) in the fake API
 * server of test/fake-apiserver, read through the caches `serve` uses. The baseline, measured in
 * the same run, is a first build, in which every SidecarSet is prepared (validated, defaulted,
 * hashed); the row is the rebuild after one status write, in which only that one is. Target: the
 * rebuild under a tenth of the first build. Not a test: it only prints.
 *
 * Environment: BENCH_SIDECARSETS (1000), BENCH_ROUNDS (15).
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { pino } from 'pino';

import { createClusterSource } from '../src/cache/cluster-source.js';
import type { SnapshotSource } from '../src/cache/snapshot.js';
import { SharedCaches } from '../src/k8s/shared-caches.js';
import { SIDECARSETS, startFakeApiServer } from '../test/fake-apiserver/index.js';
import { otherSidecarSet } from './admission-fixtures.js';

const count = Number(process.env['BENCH_SIDECARSETS'] ?? 1000);
const rounds = Number(process.env['BENCH_ROUNDS'] ?? 15);

function timedRead(source: SnapshotSource): number {
  const started = performance.now();
  source.read();
  return performance.now() - started;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

const api = await startFakeApiServer();
const logger = pino({ level: 'silent' });
const caches = new SharedCaches({ kubeConfig: api.kubeConfig(), logger });
try {
  const names: string[] = [];
  for (let i = 1; i <= count; i++) {
    const ss = { ...otherSidecarSet(i), apiVersion: 'apps.kruise.io/v1beta1' };
    names.push(api.store.create(SIDECARSETS, '', ss).metadata.name ?? '');
  }
  const source = createClusterSource({ caches, logger });
  await source.start();
  source.read();

  const firstBuilds: number[] = [];
  const rebuilds: number[] = [];
  for (let round = 0; round < rounds; round++) {
    // A source of its own has prepared nothing yet: its first read prepares every SidecarSet.
    firstBuilds.push(timedRead(createClusterSource({ caches, logger })));

    const name = names[round % names.length] ?? '';
    const written = api.store.mutate(SIDECARSETS, '', name, (obj) => {
      obj['status'] = { observedGeneration: 1, matchedPods: round };
    });
    const version = written.metadata.resourceVersion;
    while (caches.sidecarSets.get(name)?.metadata.resourceVersion !== version) await sleep(5);
    rebuilds.push(timedRead(source));
  }

  const first = median(firstBuilds);
  const rebuild = median(rebuilds);
  const ratio = rebuild / first;
  process.stdout.write(
    [
      `cluster snapshot: ${count} SidecarSets, median of ${rounds} rounds`,
      `  first build (every SidecarSet prepared)   ${first.toFixed(2).padStart(8)} ms  1.00x`,
      `  rebuild after one status write            ${rebuild.toFixed(2).padStart(8)} ms  ${ratio.toFixed(3)}x`,
      `target: the rebuild under 0.1x the first build; this run: ${ratio < 0.1 ? 'MET' : 'NOT MET'}`,
      '',
    ].join('\n'),
  );
  await source.stop();
} finally {
  await caches.stop();
  await api.close();
}
