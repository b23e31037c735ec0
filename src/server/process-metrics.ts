/** What every sidecarset process exposes besides its own metrics: prom-client's defaults and build info. */
import { readFileSync } from 'node:fs';

import type { Registry } from 'prom-client';
import { Gauge, collectDefaultMetrics } from 'prom-client';

/** package.json's version: two directories up from src/server/ (tsx) and dist/server/ alike. */
function packageVersion(): string {
  const pkg: unknown = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  );
  const version =
    typeof pkg === 'object' && pkg !== null ? (pkg as { version?: unknown }).version : undefined;
  return typeof version === 'string' ? version : 'unknown';
}

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
  }).set({ version: packageVersion() }, 1);
}
