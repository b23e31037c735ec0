/**
 * Per-pod predicates of the upgrade path, as OpenKruise's pkg/control/sidecarcontrol/util.go and
 * sidecarset_control.go define them.
 */
import {
  SIDECARSET_HASH,
  SIDECARSET_HASH_WITHOUT_IMAGE,
  SIDECARSET_INJECTED_LIST,
  SIDECARSET_INPLACE_UPDATE_STATE,
  SIDECARSET_WORKING_HOTUPGRADE_CONTAINER,
} from '../annotations.js';
import type { WorkingSlots } from '../hot-upgrade-annotation.js';
import { readWorkingSlots } from '../hot-upgrade-annotation.js';
import type { ContainerStatus, Pod, PodCondition } from '../k8s-types.js';
import type { HotSlot, SidecarSetContext } from './context.js';
import { podNamespace } from '../match.js';
import { recordedHash } from '../pod-hash-annotation.js';
import { imagesEqual, isDigestImage, stripImageIdScheme } from './image.js';
import { recordedStatuses } from './in-place-update-state.js';
import type { PodRef } from './types.js';

export function podRef(pod: Readonly<Pod>): PodRef {
  const namespace = podNamespace(pod);
  const name = pod.metadata.name ?? '';
  const uid = pod.metadata.uid;
  return uid !== undefined && uid !== '' ? { namespace, name, uid } : { namespace, name };
}

export function podKey(ref: PodRef): string {
  return `${ref.namespace}/${ref.name}`;
}

/** IsPodActive: not Succeeded, not Failed, not being deleted. */
export function isActivePod(pod: Readonly<Pod>): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !isDeleting(pod);
}

function isDeleting(pod: Readonly<Pod>): boolean {
  const ts = pod.metadata.deletionTimestamp;
  return ts !== undefined && ts !== null && ts !== '';
}

/** IsPodInjectedSidecarSet: the pod's kruise.io/sidecarset-injected-list names this SidecarSet. */
export function isInjectedBy(ctx: SidecarSetContext, pod: Readonly<Pod>): boolean {
  const list = pod.metadata.annotations?.[SIDECARSET_INJECTED_LIST] ?? '';
  return list !== '' && list.split(',').includes(ctx.name);
}

function hasContainer(pod: Readonly<Pod>, name: string): boolean {
  return pod.spec.containers.some((c) => c.name === name);
}

/** The pod holds every sidecar container (both slots and a working entry for hot ones). */
export function hasEverySidecar(ctx: SidecarSetContext, pod: Readonly<Pod>): boolean {
  for (const name of ctx.images.keys()) if (!hasContainer(pod, name)) return false;
  if (ctx.hot.length === 0) return true;
  const working = workingHotContainers(pod);
  return ctx.hot.every(
    (h) =>
      working[h.name] !== undefined &&
      hasContainer(pod, h.slots[0]) &&
      hasContainer(pod, h.slots[1]),
  );
}

/** kruise.io/sidecarset-working-hotupgrade-container: sidecar name → its working slot. */
export function workingHotContainers(pod: Readonly<Pod>): WorkingSlots {
  return readWorkingSlots(pod.metadata.annotations?.[SIDECARSET_WORKING_HOTUPGRADE_CONTAINER]);
}

/** IsPodSidecarUpdated: the hash the pod records for this SidecarSet is the SidecarSet's hash. */
export function isUpdated(ctx: SidecarSetContext, pod: Readonly<Pod>): boolean {
  return recordedHash(pod.metadata.annotations?.[SIDECARSET_HASH], ctx.name) === ctx.hash;
}

/** Kubernetes' podutil.IsPodReady: the Ready condition alone. */
export function hasReadyCondition(pod: Readonly<Pod>): boolean {
  return readyCondition(pod)?.status === 'True';
}

export function readyCondition(pod: Readonly<Pod>): PodCondition | undefined {
  for (const c of pod.status?.conditions ?? []) if (c.type === 'Ready') return c;
  return undefined;
}

/** IsPodReady: Running, Ready=True, not deleting, and every hot-upgrade empty slot on the empty image. */
export function isReady(ctx: SidecarSetContext, pod: Readonly<Pod>): boolean {
  if (ctx.hot.length > 0 && !emptySlotsHoldEmptyImage(ctx, pod)) return false;
  return isRunningAndReady(pod);
}

/** Kubernetes' IsRunningAndReady: Running, Ready=True, not being deleted. */
export function isRunningAndReady(pod: Readonly<Pod>): boolean {
  return pod.status?.phase === 'Running' && hasReadyCondition(pod) && !isDeleting(pod);
}

