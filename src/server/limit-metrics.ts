/** Metrics of the server's limits (http-server.ts, body-budget.ts), once per registry. */
import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';

export interface LimitMetrics {
  /** Connections closed and requests refused by a limit, by reason. */
  shed: Counter<'reason'>;
  bodyBytesInFlight: Gauge;
}

const byRegistry = new WeakMap<Registry, LimitMetrics>();

/** The webhook's app and the metrics port's app share one registry, hence one set. */
export function limitMetricsOf(registry: Registry): LimitMetrics {
  const existing = byRegistry.get(registry);
  if (existing !== undefined) return existing;
  const metrics: LimitMetrics = {
    shed: new Counter({
      name: 'sidecarset_shed_total',
      help: 'Connections closed or requests refused by a limit: max-connections, idle-keep-alive, read-timeout, body-budget',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    bodyBytesInFlight: new Gauge({
      name: 'sidecarset_request_body_bytes_in_flight',
      help: 'Request-body bytes being received (reserved by Content-Length), all connections together',
      registers: [registry],
    }),
  };
  byRegistry.set(registry, metrics);
  return metrics;
}
