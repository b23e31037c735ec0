/**
 * The exact write for one picked pod, as data and as a JSON patch: updatePodSidecarAndHash in
 * pkg/controller/sidecarset/sidecarset_processor.go.
 */
import {
  SIDECARSET_HASH,
  SIDECARSET_HASH_WITHOUT_IMAGE,
  SIDECARSET_INPLACE_UPDATE_STATE,
} from '../annotations.js';
import { UPGRADE_BASELINE, withUpgradeBaseline } from '../health/upgrade-baseline.js';
import { applyPatchPodMetadata } from '../inject/pod-metadata.js';
import { isPlainObject } from '../json.js';
import type { Pod } from '../k8s-types.js';
import type { JsonPatchOperation } from '../patch.js';
import type {
  HashForm,
  PodSidecarSetHashes,
  SidecarSetUpgradeSpec,
} from '../pod-hash-annotation.js';
import { formatPodSidecarSetHashes, formatTimestamp, readHashes } from '../pod-hash-annotation.js';
import type { SidecarSetPatchPodMetadata } from '../sidecarset-types.js';
import type { SidecarSetContext } from './context.js';
import type { InPlaceUpdateEntry } from './pod-records.js';
import { formatInPlaceUpdateStates, readInPlaceUpdateStates } from './pod-records.js';
import { flipChanges, hotUpgradeChanges } from './hot-slots.js';
import { hasReadyCondition } from './pod-state.js';
import type { ImageChange, PodFlip, PodRef, PodUpgrade } from './types.js';
import { canonicalRecordTest } from './canonical-record.js';
import { ValueMemo } from './value-memo.js';

/** The cold sidecars whose image differs from the SidecarSet's. */
export function imageChanges(ctx: SidecarSetContext, pod: Readonly<Pod>): ImageChange[] {
  const changes: ImageChange[] = [];
  for (const [name, image] of ctx.images) {
    const index = pod.spec.containers.findIndex((c) => c.name === name);
    const current = pod.spec.containers[index];
    if (current === undefined || current.image === image) continue;
    changes.push({ container: name, index, from: current.image ?? '', to: image });
  }
  return changes;
}

/** Throws SidecarSetError when patchPodMetadata cannot be applied. */
export function buildPodUpgrade(
  ctx: SidecarSetContext,
  pod: Readonly<Pod>,
  ref: PodRef,
  patchPodMetadata: readonly SidecarSetPatchPodMetadata[],
  now: Date,
): PodUpgrade {
  return podUpgradeBuilder(ctx, patchPodMetadata, now)(pod, ref);
}

/**
 * buildPodUpgrade for many pods of one round: the timestamp and the hash entry are made once, and
 * the rewritten hash annotation is remembered per distinct value the pods carry (it depends on
 * that value alone; pods of a workload often share it). `podReady`: whether the pod was Ready
 * before the upgrade began (default: its Ready condition now), for its health baseline.
 */
export function podUpgradeBuilder(
  ctx: SidecarSetContext,
  patchPodMetadata: readonly SidecarSetPatchPodMetadata[],
  now: Date,
): (pod: Readonly<Pod>, ref: PodRef, podReady?: boolean) => PodUpgrade {
  const timestamp = formatTimestamp(now);
  const hashEntry: SidecarSetUpgradeSpec = {
    updateTimestamp: timestamp,
    hash: ctx.hash,
    sidecarSetName: ctx.name,
    sidecarList: [...ctx.sidecarList],
  };
  if (ctx.latestRevision !== '') hashEntry.controllerRevision = ctx.latestRevision;
  // A pod that records this SidecarSet alone (the usual case) gets the very same new value.
  const soleEntry = canonicalRecordTest(ctx.name);
  const soleValue = formatPodSidecarSetHashes({ [ctx.name]: hashEntry });
  const rewritten = new ValueMemo<string>();
  const rewriteHashes = (before: Readonly<Record<string, string>>): WrittenHashes => {
    const value = before[SIDECARSET_HASH];
    if (value !== undefined && soleEntry?.(value) === true) return { hash: soleValue };
    const known = value === undefined ? undefined : rewritten.get(value);
    if (known !== undefined) return { hash: known };
    const written = writeHashes(before, ctx.name, hashEntry, timestamp);
    // Only the object form leaves the without-image annotation alone, so only it is remembered.
    if (value !== undefined && written.form === 'object') rewritten.set(value, written.hash);
    return written;
  };
  const paths = new Map<string, string>();
  const baselineOf = {
    sidecarSet: ctx.name,
    hash: ctx.hash,
    containers: ctx.sortedContainerNames,
    now,
  };
  return (pod, ref, podReady = hasReadyCondition(pod)) => {
    const hot = ctx.hot.length > 0 ? hotUpgradeChanges(ctx, pod) : undefined;
    const images =
      hot === undefined ? imageChanges(ctx, pod) : [...imageChanges(ctx, pod), ...hot.images];
    const before = pod.metadata.annotations ?? {};
    const hashes = rewriteHashes(before);
    let after: Record<string, string> = { [SIDECARSET_HASH]: hashes.hash };
    if (hashes.withoutImage !== undefined) {
      after[SIDECARSET_HASH_WITHOUT_IMAGE] = hashes.withoutImage;
    }
    if (hot !== undefined) Object.assign(after, hot.annotations);
    after[SIDECARSET_INPLACE_UPDATE_STATE] = inPlaceUpdateState(ctx, pod, images, timestamp);
    after[UPGRADE_BASELINE] = withUpgradeBaseline(pod, baselineOf, podReady);
    // patchPodMetadata may touch any annotation; without it, only the ones written can change.
    if (patchPodMetadata.length > 0) {
      after = { ...before, ...after };
      applyPatchPodMetadata(after, patchPodMetadata);
    }
    const annotations = changedAnnotations(before, after);
    return {
      pod: ref,
      images,
      hashEntry: { ...hashEntry, sidecarList: [...ctx.sidecarList] },
      annotations,
      patch: toPatch(ref, images, annotations, paths),
    };
  };
}

