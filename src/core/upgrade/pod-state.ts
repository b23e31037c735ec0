/**
 * Per-pod predicates of the upgrade path, as OpenKruise's pkg/control/sidecarcontrol/util.go and
 * sidecarset_control.go define them.
 */
import {
  SIDECARSET_HASH,
  SIDECARSET_HASH_WITHOUT_IMAGE,
  SIDECARSET_INPLACE_UPDATE_STATE,
} from '../api/annotations.js';
import { hotSlots, workingHotContainers } from '../pod-annotations/hot-upgrade-annotation.js';
import { injectedNames } from '../pod-annotations/injected-list.js';
import type { Container, Pod } from '../api/k8s-types.js';
import type { SidecarSetContext } from './context.js';
import { isRunningAndReady } from '../api/pod-status.js';
import { recordedHash } from '../pod-annotations/pod-hash-annotation.js';
import { imagesEqual, isDigestImage, stripImageIdScheme } from '../api/image-compare.js';
import { recordedStatuses } from '../pod-annotations/in-place-update-state.js';
import { containerStatus, podContainer } from '../api/pod-containers.js';
import { pendingResize, resizeRefusal, resourcesApplied } from '../api/pod-resize.js';
import type { ResourceChange } from '../api/pod-resize.js';
import { defaulted, sameResources } from '../api/resource-requirements.js';
import type { PlanOptions } from './types.js';

/** IsPodInjectedSidecarSet: the pod's kruise.io/sidecarset-injected-list names this SidecarSet. */
export function isInjectedBy(ctx: SidecarSetContext, pod: Readonly<Pod>): boolean {
  return injectedNames(pod).includes(ctx.name);
}

/** The pod holds every sidecar container (both slots and a working entry for hot ones). */
export function hasEverySidecar(ctx: SidecarSetContext, pod: Readonly<Pod>): boolean {
  if (!ctx.containerNames.every((name) => podContainer(pod, name) !== undefined)) return false;
  if (ctx.hot.length === 0) return true;
  const working = workingHotContainers(pod);
  return ctx.hot.every((h) => working[h.name] !== undefined);
}

/** IsPodSidecarUpdated: the hash the pod records for this SidecarSet is the SidecarSet's hash. */
export function isUpdated(ctx: SidecarSetContext, pod: Readonly<Pod>): boolean {
  return recordedHash(pod.metadata.annotations?.[SIDECARSET_HASH], ctx.name) === ctx.hash;
}

/** IsPodReady: Running, Ready=True, not deleting, and every hot-upgrade empty slot on the empty image. */
export function isReady(ctx: SidecarSetContext, pod: Readonly<Pod>): boolean {
  if (!isRunningAndReady(pod)) return false;
  if (ctx.hot.length === 0) return true;
  const working = workingHotContainers(pod);
  return ctx.hot.every((h) => {
    const container = podContainer(pod, hotSlots(h, working).idle);
    return h.emptyImage === '' || container === undefined || container.image === h.emptyImage;
  });
}

/**
 * IsPodStateConsistent: has the kubelet applied what the spec says for these containers (all
 * sidecar containers when `names` is omitted)? Images as OpenKruise checks them; resources
 * (ours) as the kubelet reports them once a resize is applied (core/api/pod-resize.ts).
 */
export function isStateConsistent(
  ctx: SidecarSetContext,
  pod: Readonly<Pod>,
  names: readonly string[] = ctx.containerNames,
): boolean {
  const statuses = pod.status?.containerStatuses ?? [];
  if (pod.spec.containers.length !== statuses.length) return false;
  const all = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])];
  const containers = all.filter((c) => names.includes(c.name));
  if (!containers.every((c) => resourcesApplied(pod, c))) return false;
  // Digests are compared up to the first image that is not one; from there the state decides.
  for (const container of containers) {
    const image = container.image ?? '';
    if (!isDigestImage(image)) return isUpdateCompleted(ctx, pod, containers);
    const status = containerStatus(pod, container.name);
    if (status === undefined || !imagesEqual(image, stripImageIdScheme(status.imageID ?? ''))) {
      return false;
    }
  }
  return true;
}

