/**
 * Plays a rollout forward, one planUpgrade round per wave, assuming every pod upgraded in a wave
 * finishes before the next: its new sidecar starts, the status reports the new image under a new
 * imageID, and the pod is Running and Ready. A sidecar on one of `failImages` starts but never
 * becomes ready (nor does its pod); each wave is taken to last the progress deadline, so such pods
 * are judged failed by the next round and the health gate (src/core/upgrade/rollout-health.ts)
 * pauses the rollout where it would.
 */
import type { Container, ContainerStatus, Pod } from '../api/k8s-types.js';
import type { SidecarSet } from '../api/sidecarset-types.js';
import { planUpgrade } from '../upgrade/plan.js';
import { podKey, podRef } from '../api/pod-ref.js';
import { formatTimestamp } from '../pod-annotations/pod-hash-annotation.js';
import { healthSettings } from '../api/health-gate-annotations.js';
import type { HoldReason, PodUpgrade, UpgradePlan, UpgradeStatus } from '../upgrade/types.js';
import type { PodRef } from '../api/pod-ref.js';
import { podContainer } from '../api/pod-containers.js';

interface Wave {
  /** 1-based. */
  index: number;
  pods: PodRef[];
  /** Updated pods unavailable at once while this wave runs (what maxUnavailable bounds). */
  unavailable: number;
  /** Pods taken although not ready; they need no budget. */
  notReadyTaken: number;
}

type SimulationEnd =
  | 'Complete'
  | 'Partition'
  | 'NotUpgradable'
  /** Pods would be evicted to be recreated, which the simulation does not play. */
  | 'Recreate'
  | 'Paused'
  | 'UnhealthyPods'
  | 'NotUpdate'
  | 'Held'
  | 'WaveLimit';

export interface Simulation {
  sidecarSet: string;
  maxUnavailable: number;
  partition: number;
  initial: UpgradeStatus;
  waves: Wave[];
  /** The status once the last wave has finished. */
  final: UpgradeStatus;
  /** Pods upgraded over all waves. */
  touched: number;
  end: SimulationEnd;
  /** Why the rollout stops there, for people. */
  message: string;
  /** The plan of the round after the last wave (what holds the rest back). */
  last: UpgradePlan;
}

export interface SimulateOptions {
  now: Date;
  /** Default: matched pods + 1, enough for one pod per wave. */
  maxWaves?: number;
  /** Sidecar images that never become ready. */
  failImages?: readonly string[];
}

export function simulateRollout(
  sidecarSet: SidecarSet,
  pods: readonly Readonly<Pod>[],
  options: SimulateOptions,
): Simulation {
  const current = new Map<string, Readonly<Pod>>();
  for (const pod of pods) current.set(podKey(podRef(pod)), pod);
  const failing = new Set(options.failImages ?? []);
  const waveSeconds = healthSettings(sidecarSet).progressDeadlineSeconds;
  let clock = options.now;
  let plan = planUpgrade(sidecarSet, [...current.values()], { now: clock });
  const initial = plan.status;
  const limit = options.maxWaves ?? plan.status.matchedPods + 1;
  const waves: Wave[] = [];
  /** Settles each written pod; how many of them were not running and ready before. */
  const apply = (writes: readonly PodUpgrade[]): number => {
    let notReady = 0;
    for (const write of writes) {
      const key = podKey(write.pod);
      const pod = current.get(key);
      /* c8 ignore next -- every planned pod came from this map */
      if (pod === undefined) continue;
      if (!isRunningAndReady(pod)) notReady++;
      current.set(key, settle(pod, write, clock, failing));
    }
    return notReady;
  };
  // A hot upgrade's flip is a round of its own, applied before the next wave; a flip round
  // follows a wave at most, so the rounds are bounded by twice the waves.
  let rounds = 0;
  while ((plan.upgrade.length > 0 || plan.flip.length > 0) && waves.length < limit) {
    /* c8 ignore next -- a safety net: every round upgrades or flips a pod for good */
    if (rounds++ > 2 * limit + 2) break;
    if (plan.flip.length > 0) {
      apply(plan.flip);
      plan = planUpgrade(sidecarSet, [...current.values()], { now: clock });
      continue;
    }
    const notReadyTaken = apply(plan.upgrade);
    waves.push({
      index: waves.length + 1,
      pods: plan.upgrade.map((u) => u.pod),
      unavailable: plan.budget.unavailableAfter,
      notReadyTaken,
    });
    clock = new Date(clock.getTime() + waveSeconds * 1000);
    plan = planUpgrade(sidecarSet, [...current.values()], { now: clock });
  }
  const { end, message } = describeEnd(plan, waves.length >= limit && plan.upgrade.length > 0);
  return {
    sidecarSet: plan.sidecarSet,
    maxUnavailable: plan.budget.maxUnavailable,
    partition: plan.budget.partition,
    initial,
    waves,
    final: plan.status,
    touched: waves.reduce((n, w) => n + w.pods.length, 0),
    end,
    message,
    last: plan,
  };
}