/** The flip after a finished hot upgrade (flipPodSidecarContainerDo, then the in-place state). */
export function buildPodFlip(
  ctx: SidecarSetContext,
  pod: Readonly<Pod>,
  ref: PodRef,
  now: Date,
): PodFlip {
  const { images, annotations: slots } = flipChanges(ctx, pod);
  const before = pod.metadata.annotations ?? {};
  const after: Record<string, string> = {
    ...slots,
    [SIDECARSET_INPLACE_UPDATE_STATE]: inPlaceUpdateState(ctx, pod, images, formatTimestamp(now)),
  };
  const annotations = changedAnnotations(before, after);
  return { pod: ref, images, annotations, patch: toPatch(ref, images, annotations, new Map()) };
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

/**
 * UpdatePodSidecarSetHash: replace this SidecarSet's entry. When the annotation is not in the
 * object form, a legacy `{"name":"hash"}` map is converted, and so is a legacy without-image map
 * (merged over the legacy hash entries, a quirk kept from OpenKruise). Converted entries are named
 * by their own key, not by this SidecarSet.
 */
function writeHashes(
  before: Readonly<Record<string, string>>,
  name: string,
  entry: SidecarSetUpgradeSpec,
  timestamp: string,
): WrittenHashes & { form: HashForm } {
  const read = readHashes(before[SIDECARSET_HASH]);
  let hashes: PodSidecarSetHashes = read.hashes;
  let withoutImage: string | undefined;
  if (read.form !== 'object') {
    const legacy = read.form === 'legacy' ? legacyMap(before[SIDECARSET_HASH]) : {};
    hashes = converted(legacy, timestamp);
    const legacyWithoutImage = legacyMap(before[SIDECARSET_HASH_WITHOUT_IMAGE]);
    if (legacyWithoutImage !== undefined) {
      withoutImage = formatPodSidecarSetHashes(
        converted({ ...legacy, ...legacyWithoutImage }, timestamp),
      );
    }
  }
  const hash = formatPodSidecarSetHashes({ ...hashes, [name]: entry });
  return withoutImage === undefined
    ? { form: read.form, hash }
    : { form: read.form, hash, withoutImage };
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
  const statuses = pod.status?.containerStatuses ?? [];
  for (const change of images) {
    let imageID = '';
    for (const s of statuses) if (s.name === change.container) imageID = s.imageID ?? '';
    entry.lastContainerStatuses[change.container] = imageID === '' ? {} : { imageID };
  }
  return formatInPlaceUpdateStates({ ...states, [ctx.name]: entry });
}

function pointerSegment(key: string): string {
  const tildes = key.includes('~') ? key.replaceAll('~', '~0') : key;
  return tildes.replaceAll('/', '~1');
}

/** `paths`: the annotation paths made so far (the same few keys, pod after pod). */
function toPatch(
  ref: PodRef,
  images: readonly ImageChange[],
  annotations: Readonly<Record<string, string>>,
  paths: Map<string, string>,
): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  if (ref.uid !== undefined) ops.push({ op: 'test', path: '/metadata/uid', value: ref.uid });
  for (const change of images) {
    const base = `/spec/containers/${change.index}`;
    ops.push({ op: 'test', path: `${base}/name`, value: change.container });
    ops.push({ op: 'add', path: `${base}/image`, value: change.to });
  }
  // A matched pod always has annotations (the injected list), so each key can be added alone.
  for (const key in annotations) {
    let path = paths.get(key);
    if (path === undefined) {
      path = `/metadata/annotations/${pointerSegment(key)}`;
      paths.set(key, path);
    }
    ops.push({ op: 'add', path, value: annotations[key] as string });
  }
  return ops;
}

/** The pod as it is after the upgrade's write (for simulations and tests). */
export function applyPodUpgrade(pod: Readonly<Pod>, upgrade: PodFlip): Pod {
  const next = structuredClone(pod) as Pod;
  for (const change of upgrade.images) {
    const container = next.spec.containers[change.index];
    if (container !== undefined) container.image = change.to;
  }
  next.metadata.annotations = { ...next.metadata.annotations, ...upgrade.annotations };
  return next;
}
