/** The bookkeeping annotations injection writes into the pod (OpenKruise pkg/webhook/pod/mutating/sidecarset.go). */
import {
  SIDECARSET_HASH,
  SIDECARSET_HASH_WITHOUT_IMAGE,
  SIDECARSET_INJECTED_LIST,
} from '../api/annotations.js';
import { injectedListWith } from '../pod-annotations/injected-list.js';
import { deepEqual } from '../encoding/json.js';
import type {
  PodSidecarSetHashes,
  SidecarSetUpgradeSpec,
} from '../pod-annotations/pod-hash-annotation.js';
import {
  formatPodSidecarSetHashes,
  formatTimestamp,
  parsePodSidecarSetHashes,
} from '../pod-annotations/pod-hash-annotation.js';

export interface InjectedSetRecord {
  name: string;
  hash: string;
  hashWithoutImage: string;
  sidecarList: string[];
  controllerRevision: string;
}

/** Writes the hash maps and the injected list into `annotations` (mutated). */
export function recordInjection(
  annotations: Record<string, string>,
  records: readonly InjectedSetRecord[],
  now: Date,
): void {
  const timestamp = timestampOf(now);
  updateHashes(annotations, SIDECARSET_HASH, records, (r) => ({
    updateTimestamp: timestamp,
    hash: r.hash,
    sidecarSetName: r.name,
    sidecarList: r.sidecarList,
    ...(r.controllerRevision === '' ? {} : { controllerRevision: r.controllerRevision }),
  }));
  updateHashes(annotations, SIDECARSET_HASH_WITHOUT_IMAGE, records, (r) => ({
    updateTimestamp: timestamp,
    hash: r.hashWithoutImage,
    sidecarSetName: r.name,
    sidecarList: r.sidecarList,
  }));
  annotations[SIDECARSET_INJECTED_LIST] = injectedListWith(
    annotations,
    records.map((r) => r.name),
  );
}

/** The last timestamp formatted: pods admitted within the same second share it. */
let lastSecond = NaN;
let lastTimestamp = '';

/** formatTimestamp, remembered for its second (toISOString costs about a µs per call). */
export function timestampOf(now: Date): string {
  const second = Math.floor(now.getTime() / 1000);
  if (second !== lastSecond) {
    lastTimestamp = formatTimestamp(now);
    lastSecond = second;
  }
  return lastTimestamp;
}

function updateHashes(
  annotations: Record<string, string>,
  key: string,
  records: readonly InjectedSetRecord[],
  entryFor: (r: InjectedSetRecord) => SidecarSetUpgradeSpec,
): void {
  const hashes: PodSidecarSetHashes = parsePodSidecarSetHashes(annotations[key], key);
  for (const r of records) {
    const entry = entryFor(r);
    const existing = hashes[r.name];
    // An entry that already says the same keeps its timestamp: re-injection must be a no-op.
    if (existing !== undefined && sameExceptTimestamp(existing, entry)) continue;
    hashes[r.name] = entry;
  }
  annotations[key] = formatPodSidecarSetHashes(hashes);
}

function sameExceptTimestamp(a: SidecarSetUpgradeSpec, b: SidecarSetUpgradeSpec): boolean {
  return deepEqual({ ...a, updateTimestamp: null }, { ...b, updateTimestamp: null });
}
