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
import { isPlainObject } from '../encoding/json.js';
import type { Pod } from '../api/k8s-types.js';
import type {
  PodSidecarSetHashes,
  SidecarSetUpgradeSpec,
} from '../pod-annotations/pod-hash-annotation.js';
import {
  formatPodSidecarSetHashes,
  formatTimestamp,
  readHashes,
  recordedHash,
} from '../pod-annotations/pod-hash-annotation.js';
import type { SidecarSetPatchPodMetadata } from '../api/sidecarset-types.js';
import type { SidecarSetContext } from './context.js';
import type { InPlaceUpdateEntry } from '../pod-annotations/in-place-update-state.js';
import {
  formatInPlaceUpdateStates,
  readInPlaceUpdateStates,
} from '../pod-annotations/in-place-update-state.js';
import { flipChanges, hotUpgradeChanges } from './hot-slots.js';
import { resourceChanges } from './resources.js';
import { containerStatus, podContainer } from '../api/pod-containers.js';
import { hasReadyCondition, podRef } from './pod-state.js';
import type { ImageChange, PodFlip, PodUpgrade } from './types.js';

/** The cold sidecars whose image differs from the SidecarSet's. */
export function imageChanges(ctx: SidecarSetContext, pod: Readonly<Pod>): ImageChange[] {
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
  const hashEntry: SidecarSetUpgradeSpec = {
    updateTimestamp: timestamp,
    hash: ctx.hash,
    sidecarSetName: ctx.name,
    sidecarList: [...ctx.sidecarList],
  };
  if (ctx.latestRevision !== '') hashEntry.controllerRevision = ctx.latestRevision;
  const before = pod.metadata.annotations ?? {};
  // More than images changed: resources, resized in place (upgradability vouched for the rest).
  const resized =
    recordedHash(before[SIDECARSET_HASH_WITHOUT_IMAGE], ctx.name) !== ctx.hashWithoutImage;
  const resources = resized ? resourceChanges(ctx, pod) : [];
  const withoutImageEntry: SidecarSetUpgradeSpec | undefined = resized
    ? { ...hashEntry, hash: ctx.hashWithoutImage }
    : undefined;
  delete withoutImageEntry?.controllerRevision;
  const hot = hotUpgradeChanges(ctx, pod);
  const images = [...imageChanges(ctx, pod), ...hot.images];
  const hashes = writeHashes(before, ctx.name, { hashEntry, withoutImageEntry }, timestamp);
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
  return { pod: podRef(pod), images, resources, hashEntry, annotations };
}

/** The flip after a finished hot upgrade (flipPodSidecarContainerDo, then the in-place state). */
export function buildPodFlip(ctx: SidecarSetContext, pod: Readonly<Pod>, now: Date): PodFlip {
  const { images, annotations: slots } = flipChanges(ctx, pod);
  const before = pod.metadata.annotations ?? {};
  const after: Record<string, string> = {
    ...slots,
    [SIDECARSET_INPLACE_UPDATE_STATE]: inPlaceUpdateState(ctx, pod, images, formatTimestamp(now)),
  };
  return { pod: podRef(pod), images, annotations: changedAnnotations(before, after) };
}

/** The annotations of `after` whose value differs from `before`'s. */
function changedAnnotations(
  before: Readonly<Record<string, string>>,
  after: Readonly<Record<string, string>>,
): Record<string, string> {
  const annotations: Record<string, string> = {};
  for (const key in after) {
    const value = after[key] as string;
    if (before[key] !== value) annotations[key] = value;
  }
  return annotations;
}

/** The hash annotation's new value and, when a legacy one is converted, the without-image one. */
interface WrittenHashes {
  hash: string;
  withoutImage?: string;
}

/** This SidecarSet's new entries: always the hash, the without-image hash when it changed. */
interface NewEntries {
  hashEntry: SidecarSetUpgradeSpec;
  withoutImageEntry: SidecarSetUpgradeSpec | undefined;
}