function emptySlotsHoldEmptyImage(ctx: SidecarSetContext, pod: Readonly<Pod>): boolean {
  const working = workingHotContainers(pod);
  return ctx.hot.every((h) => {
    if (h.emptyImage === '') return true;
    const container = pod.spec.containers.find((c) => c.name === hotSlots(h, working).idle);
    return container === undefined || container.image === h.emptyImage;
  });
}

/**
 * GetPodHotUpgradeContainers: the slot the working-container annotation names (the second slot
 * when it names neither) and the other one, idle (on the empty image, or the older version while
 * a hot upgrade is under way).
 */
export function hotSlots(
  hot: HotSlot,
  working: Readonly<Record<string, string>>,
): { working: string; idle: string } {
  const [first, second] = hot.slots;
  return working[hot.name] === first
    ? { working: first, idle: second }
    : { working: second, idle: first };
}

/**
 * IsPodStateConsistent: has the kubelet applied what the spec says for these containers (all sidecar containers
 * when `names` is omitted)?
 */
export function isStateConsistent(
  ctx: SidecarSetContext,
  pod: Readonly<Pod>,
  names: readonly string[] | string = ctx.containerNames,
): boolean {
  const statuses = pod.status?.containerStatuses ?? [];
  if (pod.spec.containers.length !== statuses.length) return false;
  let allDigest = true;
  for (const container of pod.spec.containers) {
    if (!isOneOf(names, container.name)) continue;
    const image = container.image ?? '';
    if (!isDigestImage(image)) {
      allDigest = false;
      break;
    }
    const status = statusOf(statuses, container.name);
    if (status === undefined || !imagesEqual(image, stripImageIdScheme(status.imageID ?? ''))) {
      return false;
    }
  }
  return allDigest || isUpdateCompleted(ctx, pod, statuses, names);
}

function isOneOf(names: readonly string[] | string, name: string): boolean {
  return typeof names === 'string' ? name === names : names.includes(name);
}

export function statusOf(
  statuses: readonly ContainerStatus[],
  name: string | undefined,
): ContainerStatus | undefined {
  for (const s of statuses) if (s.name === name) return s;
  return undefined;
}

/** IsSidecarContainerUpdateCompleted for this SidecarSet's entry of the in-place-update state. */
function isUpdateCompleted(
  ctx: SidecarSetContext,
  pod: Readonly<Pod>,
  statuses: readonly ContainerStatus[],
  names: readonly string[] | string,
): boolean {
  const raw = pod.metadata.annotations?.[SIDECARSET_INPLACE_UPDATE_STATE];
  if (raw === undefined) return true;
  const recorded = recordedStatuses(raw, ctx.name);
  if (recorded === undefined) return false;
  for (const status of statuses) {
    if (!isOneOf(names, status.name)) continue;
    const before = recorded[status.name];
    if (before === undefined) continue;
    const specImage = pod.spec.containers.find((c) => c.name === status.name)?.image ?? '';
    if ((before.imageID ?? '') === (status.imageID ?? '') && specImage !== (status.image ?? '')) {
      return false;
    }
  }
  return true;
}

/**
 * This SidecarSet has written one of the pod's sidecar images in place, for its current revision
 * or an earlier one: its entry in kruise.io/sidecarset-inplace-update-state records a container.
 * (Ours; OpenKruise has no such predicate. A value that does not parse records nothing.)
 */
export function isUpgradedInPlace(ctx: SidecarSetContext, pod: Readonly<Pod>): boolean {
  const raw = pod.metadata.annotations?.[SIDECARSET_INPLACE_UPDATE_STATE];
  if (raw === undefined) return false;
  const recorded = recordedStatuses(raw, ctx.name);
  return recorded !== undefined && Object.keys(recorded).length > 0;
}

export type Upgradability = 'candidate' | 'notUpgradable' | 'inFlight';

/**
 * IsSidecarSetUpgradable: a different without-image hash means a change beyond images (not
 * upgradable); a ready sidecar whose last in-place update is not applied yet means wait (in flight).
 */
export function upgradability(ctx: SidecarSetContext, pod: Readonly<Pod>): Upgradability {
  const recorded = recordedHash(
    pod.metadata.annotations?.[SIDECARSET_HASH_WITHOUT_IMAGE],
    ctx.name,
  );
  if (recorded !== ctx.hashWithoutImage) return 'notUpgradable';
  const statuses = pod.status?.containerStatuses ?? [];
  for (const name of ctx.containerNames) {
    const ready = statusOf(statuses, name)?.ready === true;
    if (ready && !isStateConsistent(ctx, pod, name)) return 'inFlight';
  }
  return 'candidate';
}
