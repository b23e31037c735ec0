/**
 * SidecarSet ControllerRevisions as OpenKruise keeps them (OpenKruise pkg/control/sidecarcontrol/history_control.go,
 * pkg/control/sidecarcontrol/history_control.go and registerLatestRevision): the revision data, its
 * name, and the plan of one registration round. Pure: the edge lists, creates, patches, deletes.
 */
import {
  SIDECARSET_CUSTOM_VERSION_LABEL,
  SIDECARSET_HASH,
  SIDECARSET_NAME_LABEL,
} from '../api/annotations.js';
import { customVersionOf } from '../api/custom-version.js';
import { LOCAL_OBJECT_REFERENCE, SIDECAR_CONTAINER } from '../encoding/go-container-fields.js';
import { encodeGo, goMap, goSlice, goString, goStruct } from '../encoding/go-json.js';
import {
  computeHashWithoutImageResources,
  computeSidecarSetHashWithoutImage,
  safeEncodeString,
} from '../api/hash.js';
import { compareStrings, isPlainObject, sortedJson } from '../encoding/json.js';
import type { Pod } from '../api/k8s-types.js';
import { parsePodSidecarSetHashes } from '../pod-annotations/pod-hash-annotation.js';
import type { SidecarSet, SidecarSetRevision } from '../api/sidecarset-types.js';

/** Kubernetes' label for the revision hash (apps/v1 ControllerRevisionHashLabel). */
export const CONTROLLER_REVISION_HASH_LABEL = 'controller.kubernetes.io/hash';
const DEFAULT_HISTORY_LIMIT = 10;
/** history.ControllerRevisionName keeps at most this much of the parent's name. */
const MAX_PREFIX = 223;

const PATCH_POD_METADATA = goStruct('SidecarSetPatchPodMetadata', [
  ['annotations,omitempty', goMap(goString)],
  ['patchPolicy,omitempty', goString],
]);

/** The spec fields a revision records, each with the Go type its items are encoded as. */
const RECORDED = [
  ['volumes', undefined],
  ['containers', goSlice(SIDECAR_CONTAINER)],
  ['initContainers', goSlice(SIDECAR_CONTAINER)],
  ['imagePullSecrets', goSlice(LOCAL_OBJECT_REFERENCE)],
  ['patchPodMetadata', goSlice(PATCH_POD_METADATA)],
] as const;

/**
 * The revision data: `{"spec":{"$patch":"replace",...}}` as Go writes it. OpenKruise encodes the
 * typed SidecarSet, decodes it into a map and encodes that map, so every object's keys come out
 * sorted, an empty or absent field (all are omitempty) is null, and < > & are escaped. Containers,
 * image pull secrets and patchPodMetadata go through their Go types first (unknown keys dropped,
 * zero-valued required fields written); volumes are taken as stored (no core/v1 Volume table here).
 */
export function revisionData(ss: Readonly<SidecarSet>): string {
  const spec: Record<string, unknown> = { $patch: 'replace' };
  const source = ss.spec as Readonly<Record<string, unknown>>;
  for (const [field, type] of RECORDED) {
    const value = source[field];
    if (!Array.isArray(value) || value.length === 0) {
      spec[field] = null;
      continue;
    }
    spec[field] = type === undefined ? value : JSON.parse(encodeGo(value, type, `spec.${field}`));
  }
  return sortedJson({ spec });
}

/** The revision's data re-encoded as OpenKruise wrote it (from a ControllerRevision's `data`). */
export function canonicalData(data: unknown): string {
  return sortedJson(data ?? null);
}

/** 32-bit FNV-1 (multiply, then xor) over UTF-8 bytes. */
export function fnv1_32(bytes: Uint8Array, seed = 0x811c9dc5): number {
  let hash = seed;
  for (const byte of bytes) {
    hash = Math.imul(hash, 0x01000193) >>> 0;
    hash = (hash ^ byte) >>> 0;
  }
  return hash;
}

/** history.HashControllerRevision: FNV-1 over the data then the decimal collision count. */
export function revisionHash(data: string, collisionCount: number): string {
  const bytes = new TextEncoder().encode(data + String(collisionCount));
  return safeEncodeString(String(fnv1_32(bytes)));
}

/** history.ControllerRevisionName: `<parent>-<hash>`, the parent's name cut to 223 characters. */
export function revisionName(sidecarSetName: string, hash: string): string {
  return `${sidecarSetName.slice(0, MAX_PREFIX)}-${hash}`;
}

