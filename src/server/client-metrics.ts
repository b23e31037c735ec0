/**
 * The API client's metrics, with client-go's names: requests by method and status code, and their
 * duration by verb (src/k8s/api-metrics.ts observes them).
 */
import type { Registry } from 'prom-client';
import { Counter, Histogram } from 'prom-client';

import type { ApiRequestObserver } from '../k8s/api-metrics.js';

export function createClientMetrics(registry: Registry): ApiRequestObserver {
  const requests = new Counter({
    name: 'rest_client_requests_total',
    help: 'Requests to the Kubernetes API server, by method and status code (<error>: no response)',
    labelNames: ['method', 'code'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'rest_client_request_duration_seconds',
    help: 'How long a request to the Kubernetes API server took, by verb',
    labelNames: ['verb'] as const,
    buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
    registers: [registry],
  });
  return ({ method, code, seconds }) => {
    requests.inc({ method, code });
    duration.observe({ verb: method }, seconds);
  };
}
