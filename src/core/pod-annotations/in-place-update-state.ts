/**
 * The pod annotation kruise.io/sidecarset-inplace-update-state (OpenKruise's
 * pkg/control/sidecarcontrol/util.go): per SidecarSet, the revision and time of its first
 * in-place update and each upgraded container's status imageID just before its image was written.
 * Reads never throw: a value that does not parse reads as "no record", as OpenKruise's readers do.
 */
import { compareStrings, goJsonString, isPlainObject, sortedJson } from '../encoding/json.js';

interface InPlaceUpdateEntry {
  revision: string;
  updateTimestamp: string | null;
  /** Container name → the status imageID recorded just before its image was written. */
  lastContainerStatuses: Record<string, { imageID?: string }>;
  /** Fields OpenKruise's InPlaceUpdateState has beyond these three, kept as they were. */
  extra: Record<string, unknown>;
}

export type InPlaceUpdateStates = Record<string, InPlaceUpdateEntry>;

export type RecordedStatuses = InPlaceUpdateEntry['lastContainerStatuses'];

/** This SidecarSet's lastContainerStatuses; undefined when the value does not parse. */
export function recordedStatuses(
  value: string,
  sidecarSetName: string,
): Readonly<RecordedStatuses> | undefined {
  const states = readInPlaceUpdateStates(value);
  return states === undefined ? undefined : (states[sidecarSetName]?.lastContainerStatuses ?? {});
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
    parts.push(`${goJsonString(name)}:${formatEntry(entry)}`);
  }
  return `{${parts.join(',')}}`;
}

function formatEntry(entry: InPlaceUpdateEntry): string {
  let statuses = '';
  for (const name of Object.keys(entry.lastContainerStatuses).sort(compareStrings)) {
    const imageID = entry.lastContainerStatuses[name]?.imageID;
    const body = imageID === undefined ? '{}' : `{"imageID":${goJsonString(imageID)}}`;
    statuses += `${statuses === '' ? '' : ','}${goJsonString(name)}:${body}`;
  }
  const time = entry.updateTimestamp === null ? 'null' : goJsonString(entry.updateTimestamp);
  let out = `{"revision":${goJsonString(entry.revision)},"updateTimestamp":${time},"lastContainerStatuses":{${statuses}}`;
  for (const key of Object.keys(entry.extra)) {
    out += `,${goJsonString(key)}:${sortedJson(entry.extra[key])}`;
  }
  return `${out}}`;
}

/**
 * UpdatePodAnnotationsInUpgrade: the annotation's new value (`value` its current one) with this
 * SidecarSet's entry updated. An existing entry keeps its revision and timestamp (they record the
 * first in-place update); each upgraded container's status imageID is recorded raw.
 */
export function withInPlaceUpdate(
  value: string | undefined,
  sidecarSet: { name: string; hash: string },
  imageIDs: ReadonlyMap<string, string>,
  timestamp: string,
): string {
  const states = (value === undefined || value === '' ? {} : readInPlaceUpdateStates(value)) ?? {};
  const existing = states[sidecarSet.name];
  const entry: InPlaceUpdateEntry = {
    revision: existing?.revision ?? sidecarSet.hash,
    updateTimestamp: existing === undefined ? timestamp : existing.updateTimestamp,
    lastContainerStatuses: { ...existing?.lastContainerStatuses },
    extra: existing?.extra ?? {},
  };
  for (const [container, imageID] of imageIDs) {
    entry.lastContainerStatuses[container] = imageID === '' ? {} : { imageID };
  }
  return formatInPlaceUpdateStates({ ...states, [sidecarSet.name]: entry });
}