/** A ControllerRevision of a SidecarSet as the edge read it. */
export interface StoredRevision {
  name: string;
  revision: number;
  /** canonicalData of its `data`. */
  data: string;
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
}

/** What to create: an apps/v1 ControllerRevision without namespace and owner. */
export interface NewRevision {
  name: string;
  revision: number;
  data: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface RevisionPlan {
  /** A new revision (the spec changed to something never seen). */
  create?: NewRevision;
  /** A rollback: this existing revision gets the next number and becomes the newest. */
  renumber?: { name: string; revision: number };
  /** Set the custom version label of the latest revision to this value. */
  customVersion?: { name: string; value: string };
  /** Old revisions to delete, oldest first. */
  delete: string[];
  latestRevision: string;
  collisionCount: number;
  /** Revisions that remain over the limit because they are in use (OpenKruise logs an error). */
  overLimit: number;
}

/** history.SortControllerRevisions: by number, then by name. */
export function sortRevisions<T extends { revision: number; name: string }>(
  revisions: readonly T[],
): T[] {
  return [...revisions].sort((a, b) => a.revision - b.revision || compareStrings(a.name, b.name));
}

/**
 * NewRevision: the candidate for the current spec, named with this collision count. Its labels
 * are the SidecarSet's, with the custom version of either API version: the same revision for a
 * SidecarSet written as v1alpha1 or v1beta1.
 */
export function newRevision(
  ss: Readonly<SidecarSet>,
  number: number,
  collisionCount: number,
  data = revisionData(ss),
): NewRevision {
  const name = ss.metadata.name ?? '';
  const hash = revisionHash(data, collisionCount);
  const labels: Record<string, string> = { ...ss.metadata.labels };
  const customVersion = ss.spec.customVersion ?? '';
  if (customVersion !== '') labels[SIDECARSET_CUSTOM_VERSION_LABEL] = customVersion;
  labels[CONTROLLER_REVISION_HASH_LABEL] = hash;
  labels[SIDECARSET_NAME_LABEL] = name;
  return {
    name: revisionName(name, hash),
    revision: number,
    data,
    labels,
    annotations: { ...ss.metadata.annotations },
  };
}

/** A revision's name and labels, in age order wherever a list of them is passed. */
export interface Entry {
  name: string;
  labels: Readonly<Record<string, string>>;
}

/**
 * One round of registerLatestRevision. `existing` is every revision labelled with this
 * SidecarSet's name, any order; `pods` are its matched pods (their controllerRevision keeps a
 * revision alive). A name already taken by other data raises the collision count, as the API's
 * AlreadyExists would; the edge still handles AlreadyExists for revisions it did not list.
 */
export function planRevisions(
  ss: Readonly<SidecarSet>,
  existing: readonly StoredRevision[],
  pods: readonly Pod[],
): RevisionPlan {
  const sorted = sortRevisions(existing);
  const last = sorted[sorted.length - 1];
  const next = last === undefined ? 1 : last.revision + 1;
  let collisionCount = ss.status?.collisionCount ?? 0;
  const data = revisionData(ss);
  const equal = sorted.filter((r) => r.data === data);
  const newestEqual = equal[equal.length - 1];
  const plan: RevisionPlan = { delete: [], latestRevision: '', collisionCount, overLimit: 0 };
  let latest: Entry;
  // The list in age order after this round, the latest last.
  let order: Entry[];
  if (newestEqual !== undefined && newestEqual === last) {
    latest = last;
    order = sorted;
  } else if (newestEqual !== undefined) {
    plan.renumber = { name: newestEqual.name, revision: next };
    latest = newestEqual;
    order = [...sorted.filter((r) => r !== newestEqual), newestEqual];
  } else {
    const byName = new Set(sorted.map((r) => r.name));
    let candidate = newRevision(ss, next, collisionCount, data);
    while (byName.has(candidate.name)) {
      collisionCount++;
      candidate = newRevision(ss, next, collisionCount, data);
    }
    plan.create = candidate;
    latest = candidate;
    order = [...sorted, candidate];
  }
  plan.latestRevision = latest.name;
  plan.collisionCount = collisionCount;
  const customVersion = customVersionOf(ss);
  if (customVersion !== '' && latest.labels[SIDECARSET_CUSTOM_VERSION_LABEL] !== customVersion) {
    plan.customVersion = { name: latest.name, value: customVersion };
    const labels = { ...latest.labels, [SIDECARSET_CUSTOM_VERSION_LABEL]: customVersion };
    order = [...order.slice(0, -1), { name: latest.name, labels }];
  }
  const truncated = truncateHistory(ss, order, activeRevisions(ss, pods, order));
  plan.delete = truncated.delete;
  plan.overLimit = truncated.overLimit;
  return plan;
}

/**
 * truncateHistory: limit = max(1, revisionHistoryLimit) (default 10); from the oldest, never the
 * newest, delete revisions not in use until the count fits.
 */
export function truncateHistory(
  ss: Readonly<SidecarSet>,
  ordered: readonly { name: string }[],
  active: ReadonlySet<string>,
): { delete: string[]; overLimit: number } {
  const limitSetting = ss.spec.revisionHistoryLimit;
  const limit = limitSetting === undefined ? DEFAULT_HISTORY_LIMIT : Math.max(1, limitSetting);
  let excess = ordered.length - limit;
  const deleted: string[] = [];
  for (let i = 0; i < ordered.length - 1 && excess > 0; i++) {
    const name = ordered[i]?.name ?? '';
    if (active.has(name)) continue;
    deleted.push(name);
    excess--;
  }
  return { delete: deleted, overLimit: Math.max(0, excess) };
}

/**
 * filterActiveRevisions: the revisions named by a pod's controllerRevision, by
 * injectionStrategy.revision.revisionName, and the newest one with the pinned customVersion.
 */
export function activeRevisions(
  ss: Readonly<SidecarSet>,
  pods: readonly Pod[],
  ordered: readonly Entry[],
): Set<string> {
  const name = ss.metadata.name ?? '';
  const active = new Set<string>();
  for (const pod of pods) {
    const revision = podControllerRevision(pod, name);
    if (revision !== '') active.add(revision);
  }
  const pin = ss.spec.injectionStrategy?.revision;
  if (pin?.revisionName !== undefined) active.add(pin.revisionName);
  if (pin?.customVersion !== undefined) {
    const newest = ordered
      .filter((r) => r.labels[SIDECARSET_CUSTOM_VERSION_LABEL] === pin.customVersion)
      .at(-1);
    if (newest !== undefined) active.add(newest.name);
  }
  return active;
}

/** The controllerRevision a pod's kruise.io/sidecarset-hash records for this SidecarSet, or ''. */
export function podControllerRevision(pod: Readonly<Pod>, sidecarSetName: string): string {
  try {
    const hashes = parsePodSidecarSetHashes(
      pod.metadata.annotations?.[SIDECARSET_HASH],
      SIDECARSET_HASH,
    );
    return hashes[sidecarSetName]?.controllerRevision ?? '';
  } catch {
    return '';
  }
}

/** What injection reads of a stored revision (the webhook rebuilds the SidecarSet from it). */
export function toSidecarSetRevision(stored: StoredRevision): SidecarSetRevision | undefined {
  const sidecarSetName = stored.labels[SIDECARSET_NAME_LABEL];
  if (sidecarSetName === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored.data);
  } catch {
    return undefined;
  }
  const spec = isPlainObject(parsed) ? parsed['spec'] : undefined;
  if (!isPlainObject(spec)) return undefined;
  const out: SidecarSetRevision = {
    name: stored.name,
    sidecarSetName,
    revision: stored.revision,
    annotations: { ...stored.annotations },
    spec: {},
  };
  const customVersion = stored.labels[SIDECARSET_CUSTOM_VERSION_LABEL];
  if (customVersion !== undefined) out.customVersion = customVersion;
  const target = out.spec as Record<string, unknown>;
  for (const [field] of RECORDED) {
    const value = spec[field];
    if (Array.isArray(value)) target[field] = value;
  }
  return out;
}

/**
 * The versions the SidecarSet's ControllerRevisions record, each as its hash without image → its
 * hash without image and resources: a pod that records one of them differs from the SidecarSet
 * only in images and resources when the second matches the SidecarSet's.
 */
export function resizableVersions(revisions: readonly StoredRevision[]): Map<string, string> {
  const versions = new Map<string, string>();
  for (const stored of revisions) {
    const spec = toSidecarSetRevision(stored)?.spec;
    if (spec === undefined) continue;
    versions.set(computeSidecarSetHashWithoutImage(spec), computeHashWithoutImageResources(spec));
  }
  return versions;
}