/**
 * UpdatePodSidecarSetHash: replace this SidecarSet's entry. When the annotation is not in the
 * object form, a legacy `{"name":"hash"}` map is converted, and so is a legacy without-image map
 * (merged over the legacy hash entries, a quirk kept from OpenKruise). Converted entries are named
 * by their own key, not by this SidecarSet. The without-image entry is ours: written when
 * resources changed in place, as injection would have written it.
 */
function writeHashes(
  before: Readonly<Record<string, string>>,
  name: string,
  { hashEntry, withoutImageEntry }: NewEntries,
  timestamp: string,
): WrittenHashes {
  const read = readHashes(before[SIDECARSET_HASH]);
  let hashes: PodSidecarSetHashes = read.hashes;
  let withoutImage: PodSidecarSetHashes | undefined;
  if (read.form !== 'object') {
    const legacy = read.form === 'legacy' ? legacyMap(before[SIDECARSET_HASH]) : {};
    hashes = converted(legacy, timestamp);
    const legacyWithoutImage = legacyMap(before[SIDECARSET_HASH_WITHOUT_IMAGE]);
    if (legacyWithoutImage !== undefined) {
      withoutImage = converted({ ...legacy, ...legacyWithoutImage }, timestamp);
    }
  }
  if (withoutImageEntry !== undefined) {
    withoutImage ??= readHashes(before[SIDECARSET_HASH_WITHOUT_IMAGE]).hashes;
    withoutImage = { ...withoutImage, [name]: withoutImageEntry };
  }
  const hash = formatPodSidecarSetHashes({ ...hashes, [name]: hashEntry });
  return withoutImage === undefined
    ? { hash }
    : { hash, withoutImage: formatPodSidecarSetHashes(withoutImage) };
}

/** The value as Go's map[string]string, or undefined when it does not decode as one. */
function legacyMap(value: string | undefined): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    if (!isPlainObject(parsed)) return undefined;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(parsed)) {
      if (typeof v !== 'string') return undefined;
      out[k] = v;
    }
    return out;
  } catch {
    return undefined;
  }
}

function converted(
  legacy: Readonly<Record<string, string>> | undefined,
  timestamp: string,
): PodSidecarSetHashes {
  const out: PodSidecarSetHashes = {};
  for (const [k, hash] of Object.entries(legacy ?? {})) {
    out[k] = { updateTimestamp: timestamp, hash, sidecarSetName: k, sidecarList: null };
  }
  return out;
}

/**
 * UpdatePodAnnotationsInUpgrade: an existing entry keeps its revision and timestamp (they record
 * the first in-place update); each changed container's current status imageID is recorded raw.
 */
function inPlaceUpdateState(
  ctx: SidecarSetContext,
  pod: Readonly<Pod>,
  images: readonly ImageChange[],
  timestamp: string,
): string {
  const raw = pod.metadata.annotations?.[SIDECARSET_INPLACE_UPDATE_STATE];
  const states = (raw === undefined || raw === '' ? {} : readInPlaceUpdateStates(raw)) ?? {};
  const existing = states[ctx.name];
  const entry: InPlaceUpdateEntry = {
    revision: existing?.revision ?? ctx.hash,
    updateTimestamp: existing === undefined ? timestamp : existing.updateTimestamp,
    lastContainerStatuses: { ...existing?.lastContainerStatuses },
    extra: existing?.extra ?? {},
  };
  for (const change of images) {
    const imageID = containerStatus(pod, change.container)?.imageID ?? '';
    entry.lastContainerStatuses[change.container] = imageID === '' ? {} : { imageID };
  }
  return formatInPlaceUpdateStates({ ...states, [ctx.name]: entry });
}

/** The pod as it is after the upgrade's write (for simulations and tests). */
export function applyPodUpgrade(pod: Readonly<Pod>, upgrade: PodFlip | PodUpgrade): Pod {
  const next = structuredClone(pod) as Pod;
  for (const change of upgrade.images) {
    const container = podContainer(next, change.container);
    if (container !== undefined) container.image = change.to;
  }
  for (const change of 'resources' in upgrade ? upgrade.resources : []) {
    const container = podContainer(next, change.container);
    if (container !== undefined) container.resources = change.to;
  }
  next.metadata.annotations = { ...next.metadata.annotations, ...upgrade.annotations };
  return next;
}
