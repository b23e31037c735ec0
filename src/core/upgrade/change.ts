/**
 * The exact write for one picked pod: updatePodSidecarAndHash in
 * pkg/controller/sidecarset/sidecarset_processor.go, and the flip of a finished hot upgrade.
 */
import {
  SIDECARSET_HASH,
  SIDECARSET_HASH_WITHOUT_IMAGE,
  SIDECARSET_INPLACE_UPDATE_STATE,
} from '../api/annotations.js';
import { UPGRADE_BASELINE, withUpgradeBaseline } from '../pod-annotations/upgrade-baseline.js';
import { applyPatchPodMetadata } from '../inject/pod-metadata.js';
import type { Pod } from '../api/k8s-types.js';
import type { SidecarSetUpgradeSpec } from '../pod-annotations/pod-hash-annotation.js';
import {
  formatTimestamp,
  recordedHash,
  withHashEntries,
} from '../pod-annotations/pod-hash-annotation.js';
import type { SidecarSetPatchPodMetadata } from '../api/sidecarset-types.js';
import type { SidecarSetContext } from './context.js';
import { withInPlaceUpdate } from '../pod-annotations/in-place-update-state.js';
import { flipChanges, hotUpgradeChanges } from './hot-slots.js';
import { containerStatus, podContainer } from '../api/pod-containers.js';
import { resourceChanges } from './pod-state.js';
import { podRef } from '../api/pod-ref.js';
import { hasReadyCondition } from '../api/pod-status.js';
import type { ImageChange, PodUpgrade } from './types.js';

/** The cold sidecars whose image differs from the SidecarSet's. */
function imageChanges(ctx: SidecarSetContext, pod: Readonly<Pod>): ImageChange[] {
  const changes: ImageChange[] = [];
  for (const [name, image] of ctx.images) {
    const current = podContainer(pod, name);
    if (current === undefined || current.image === image) continue;
    changes.push({ container: name, from: current.image ?? '', to: image });
  }
  return changes;
}

/**
 * updatePodSidecarAndHash: the images, the hash entry, the in-place-update state and the health
 * baseline (docs/adr/0014-health-gated-rollouts.md), then patchPodMetadata. `podReady`: whether
 * the pod was Ready before the upgrade began (default: its Ready condition now). Throws
 * SidecarSetError when patchPodMetadata cannot be applied.
 */
export function buildPodUpgrade(
  ctx: SidecarSetContext,
  pod: Readonly<Pod>,
  patchPodMetadata: readonly SidecarSetPatchPodMetadata[],
  now: Date,
  podReady = hasReadyCondition(pod),
): PodUpgrade {
  const timestamp = formatTimestamp(now);
  const entry: SidecarSetUpgradeSpec = {
    updateTimestamp: timestamp,
    hash: ctx.hash,
    sidecarSetName: ctx.name,
    sidecarList: [...ctx.sidecarList],
  };
  const revision = ctx.latestRevision;
  const hashEntry = revision === '' ? entry : { ...entry, controllerRevision: revision };
  const before = pod.metadata.annotations ?? {};
  // More than images changed: resources, resized in place (whyNotUpgradable vouched for the rest).
  const resized =
    recordedHash(before[SIDECARSET_HASH_WITHOUT_IMAGE], ctx.name) !== ctx.hashWithoutImage;
  const resources = resized ? resourceChanges(ctx, pod) : [];
  const withoutImageEntry = resized ? { ...entry, hash: ctx.hashWithoutImage } : undefined;
  const hot = hotUpgradeChanges(ctx, pod);
  const images = [...imageChanges(ctx, pod), ...hot.images];
  const hashes = withHashEntries(before, ctx.name, { hashEntry, withoutImageEntry }, timestamp);
  let after: Record<string, string> = { [SIDECARSET_HASH]: hashes.hash };
  if (hashes.withoutImage !== undefined) after[SIDECARSET_HASH_WITHOUT_IMAGE] = hashes.withoutImage;
  Object.assign(after, hot.annotations);
  after[SIDECARSET_INPLACE_UPDATE_STATE] = inPlaceUpdateState(ctx, pod, images, timestamp);
  const baselineOf = { sidecarSet: ctx.name, hash: ctx.hash, containers: ctx.containerNames, now };
  after[UPGRADE_BASELINE] = withUpgradeBaseline(pod, baselineOf, podReady);
  // patchPodMetadata may touch any annotation; without it, only the ones written can change.
  if (patchPodMetadata.length > 0) {
    after = { ...before, ...after };
    applyPatchPodMetadata(after, patchPodMetadata);
  }
  const annotations = changedAnnotations(before, after);
  return { pod: podRef(pod), images, resources, annotations };
}

/** The flip after a finished hot upgrade (flipPodSidecarContainerDo, then the in-place state). */
export function buildPodFlip(ctx: SidecarSetContext, pod: Readonly<Pod>, now: Date): PodUpgrade {
  const { images, annotations } = flipChanges(ctx, pod);
  const state = inPlaceUpdateState(ctx, pod, images, formatTimestamp(now));
  annotations[SIDECARSET_INPLACE_UPDATE_STATE] = state;
  const changed = changedAnnotations(pod.metadata.annotations ?? {}, annotations);
  return { pod: podRef(pod), images, resources: [], annotations: changed };
}

/** The annotations of `after` whose value differs from `before`'s. */
function changedAnnotations(before: Record<string, string>, after: Record<string, string>) {
  return Object.fromEntries(Object.entries(after).filter(([key, value]) => before[key] !== value));
}

/** The in-place-update state with the upgraded containers' imageIDs just before the write. */
function inPlaceUpdateState(
  ctx: SidecarSetContext,
  pod: Readonly<Pod>,
  images: readonly ImageChange[],
  timestamp: string,
): string {
  const imageIDs = new Map(
    images.map((c) => [c.container, containerStatus(pod, c.container)?.imageID ?? '']),
  );
  const value = pod.metadata.annotations?.[SIDECARSET_INPLACE_UPDATE_STATE];
  return withInPlaceUpdate(value, ctx, imageIDs, timestamp);
}
