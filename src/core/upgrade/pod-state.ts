/** Per-pod predicates of the upgrade path, exactly as reference upgrade §2.3 and §3 state them. */
import {
  SIDECARSET_HASH,
  SIDECARSET_HASH_WITHOUT_IMAGE,
  SIDECARSET_INJECTED_LIST,
  SIDECARSET_INPLACE_UPDATE_STATE,
  SIDECARSET_WORKING_HOTUPGRADE_CONTAINER,
} from '../annotations.js';
import { isPlainObject } from '../json.js';
import type { ContainerStatus, Pod, PodCondition } from '../k8s-types.js';
import type { SidecarSetContext } from './context.js';
import { imagesEqual, isDigestImage, stripImageIdScheme } from './image.js';
import { readInPlaceUpdateStates, recordsHash } from './pod-records.js';

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
  return list !== '' && list.split(',').includes(ctx.name);
}

/** §3.1: the pod holds every sidecar container (both slots and a working entry for hot ones). */
export function hasEverySidecar(ctx: SidecarSetContext, pod: PodReadView): boolean {
  const names = new Set(pod.spec.containers.map((c) => c.name));
  for (const name of ctx.images.keys()) if (!names.has(name)) return false;
  if (ctx.hot.length === 0) return true;
  const working = workingHotContainers(pod);
  return ctx.hot.every(
    (h) => working[h.name] !== undefined && names.has(h.slots[0]) && names.has(h.slots[1]),
  );
}

function workingHotContainers(pod: PodReadView): Record<string, string> {
  const raw = pod.metadata.annotations?.[SIDECARSET_WORKING_HOTUPGRADE_CONTAINER];
  if (raw === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (!isPlainObject(parsed)) return {};
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') out[k] = v;
    return out;
  } catch {
    return {};
  }
}

/** §3.2: the hash the pod records for this SidecarSet is the SidecarSet's hash. */
export function isUpdated(ctx: SidecarSetContext, pod: PodReadView): boolean {
  return recordsHash(pod.metadata.annotations?.[SIDECARSET_HASH], ctx.name, ctx.hash);
}

/** Kubernetes' podutil.IsPodReady: the Ready condition alone. */
export function hasReadyCondition(pod: PodReadView): boolean {
  return readyCondition(pod)?.status === 'True';
}

export function readyCondition(pod: PodReadView): PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === 'Ready');
}

/** §3.6: Running, Ready=True, not deleting, and every hot-upgrade empty slot on the empty image. */
export function isReady(ctx: SidecarSetContext, pod: PodReadView): boolean {
  if (ctx.hot.length > 0 && !emptySlotsHoldEmptyImage(ctx, pod)) return false;
  return pod.status?.phase === 'Running' && hasReadyCondition(pod) && !isDeleting(pod);
}

function emptySlotsHoldEmptyImage(ctx: SidecarSetContext, pod: PodReadView): boolean {
  const working = workingHotContainers(pod);
  return ctx.hot.every((h) => {
    if (h.emptyImage === '') return true;
    const empty = working[h.name] === h.slots[0] ? h.slots[1] : h.slots[0];
    const container = pod.spec.containers.find((c) => c.name === empty);
    return container === undefined || container.image === h.emptyImage;
  });
}

/**
 * §3.5: has the kubelet applied what the spec says for these containers (all sidecar containers
 * when `names` is omitted)?
 */
export function isStateConsistent(
  ctx: SidecarSetContext,
  pod: PodReadView,
  names: ReadonlySet<string> | string = ctx.containerNames,
): boolean {
  const has = typeof names === 'string' ? (n: string) => n === names : (n: string) => names.has(n);
  const statuses = pod.status?.containerStatuses ?? [];
  if (pod.spec.containers.length !== statuses.length) return false;
  let allDigest = true;
  for (const container of pod.spec.containers) {
    if (!has(container.name)) continue;
    const image = container.image ?? '';
    if (!isDigestImage(image)) {
      allDigest = false;
      break;
    }
    const status = statuses.find((s) => s.name === container.name);
    if (status === undefined || !imagesEqual(image, stripImageIdScheme(status.imageID ?? ''))) {
      return false;
    }
  }
  return allDigest || isUpdateCompleted(ctx, pod, statuses, has);
}

/** IsSidecarContainerUpdateCompleted for this SidecarSet's entry of the in-place-update state. */
function isUpdateCompleted(
  ctx: SidecarSetContext,
  pod: PodReadView,
  statuses: readonly ContainerStatus[],
  has: (name: string) => boolean,
): boolean {
  const raw = pod.metadata.annotations?.[SIDECARSET_INPLACE_UPDATE_STATE];
  if (raw === undefined) return true;
  const states = readInPlaceUpdateStates(raw);
  if (states === undefined) return false;
  const recorded = states[ctx.name]?.lastContainerStatuses ?? {};
  for (const status of statuses) {
    if (!has(status.name)) continue;
    const before = recorded[status.name];
    if (before === undefined) continue;
    const specImage = pod.spec.containers.find((c) => c.name === status.name)?.image ?? '';
    if ((before.imageID ?? '') === (status.imageID ?? '') && specImage !== (status.image ?? '')) {
      return false;
    }
  }
  return true;
}

export type Upgradability = 'candidate' | 'notUpgradable' | 'inFlight';

/**
 * §3.4: a different without-image hash means a change beyond images (not upgradable); a ready
 * sidecar whose last in-place update is not applied yet means wait (in flight).
 */
export function upgradability(ctx: SidecarSetContext, pod: PodReadView): Upgradability {
  const recorded = pod.metadata.annotations?.[SIDECARSET_HASH_WITHOUT_IMAGE];
  if (!recordsHash(recorded, ctx.name, ctx.hashWithoutImage)) return 'notUpgradable';
  const statuses = pod.status?.containerStatuses ?? [];
  for (const name of ctx.sortedContainerNames) {
    const ready = statuses.find((s) => s.name === name)?.ready === true;
    if (ready && !isStateConsistent(ctx, pod, name)) return 'inFlight';
  }
  return 'candidate';
}
