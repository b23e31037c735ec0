/**
 * sidecarset_cache_failing_seconds: for each cache failing to list or watch, for how long. The
 * replica keeps answering from what it last saw (docs/adr/0037-stale-caches-stay-ready.md); this is
 * what says so, and what the SidecarsetCacheStale alert reads.
 */
import type { Registry } from 'prom-client';
import { Gauge } from 'prom-client';

import type { FailingCache } from '../cache/snapshot.js';

export function registerCacheFailingMetric(
  registry: Registry,
  failing: () => readonly FailingCache[],
  nowMs: () => number = Date.now,
): void {
  new Gauge({
    name: 'sidecarset_cache_failing_seconds',
    help: 'Seconds a cache has been failing to list or watch, per cache; absent while it works',
    labelNames: ['cache'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const cache of failing()) {
        this.set({ cache: cache.name }, Math.max(0, (nowMs() - cache.sinceMs) / 1000));
      }
    },
  });
}