/** IsSidecarContainerUpdateCompleted for this SidecarSet's entry of the in-place-update state. */
function isUpdateCompleted(
  ctx: SidecarSetContext,
  pod: Readonly<Pod>,
  containers: readonly Container[],
): boolean {
  const raw = pod.metadata.annotations?.[SIDECARSET_INPLACE_UPDATE_STATE];
  if (raw === undefined) return true;
  const recorded = recordedStatuses(raw, ctx.name);
  if (recorded === undefined) return false;
  for (const container of containers) {
    const before = recorded[container.name];
    const status = containerStatus(pod, container.name);
    if (before === undefined || status === undefined) continue;
    const specImage = container.image ?? '';
    if ((before.imageID ?? '') === (status.imageID ?? '') && specImage !== (status.image ?? '')) {
      return false;
    }
  }
  return true;
}

/**
 * Ours: this SidecarSet wrote a sidecar image in place, for any of its revisions (its entry of
 * kruise.io/sidecarset-inplace-update-state records a container; a value that does not parse, none).
 */
export function isUpgradedInPlace(ctx: SidecarSetContext, pod: Readonly<Pod>): boolean {
  const raw = pod.metadata.annotations?.[SIDECARSET_INPLACE_UPDATE_STATE];
  if (raw === undefined) return false;
  const recorded = recordedStatuses(raw, ctx.name);
  return recorded !== undefined && Object.keys(recorded).length > 0;
}

/**
 * IsSidecarSetUpgradable, first half: why the pod's sidecars cannot change in place (undefined when
 * they can). A different without-image hash means more than images changed: upgradable only when
 * the rest is resources (ours) and the API server resizes pods.
 */
export function whyNotUpgradable(
  ctx: SidecarSetContext,
  pod: Readonly<Pod>,
  { podResize = true, versions }: Pick<PlanOptions, 'podResize' | 'versions'>,
): string | undefined {
  const recorded = recordedHash(
    pod.metadata.annotations?.[SIDECARSET_HASH_WITHOUT_IMAGE],
    ctx.name,
  );
  if (recorded === ctx.hashWithoutImage) return undefined;
  const recordedVersion = versions?.get(recorded);
  if (recordedVersion === undefined) {
    return (
      'a sidecar field other than image changed, and no ControllerRevision records the ' +
      "pod's version; the pod keeps its sidecar until recreated"
    );
  }
  if (recordedVersion !== ctx.hashWithoutImageResources) {
    return 'a sidecar field other than image and resources changed; the pod keeps its sidecar until recreated';
  }
  if (!podResize) {
    return 'sidecar resources changed, and the API server cannot resize pods in place (no pods/resize)';
  }
  return resizeRefusal(pod, resourceChanges(ctx, pod));
}

/**
 * IsSidecarSetUpgradable, second half: a ready sidecar whose last in-place update the kubelet
 * has not applied yet means wait; unless the kubelet reports its resize pending (a new version
 * replaces a resize it defers or refuses).
 */
export function isUpgradeInFlight(ctx: SidecarSetContext, pod: Readonly<Pod>): boolean {
  if (pendingResize(pod) !== undefined) return false;
  return ctx.containerNames.some(
    (name) => containerStatus(pod, name)?.ready === true && !isStateConsistent(ctx, pod, [name]),
  );
}

/** The cold sidecars whose resources differ from the SidecarSet's. */
export function resourceChanges(ctx: SidecarSetContext, pod: Readonly<Pod>): ResourceChange[] {
  const changes: ResourceChange[] = [];
  for (const [name, target] of ctx.resources) {
    const container = podContainer(pod, name);
    if (container === undefined) continue;
    const from = container.resources ?? {};
    const to = defaulted(target);
    if (!sameResources(defaulted(from), to)) changes.push({ container: name, from, to });
  }
  return changes;
}
