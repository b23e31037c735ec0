/**
 * Reading the per-SidecarSet records a pod carries, as the upgrade path needs them: whether the
 * hash maps (pkg/control/sidecarcontrol/util.go) record a hash, answered fast for a fleet, and
 * kruise.io/sidecarset-inplace-update-state, read and written. Reads never throw: a value
 * that does not parse reads as "no record", as OpenKruise's readers do.
 */
import { compareStrings, isPlainObject, sortedJson } from '../json.js';
import { quotedGoJson, recordedHash } from '../pod-hash-annotation.js';
import { canonicalRecordTest } from './canonical-record.js';
import { ValueMemo } from './value-memo.js';

/**
 * Whether the pod records exactly `hash` for the SidecarSet. Without escapes in the text, a hash
 * that does not occur in it cannot be the decoded value, so most old pods need no JSON parsing.
 */
export function recordsHash(
  value: string | undefined,
  sidecarSetName: string,
  hash: string,
): boolean {
  if (cannotRecord(value, hash)) return false;
  return recordedHash(value, sidecarSetName) === hash;
}

function cannotRecord(value: string | undefined, hash: string): boolean {
  return hash !== '' && value !== undefined && !value.includes(hash) && !value.includes('\\');
}

/**
 * recordsHash for one SidecarSet name and hash, without parsing the value Go writes for one entry
 * and otherwise remembering its answer for each distinct value: the pods of a workload often carry
 * the very same annotation, and parsing it is the costly part.
 */
export function hashRecordMatcher(
  sidecarSetName: string,
  hash: string,
): (value: string | undefined) => boolean {
  const memo = new ValueMemo<boolean>();
  const canonical = canonicalRecordTest(sidecarSetName, hash);
  return (value) => {
    if (value === undefined) return recordsHash(value, sidecarSetName, hash);
    if (cannotRecord(value, hash)) return false;
    let answer = memo.get(value);
    if (answer === undefined) {
      answer = canonical?.(value) === true || recordedHash(value, sidecarSetName) === hash;
      memo.set(value, answer);
    }
    return answer;
  };
}

export interface InPlaceUpdateEntry {
  revision: string;
  updateTimestamp: string | null;
  /** Container name → the status imageID recorded just before its image was written. */
  lastContainerStatuses: Record<string, { imageID?: string }>;
  /** Fields OpenKruise's InPlaceUpdateState has beyond these three, kept as they were. */
  extra: Record<string, unknown>;
}

export type InPlaceUpdateStates = Record<string, InPlaceUpdateEntry>;

export type RecordedStatuses = InPlaceUpdateEntry['lastContainerStatuses'];

/**
 * One SidecarSet's lastContainerStatuses read from in-place-update-state values, remembered per
 * distinct value (pods upgraded in the same round carry the same one); undefined when the value
 * does not parse.
 */
export function recordedStatusesReader(
  sidecarSetName: string,
): (value: string) => Readonly<RecordedStatuses> | undefined {
  // null: the value does not parse.
  const memo = new ValueMemo<Readonly<RecordedStatuses> | null>();
  return (value) => {
    let answer = memo.get(value);
    if (answer === undefined) {
      const states = readInPlaceUpdateStates(value);
      answer = states === undefined ? null : (states[sidecarSetName]?.lastContainerStatuses ?? {});
      memo.set(value, answer);
    }
    return answer ?? undefined;
  };
}

/** undefined when the annotation is present but does not parse. */
export function readInPlaceUpdateStates(value: string): InPlaceUpdateStates | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (parsed === null) return {};
  if (!isPlainObject(parsed)) return undefined;
  const states: InPlaceUpdateStates = {};
  for (const [name, raw] of Object.entries(parsed)) {
    if (raw === null) continue;
    if (!isPlainObject(raw)) return undefined;
    const entry = readEntry(raw);
    if (entry === undefined) return undefined;
    states[name] = entry;
  }
  return states;
}

function readEntry(raw: Record<string, unknown>): InPlaceUpdateEntry | undefined {
  const { revision, updateTimestamp, lastContainerStatuses, ...extra } = raw;
  if (revision !== undefined && revision !== null && typeof revision !== 'string') return undefined;
  const statuses: Record<string, { imageID?: string }> = {};
  if (lastContainerStatuses !== undefined && lastContainerStatuses !== null) {
    if (!isPlainObject(lastContainerStatuses)) return undefined;
    for (const [name, status] of Object.entries(lastContainerStatuses)) {
      if (status === null) {
        statuses[name] = {};
        continue;
      }
      if (!isPlainObject(status)) return undefined;
      const imageID = status['imageID'];
      if (imageID !== undefined && imageID !== null && typeof imageID !== 'string') {
        return undefined;
      }
      statuses[name] = typeof imageID === 'string' && imageID !== '' ? { imageID } : {};
    }
  }
  return {
    revision: typeof revision === 'string' ? revision : '',
    updateTimestamp: typeof updateTimestamp === 'string' ? updateTimestamp : null,
    lastContainerStatuses: statuses,
    extra,
  };
}

/** Go's encoding of map[string]*InPlaceUpdateState: names sorted, struct fields in order. */
export function formatInPlaceUpdateStates(states: InPlaceUpdateStates): string {
  const names = Object.keys(states).sort(compareStrings);
  const parts: string[] = [];
  for (const name of names) {
    const entry = states[name];
    /* c8 ignore next -- keys come from the object itself */
    if (entry === undefined) continue;
    parts.push(`${quotedGoJson(name)}:${formatEntry(entry)}`);
  }
  return `{${parts.join(',')}}`;
}

function formatEntry(entry: InPlaceUpdateEntry): string {
  let statuses = '';
  for (const name of Object.keys(entry.lastContainerStatuses).sort(compareStrings)) {
    const imageID = entry.lastContainerStatuses[name]?.imageID;
    const body = imageID === undefined ? '{}' : `{"imageID":${quotedGoJson(imageID)}}`;
    statuses += `${statuses === '' ? '' : ','}${quotedGoJson(name)}:${body}`;
  }
  const time = entry.updateTimestamp === null ? 'null' : quotedGoJson(entry.updateTimestamp);
  let out = `{"revision":${quotedGoJson(entry.revision)},"updateTimestamp":${time},"lastContainerStatuses":{${statuses}}`;
  for (const key of Object.keys(entry.extra)) {
    out += `,${quotedGoJson(key)}:${sortedJson(entry.extra[key])}`;
  }
  return `${out}}`;
}
