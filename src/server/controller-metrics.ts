/**
 * Prometheus metrics of the upgrade controller, on the webhook's registry.
 *
 * The per-SidecarSet gauges (sidecarset_pods, sidecarset_rollout_paused, sidecarset_missed_pods)
 * are the leader's view: they are removed when this replica stops leading, so that a replica that
 * lost the Lease but keeps serving the webhook exports none of them rather than its last values
 * (docs/monitoring.md). A replica that leads again sets them in its first rounds.
 */
import type { Registry } from 'prom-client';
import { Counter, Gauge, Histogram } from 'prom-client';

import type { ControllerOptions } from '../controller/controller.js';

/** The controller's hooks that feed the metrics: spread them into the Controller's options. */
export type ControllerMetricHooks = Required<
  Pick<
    ControllerOptions,
    'onReconcile' | 'observer' | 'onMissedPods' | 'onLeading' | 'queueMetrics'
  >
>;

/** client-go's workqueue metric names and labels, for the one queue: name="sidecarset". */
const QUEUE = { name: 'sidecarset' } as const;

const STATES = [
  ['matched', 'matchedPods'],
  ['updated', 'updatedPods'],
  ['ready', 'readyPods'],
  ['updated_ready', 'updatedReadyPods'],
] as const;

export function createControllerMetrics(
  registry: Registry,
  state: () => { leading: boolean; cachedPods: number } | undefined,
): ControllerMetricHooks {
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
  const reconcileSeconds = new Histogram({
    name: 'sidecarset_controller_reconcile_duration_seconds',
    help: 'Time a SidecarSet reconcile took, by result',
    labelNames: ['result'] as const,
    buckets: [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 30],
    registers: [registry],
  });
  const podWrites = new Counter({
    name: 'sidecarset_controller_pod_writes_total',
    help: 'Pods written: in-place upgrades, flips that end hot upgrades, evictions that recreate pods (dry run: would write)',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const pods = new Gauge({
    name: 'sidecarset_pods',
    help: "A SidecarSet's pods by state, as its status reports them (matched, updated, ready, updated_ready)",
    labelNames: ['sidecarset', 'state'] as const,
    registers: [registry],
  });
  const paused = new Gauge({
    name: 'sidecarset_rollout_paused',
    help: "1 while failed upgraded pods keep a SidecarSet's rollout paused (condition RolloutPaused, reason UnhealthyPods), else 0",
    labelNames: ['sidecarset'] as const,
    registers: [registry],
  });
  const observer: ControllerMetricHooks['observer'] = {
    status(sidecarSet, status) {
      for (const [state, field] of STATES) {
        if (status === undefined) pods.remove({ sidecarset: sidecarSet, state });
        else pods.set({ sidecarset: sidecarSet, state }, status[field]);
      }
    },
    podsWritten(kind, count) {
      podWrites.inc({ kind }, count);
    },
    rolloutPaused(sidecarSet, isPaused) {
      if (isPaused === undefined) paused.remove({ sidecarset: sidecarSet });
      else paused.set({ sidecarset: sidecarSet }, isPaused ? 1 : 0);
    },
  };
  const missed = new Gauge({
    name: 'sidecarset_missed_pods',
    help: 'Pods a SidecarSet matches, created since it exists, without its injection (the webhook was down or not called)',
    labelNames: ['sidecarset'] as const,
    registers: [registry],
  });
  const depth = new Gauge({
    name: 'workqueue_depth',
    help: 'Keys waiting in the work queue for a worker',
    labelNames: ['name'] as const,
    registers: [registry],
  });
  const adds = new Counter({
    name: 'workqueue_adds_total',
    help: 'Keys added to the work queue',
    labelNames: ['name'] as const,
    registers: [registry],
  });
  const retries = new Counter({
    name: 'workqueue_retries_total',
    help: 'Keys queued again after a failure, with backoff',
    labelNames: ['name'] as const,
    registers: [registry],
  });
  const work = new Histogram({
    name: 'workqueue_work_duration_seconds',
    help: 'How long processing a key from the work queue took',
    labelNames: ['name'] as const,
    buckets: [0.001, 0.01, 0.1, 1, 10, 60],
    registers: [registry],
  });
  return {
    queueMetrics: {
      depth(keys) {
        depth.set(QUEUE, keys);
      },
      added() {
        adds.inc(QUEUE);
      },
      retried() {
        retries.inc(QUEUE);
      },
      processed(seconds) {
        work.observe(QUEUE, seconds);
      },
    },
    onReconcile(result, seconds) {
      reconciles.inc({ result });
      reconcileSeconds.observe({ result }, seconds);
    },
    observer,
    onMissedPods(counts) {
      missed.reset();
      for (const [sidecarset, count] of counts) missed.set({ sidecarset }, count);
    },
    onLeading(leading) {
      if (leading) return;
      pods.reset();
      paused.reset();
      missed.reset();
    },
  };
}
