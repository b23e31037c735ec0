/** Prometheus metrics of the upgrade controller, on the webhook's registry. */
import type { Registry } from 'prom-client';
import { Counter, Gauge } from 'prom-client';

export interface ControllerMetrics {
  reconciles: Counter<'result'>;
}

export function createControllerMetrics(
  registry: Registry,
  state: () => { leading: boolean; cachedPods: number } | undefined,
): ControllerMetrics {
  const reconciles = new Counter({
    name: 'sidecarset_controller_reconciles_total',
    help: 'SidecarSet reconciles by result (success, requeue, error)',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'sidecarset_controller_leader',
    help: '1 while this replica leads (reconciles), 0 otherwise',
    registers: [registry],
    collect() {
      this.set(state()?.leading === true ? 1 : 0);
    },
  });
  new Gauge({
    name: 'sidecarset_controller_cached_pods',
    help: 'Pods in the controller cache (slim copies)',
    registers: [registry],
    collect() {
      this.set(state()?.cachedPods ?? 0);
    },
  });
  return { reconciles };
}
