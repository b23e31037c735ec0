/** Prometheus metrics of the webhook (prom-client), on a registry of its own. */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

import type { SnapshotSource } from '../cache/snapshot.js';
import { registerCacheFailingMetric } from './cache-failing-metric.js';
import { registerProcessMetrics } from './process-metrics.js';

export interface WebhookMetrics {
  registry: Registry;
  requests: Counter<'endpoint' | 'decision' | 'result'>;
  duration: Histogram<'endpoint'>;
  injections: Counter<'sidecarset'>;
  certificateExpiry: Gauge;
  reloads: Counter<'result'>;
}

export function createMetrics(
  source: () => SnapshotSource | undefined,
  nowMs: () => number = Date.now,
): WebhookMetrics {
  const registry = new Registry();
  registerProcessMetrics(registry);
  const requests = new Counter({
    name: 'sidecarset_admission_requests_total',
    help: 'Admission requests by endpoint, decision (allowed/denied/invalid) and result',
    labelNames: ['endpoint', 'decision', 'result'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'sidecarset_admission_duration_seconds',
    help: 'Time to answer an admission request, body parsing included',
    labelNames: ['endpoint'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  const injections = new Counter({
    name: 'sidecarset_injections_total',
    help: 'Pods injected, per SidecarSet (dry runs not counted)',
    labelNames: ['sidecarset'] as const,
    registers: [registry],
  });
  const certificateExpiry = new Gauge({
    name: 'sidecarset_tls_certificate_expiry_timestamp_seconds',
    help: 'notAfter of the serving certificate, as a Unix timestamp',
    registers: [registry],
  });
  const reloads = new Counter({
    name: 'sidecarset_cache_reloads_total',
    help: 'SidecarSet cache reloads (files mode) and relists (cluster mode), by result',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'sidecarset_cache_objects',
    help: 'Objects in the SidecarSet cache, by kind (namespaces absent when all are assumed)',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      const src = source();
      if (src === undefined || !src.isSynced()) return;
      const snapshot = src.read();
      this.set({ kind: 'SidecarSet' }, snapshot.sidecarSets.all.length);
      if (snapshot.namespaceCount !== undefined)
        this.set({ kind: 'Namespace' }, snapshot.namespaceCount);
    },
  });
  registerCacheFailingMetric(registry, () => source()?.failing?.() ?? [], nowMs);
  return { registry, requests, duration, injections, certificateExpiry, reloads };
}
