/**
 * The health of a pod whose sidecars the controller upgraded in place, judged from its status and
 * its sidecarset.dev/upgrade-baseline annotation alone (docs/adr/0014-health-gated-rollouts.md).
 */
import type { Pod } from '../api/k8s-types.js';
import type { SidecarSetContext } from './context.js';
import { imagesEqual } from '../api/image-compare.js';
import { containerStatus, podContainer } from '../api/pod-containers.js';
import { pendingResize, resourcesApplied } from '../api/pod-resize.js';
import { RESIZE_REFUSED, recordedRefusal } from '../pod-annotations/refusals.js';
import { hotSlots, workingHotContainers } from '../pod-annotations/hot-upgrade-annotation.js';
import { isStateConsistent, isUpdated } from './pod-state.js';
import { hasReadyCondition, isActivePod } from '../api/pod-status.js';
import type { HealthSettings } from '../api/health-gate-annotations.js';
import type { UpgradeBaseline } from '../pod-annotations/upgrade-baseline.js';
import { UPGRADE_BASELINE, readUpgradeBaselines } from '../pod-annotations/upgrade-baseline.js';

export type Failure =
  | 'CrashLoop'
  | 'ResizeRefused'
  | 'ResizeInfeasible'
  | 'ResizeNotApplied'
  | 'ImageNotRunning'
  | 'SidecarNotReady'
  | 'PodNotReady';

export type PodHealth =
  | { state: 'Healthy' | 'Progressing'; upgradedAt: Date }
  | { state: 'Failed'; upgradedAt: Date; failure: Failure; message: string };

/** The sidecar containers whose health counts, with the image each must run. */
export function judgedContainers(
  ctx: SidecarSetContext,
  pod: Readonly<Pod>,
): { name: string; image: string }[] {
  const cold = [...ctx.images].map(([name, image]) => ({ name, image }));
  const working = workingHotContainers(pod);
  const hot = ctx.hot.map((h) => ({ name: hotSlots(h, working).working, image: h.image }));
  return [...cold, ...hot];
}

/**
 * The pod's health, or undefined when it is not judged: not upgraded in place by this SidecarSet
 * to its current version, or no longer active (a pod being deleted or gone never counts).
 */
export function judgePod(
  ctx: SidecarSetContext,
  pod: Readonly<Pod>,
  settings: HealthSettings,
  now: Date,
): PodHealth | undefined {
  if (!isActivePod(pod)) return undefined;
  const refused = recordedRefusal(pod, RESIZE_REFUSED, ctx.name, ctx.hash);
  if (refused !== undefined) {
    const message = `the API server refused the resize: ${refused.message}`;
    return { state: 'Failed', upgradedAt: now, failure: 'ResizeRefused', message };
  }
  if (!isUpdated(ctx, pod)) return undefined;
  const baseline = readUpgradeBaselines(pod.metadata.annotations?.[UPGRADE_BASELINE])[ctx.name];
  if (baseline?.hash === ctx.hash) return judgeUpgraded(ctx, pod, baseline, settings, now);
  // With recreation on, pods injected at this version (recreated, or new) are judged from their
  // creation: they must become Ready (docs/adr/0024-recreation-through-evictions.md).
  const created = pod.metadata.creationTimestamp;
  if (!ctx.recreatePods || typeof created !== 'string') return undefined;
  const injected = { hash: ctx.hash, upgradedAt: created, podReady: true, restarts: {} };
  return judgeUpgraded(ctx, pod, injected, settings, now);
}

/**
 * How often the sidecar `name` restarted since the upgrade that `baseline` recorded, not counting
 * the restart that applied the new image (the kubelet restarts a container to change it).
 */
function restartsSince(baseline: UpgradeBaseline, pod: Readonly<Pod>, name: string): number {
  const before = baseline.restarts[name] ?? 0;
  return Math.max(0, (containerStatus(pod, name)?.restartCount ?? 0) - before - 1);
}

/** Whether a sidecar of the pod restarted since its upgrade to the current version. */
export function restartedSinceUpgrade(ctx: SidecarSetContext, pod: Readonly<Pod>): boolean {
  const baseline = readUpgradeBaselines(pod.metadata.annotations?.[UPGRADE_BASELINE])[ctx.name];
  if (baseline?.hash !== ctx.hash) return false;
  return judgedContainers(ctx, pod).some(({ name }) => restartsSince(baseline, pod, name) > 0);
}

function judgeUpgraded(
  ctx: SidecarSetContext,
  pod: Readonly<Pod>,
  baseline: UpgradeBaseline,
  settings: HealthSettings,
  now: Date,
): PodHealth {
  const upgradedAt = new Date(baseline.upgradedAt);
  const containers = judgedContainers(ctx, pod);
  for (const { name } of containers) {
    const restarts = restartsSince(baseline, pod, name);
    if (restarts > settings.maxSidecarRestarts) {
      const message = `sidecar ${name} restarted ${restarts} times since the upgrade (crash loop)`;
      return { state: 'Failed', upgradedAt, failure: 'CrashLoop', message };
    }
  }
  const problem = unhealthy(ctx, pod, containers, baseline.podReady);
  if (problem === undefined) return { state: 'Healthy', upgradedAt };
  // A resize the kubelet refuses (the node can never fit it) fails without waiting.
  if (problem.failure === 'ResizeInfeasible') return { state: 'Failed', upgradedAt, ...problem };
  const elapsed = (now.getTime() - upgradedAt.getTime()) / 1000;
  if (elapsed < settings.progressDeadlineSeconds) return { state: 'Progressing', upgradedAt };
  const message = `${problem.message} ${settings.progressDeadlineSeconds}s after the upgrade`;
  return { state: 'Failed', upgradedAt, failure: problem.failure, message };
}

/** What keeps the upgraded pod from being healthy: resources first, then images and readiness. */
function unhealthy(
  ctx: SidecarSetContext,
  pod: Readonly<Pod>,
  containers: readonly { name: string; image: string }[],
  podWasReady: boolean,
): { failure: Failure; message: string } | undefined {
  // A sidecar that does not run with the resources its spec asks for yet.
  const resizing = containers.find(({ name }) => {
    const container = podContainer(pod, name);
    return container !== undefined && !resourcesApplied(pod, container);
  });
  if (resizing !== undefined) {
    const pending = pendingResize(pod);
    if (pending?.reason === 'Infeasible') {
      const message = `the kubelet cannot resize sidecar ${resizing.name}: ${pending.message ?? 'Infeasible'}`;
      return { failure: 'ResizeInfeasible', message };
    }
    const why =
      pending === undefined ? '' : ` (${pending.reason ?? 'Pending'}: ${pending.message ?? ''})`;
    const message = `sidecar ${resizing.name} does not run with its new resources${why}`;
    return { failure: 'ResizeNotApplied', message };
  }
  for (const { name, image } of containers) {
    const status = containerStatus(pod, name);
    const running =
      status !== undefined &&
      imagesEqual(status.image ?? '', image) &&
      isStateConsistent(ctx, pod, [name]);
    if (!running) {
      return { failure: 'ImageNotRunning', message: `sidecar ${name} does not run ${image}` };
    }
    if (status.ready !== true) {
      return { failure: 'SidecarNotReady', message: `sidecar ${name} is not ready` };
    }
  }
  if (podWasReady && !hasReadyCondition(pod)) {
    return { failure: 'PodNotReady', message: 'the pod is not Ready' };
  }
  return undefined;
}
