/**
 * Hot upgrade (OpenKruise's pkg/control/sidecarcontrol/util_hotupgrade.go and
 * pkg/controller/sidecarset/sidecarset_hotupgrade.go).
 * A HotUpgrade sidecar runs in two slot containers, `<name>-1` and `<name>-2`: one works, the other
 * idles on the empty image. An upgrade writes the new image into a slot, which becomes the working
 * one; once it runs and the pod is ready, a flip puts the old slot back on the empty image.
 */
import {
  SIDECARSET_WORKING_HOTUPGRADE_CONTAINER,
  versionAltAnnotation,
  versionAnnotation,
} from '../api/annotations.js';
import {
  formatWorkingSlots,
  hotSlots,
  workingHotContainers,
} from '../pod-annotations/hot-upgrade-annotation.js';
import type { Pod } from '../api/k8s-types.js';
import type { HotSlot, SidecarSetContext } from './context.js';
import { containerStatus, podContainer } from '../api/pod-containers.js';
import { isStateConsistent } from './pod-state.js';
import { isRunningAndReady } from '../api/pod-status.js';
import type { ImageChange, PodUpgrade } from './types.js';

function imageOf(pod: Readonly<Pod>, name: string): string {
  return podContainer(pod, name)?.image ?? '';
}

/** A slot is ready when its status says so and the kubelet runs what its spec says. */
function slotReady(ctx: SidecarSetContext, pod: Readonly<Pod>, slot: string): boolean {
  const ready = containerStatus(pod, slot)?.ready === true;
  return ready && isStateConsistent(ctx, pod, [slot]);
}

/**
 * findContainerToHotUpgrade: the slot on the empty image; else the one not ready; else the idle
 * (older) one. `other` is the slot left as it is.
 */
export function slotToUpgrade(
  ctx: SidecarSetContext,
  hot: HotSlot,
  pod: Readonly<Pod>,
): { slot: string; other: string } {
  const [first, second] = hot.slots;
  if (imageOf(pod, first) === hot.emptyImage) return { slot: first, other: second };
  if (imageOf(pod, second) === hot.emptyImage) return { slot: second, other: first };
  const firstReady = slotReady(ctx, pod, first);
  const secondReady = slotReady(ctx, pod, second);
  if (firstReady && !secondReady) return { slot: second, other: first };
  if (!firstReady && secondReady) return { slot: first, other: second };
  const { working, idle } = hotSlots(hot, workingHotContainers(pod));
  return { slot: idle, other: working };
}

/**
 * The hot sidecars' part of an upgrade (updatePodSidecarContainer): each whose other slot does not
 * already run the SidecarSet's image gets it in the chosen slot, which becomes the working one;
 * the slots' versions move with it.
 */
export function hotUpgradeChanges(
  ctx: SidecarSetContext,
  pod: Readonly<Pod>,
): Pick<PodUpgrade, 'images' | 'annotations'> {
  const before = pod.metadata.annotations ?? {};
  const working = workingHotContainers(pod);
  const images: ImageChange[] = [];
  const annotations: Record<string, string> = {};
  for (const hot of ctx.hot) {
    const { slot, other } = slotToUpgrade(ctx, hot, pod);
    if (imageOf(pod, other) === hot.image) continue;
    images.push({ container: slot, from: imageOf(pod, slot), to: hot.image });
    working[hot.name] = slot;
    annotations[versionAnnotation(slot)] = ctx.resourceVersion;
    annotations[versionAltAnnotation(slot)] = before[versionAnnotation(other)] ?? '';
    annotations[versionAltAnnotation(other)] = ctx.resourceVersion;
  }
  if (images.length > 0)
    annotations[SIDECARSET_WORKING_HOTUPGRADE_CONTAINER] = formatWorkingSlots(working);
  return { images, annotations };
}

/**
 * Whether a finished hot upgrade waits for its flip (step 5 of OpenKruise's reconcile): an idle
 * slot is not on the empty image, every other sidecar container runs what its spec says, and the
 * pod is running and ready, or every container but the idle slots is.
 */
export function needsFlip(ctx: SidecarSetContext, pod: Readonly<Pod>): boolean {
  if (ctx.hot.length === 0) return false;
  const working = workingHotContainers(pod);
  const idle = ctx.hot.map((hot) => hotSlots(hot, working).idle);
  if (ctx.hot.every((hot, k) => imageOf(pod, idle[k] as string) === hot.emptyImage)) return false;
  const others = ctx.containerNames.filter((name) => !idle.includes(name));
  const statuses = pod.status?.containerStatuses ?? [];
  const othersReady = statuses.every((s) => idle.includes(s.name) || s.ready === true);
  return isStateConsistent(ctx, pod, others) && (isRunningAndReady(pod) || othersReady);
}

/** flipPodSidecarContainerDo: each idle slot not on the empty image goes back to it. */
export function flipChanges(
  ctx: SidecarSetContext,
  pod: Readonly<Pod>,
): Pick<PodUpgrade, 'images' | 'annotations'> {
  const working = workingHotContainers(pod);
  const images: ImageChange[] = [];
  const annotations: Record<string, string> = {};
  for (const hot of ctx.hot) {
    const slots = hotSlots(hot, working);
    if (imageOf(pod, slots.idle) === hot.emptyImage) continue;
    images.push({ container: slots.idle, from: imageOf(pod, slots.idle), to: hot.emptyImage });
    annotations[versionAnnotation(slots.idle)] = '0';
    annotations[versionAltAnnotation(slots.working)] = '0';
  }
  return { images, annotations };
}
