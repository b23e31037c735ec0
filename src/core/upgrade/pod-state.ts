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
import { imagesEqual, isDigestImage, stripImageIdScheme } from './image.js';

export type PodReadView = Readonly<Pod>;

/** IsPodActive: not Succeeded, not Failed, not being deleted. */
export function isActivePod(pod: PodReadView): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !isDeleting(pod);
}

function isDeleting(pod: PodReadView): boolean {
  const ts = pod.metadata.deletionTimestamp;
  return ts !== undefined && ts !== null && ts !== '';
}

/** The pod's kruise.io/sidecarset-injected-list names this SidecarSet. */
export function isInjectedBy(ctx: SidecarSetContext, pod: PodReadView): boolean {
  const list = pod.metadata.annotations?.[SIDECARSET_INJECTED_LIST] ?? '';
  return list !== '' && listIncludes(list, ctx.name);
}

/** list.split(',').includes(item), without building the array (this runs for every pod). */
function listIncludes(list: string, item: string): boolean {
  // No element of the split list holds a comma.
  if (item.includes(',')) return false;
  if (list === item) return true;
  let at = list.indexOf(item);
  while (at !== -1) {
    const end = at + item.length;
    const starts = at === 0 || list.charCodeAt(at - 1) === COMMA;
    if (starts && (end === list.length || list.charCodeAt(end) === COMMA)) return true;
    // indexOf("", from) never returns -1: stop at the end of the list.
    at = at < list.length ? list.indexOf(item, at + 1) : -1;
  }
  return false;
}

const COMMA = 44;

function hasContainer(pod: PodReadView, name: string): boolean {
  for (const c of pod.spec.containers) if (c.name === name) return true;
  return false;
}

/** The pod holds every sidecar container (both slots and a working entry for hot ones). */
export function hasEverySidecar(ctx: SidecarSetContext, pod: PodReadView): boolean {
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
export function workingHotContainers(pod: PodReadView): WorkingSlots {
  return readWorkingSlots(pod.metadata.annotations?.[SIDECARSET_WORKING_HOTUPGRADE_CONTAINER]);
}

/** IsPodSidecarUpdated: the hash the pod records for this SidecarSet is the SidecarSet's hash. */
export function isUpdated(ctx: SidecarSetContext, pod: PodReadView): boolean {
  return ctx.recordsHash(pod.metadata.annotations?.[SIDECARSET_HASH]);
}

/** Kubernetes' podutil.IsPodReady: the Ready condition alone. */
export function hasReadyCondition(pod: PodReadView): boolean {
  return readyCondition(pod)?.status === 'True';
}

export function readyCondition(pod: PodReadView): PodCondition | undefined {
  for (const c of pod.status?.conditions ?? []) if (c.type === 'Ready') return c;
  return undefined;
}

/** IsPodReady: Running, Ready=True, not deleting, and every hot-upgrade empty slot on the empty image. */
export function isReady(ctx: SidecarSetContext, pod: PodReadView): boolean {
  if (ctx.hot.length > 0 && !emptySlotsHoldEmptyImage(ctx, pod)) return false;
  return isRunningAndReady(pod);
}

/** Kubernetes' IsRunningAndReady: Running, Ready=True, not being deleted. */
export function isRunningAndReady(pod: PodReadView): boolean {
  return pod.status?.phase === 'Running' && hasReadyCondition(pod) && !isDeleting(pod);
}

function emptySlotsHoldEmptyImage(ctx: SidecarSetContext, pod: PodReadView): boolean {
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
  pod: PodReadView,
  names: ReadonlySet<string> | string = ctx.containerNames,
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

function isOneOf(names: ReadonlySet<string> | string, name: string): boolean {
  return typeof names === 'string' ? name === names : names.has(name);
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
  pod: PodReadView,
  statuses: readonly ContainerStatus[],
  names: ReadonlySet<string> | string,
): boolean {
  const raw = pod.metadata.annotations?.[SIDECARSET_INPLACE_UPDATE_STATE];
  if (raw === undefined) return true;
  const recorded = ctx.recordedStatuses(raw);
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
export function isUpgradedInPlace(ctx: SidecarSetContext, pod: PodReadView): boolean {
  const raw = pod.metadata.annotations?.[SIDECARSET_INPLACE_UPDATE_STATE];
  if (raw === undefined) return false;
  const recorded = ctx.recordedStatuses(raw);
  return recorded !== undefined && Object.keys(recorded).length > 0;
}

export type Upgradability = 'candidate' | 'notUpgradable' | 'inFlight';

/**
 * IsSidecarSetUpgradable: a different without-image hash means a change beyond images (not upgradable); a ready
 * sidecar whose last in-place update is not applied yet means wait (in flight). `consistent`:
 * isStateConsistent(ctx, pod), when the caller has it already.
 */
export function upgradability(
  ctx: SidecarSetContext,
  pod: PodReadView,
  consistent?: boolean,
): Upgradability {
  const recorded = pod.metadata.annotations?.[SIDECARSET_HASH_WITHOUT_IMAGE];
  if (!ctx.recordsHashWithoutImage(recorded)) return 'notUpgradable';
  const statuses = pod.status?.containerStatuses ?? [];
  const names = ctx.sortedContainerNames;
  for (const name of names) {
    const ready = statusOf(statuses, name)?.ready === true;
    if (!ready) continue;
    // With one sidecar container, its own state is the whole pod's (when the caller knows it).
    const settled =
      names.length === 1 && consistent !== undefined
        ? consistent
        : isStateConsistent(ctx, pod, name);
    if (!settled) return 'inFlight';
  }
  return 'candidate';
}