function isRunningAndReady(pod: Readonly<Pod>): boolean {
  return (
    pod.status?.phase === 'Running' &&
    (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

/**
 * The upgraded pod after the kubelet has restarted its sidecars and the pod is ready again, or,
 * when a sidecar's new image is one of `failing`, with that sidecar and the pod not ready.
 */
function settle(
  pod: Readonly<Pod>,
  upgrade: PodUpgrade,
  now: Date,
  failing: ReadonlySet<string>,
): Pod {
  const next = applyPodUpgrade(pod, upgrade);
  const changed = new Set(upgrade.images.map((c) => c.container));
  const at = formatTimestamp(now);
  const fails = upgrade.images.some((c) => failing.has(c.to));
  /** What a kubelet reports once it has applied the containers' spec. */
  const settled = (containers: readonly Container[], statuses: readonly ContainerStatus[]) =>
    containers.map((c): ContainerStatus => {
      const s = statuses.find((status) => status.name === c.name);
      const resources = c.resources === undefined ? {} : { resources: c.resources };
      if (s !== undefined && !changed.has(c.name)) return { ...s, ...resources, ready: true };
      const image = c.image ?? '';
      return {
        ...s,
        ...resources,
        name: c.name,
        image,
        imageID: `simulated://${image}`,
        ready: !failing.has(image),
        restartCount: (s?.restartCount ?? 0) + (s === undefined ? 0 : 1),
      };
    });
  next.status = {
    ...next.status,
    phase: 'Running',
    conditions: [
      ...(next.status?.conditions ?? []).filter((c) => c.type !== 'Ready'),
      { type: 'Ready', status: fails ? 'False' : 'True', lastTransitionTime: at },
    ],
    containerStatuses: settled(next.spec.containers, next.status?.containerStatuses ?? []),
  };
  const inits = next.spec.initContainers;
  if (inits !== undefined && next.status.initContainerStatuses !== undefined) {
    next.status.initContainerStatuses = settled(inits, next.status.initContainerStatuses);
  }
  return next;
}

function count(held: UpgradePlan['held'], reason: HoldReason): number {
  return held.filter((h) => h.reason === reason).length;
}

function describeEnd(plan: UpgradePlan, limited: boolean): { end: SimulationEnd; message: string } {
  if (limited) return { end: 'WaveLimit', message: 'stopped after the wave limit' };
  if (plan.stopped === 'Complete')
    return { end: 'Complete', message: 'every matched pod is updated' };
  if (plan.stopped === 'Paused') return { end: 'Paused', message: 'updateStrategy.paused is true' };
  if (plan.stopped === 'UnhealthyPods') {
    return { end: 'UnhealthyPods', message: plan.health?.message ?? '' };
  }
  if (plan.stopped === 'NotUpdate') {
    return { end: 'NotUpdate', message: 'updateStrategy.type is NotUpdate' };
  }
  if (plan.recreate.length > 0) {
    return {
      end: 'Recreate',
      message: `${plan.recreate.length} pods would be evicted next, for their controllers to recreate them; the simulation plays in-place upgrades only`,
    };
  }
  const partition = count(plan.held, 'Partition');
  if (partition > 0) {
    return {
      end: 'Partition',
      message: `the partition (${plan.budget.partition}) keeps ${partition} pods on the old version`,
    };
  }
  if (plan.held.length === 0 && plan.notUpgradable.length > 0) {
    return {
      end: 'NotUpgradable',
      message: `${plan.notUpgradable.length} pods cannot be upgraded in place (a field other than image changed)`,
    };
  }
  const reasons = [...new Set(plan.held.map((h) => h.reason))].join(', ');
  return { end: 'Held', message: `${plan.held.length} pods are held (${reasons})` };
}

/** The pod as it is after the upgrade's write (for simulations and tests). */
export function applyPodUpgrade(pod: Readonly<Pod>, upgrade: PodUpgrade): Pod {
  const next = structuredClone(pod) as Pod;
  for (const change of upgrade.images) {
    const container = podContainer(next, change.container);
    if (container !== undefined) container.image = change.to;
  }
  for (const change of upgrade.resources) {
    const container = podContainer(next, change.container);
    if (container !== undefined) container.resources = change.to;
  }
  next.metadata.annotations = { ...next.metadata.annotations, ...upgrade.annotations };
  return next;
}
