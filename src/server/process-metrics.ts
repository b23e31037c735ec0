/** Metrics every sidecarset process exposes: prom-client's defaults and build info. */
import type { Registry } from 'prom-client';
import { Gauge, collectDefaultMetrics } from 'prom-client';

import { VERSION } from '../version.js';

export function registerProcessMetrics(registry: Registry): void {
  // No prefix: process_cpu_seconds_total, nodejs_eventloop_lag_seconds... keep the names every
  // Node.js dashboard and alert expects (Prometheus' client library guidelines, "Process metrics").
  collectDefaultMetrics({ register: registry });
  // The info-metric pattern (https://prometheus.io/docs/practices/naming/): constant 1, the version
  // as a label, for joins and for "which versions run".
  new Gauge({
    name: 'sidecarset_build_info',
    help: 'Always 1; the sidecarset version as a label',
    labelNames: ['version'] as const,
    registers: [registry],
  }).set({ version: VERSION }, 1);
}
