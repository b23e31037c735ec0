/**
 * The codec of the pod annotations kruise.io/sidecarset-hash and
 * kruise.io/sidecarset-hash-without-image, a JSON object keyed by SidecarSet name
 * (SidecarSetUpgradeSpec in OpenKruise's pkg/control/sidecarcontrol/util.go): read tolerant
 * (readHashes, recordedHash: a value that does not parse is no record, as the controller reads
 * it), read strict (parsePodSidecarSetHashes: it is an error, as injection reads it), and write
 * (formatPodSidecarSetHashes).
 */
import { SIDECARSET_HASH, SIDECARSET_HASH_WITHOUT_IMAGE } from '../api/annotations.js';
import { SidecarSetError } from '../errors.js';
import { compareStrings, goJsonString, isPlainObject } from '../encoding/json.js';

export interface SidecarSetUpgradeSpec {
  /** RFC 3339, second precision, UTC; null for entries converted from the legacy format. */
  updateTimestamp: string | null;
  hash: string;
  sidecarSetName: string;
  /** Null for entries converted from the legacy format. */
  sidecarList: string[] | null;
  controllerRevision?: string;
}

export type PodSidecarSetHashes = Record<string, SidecarSetUpgradeSpec>;

/**
 * Parses the annotation value. Accepts the legacy `{"name":"hash"}` form. An absent or empty value
 * is an empty map; anything else that is not the expected JSON is an error. (OpenKruise then
 * refuses the pod; the webhook injects it anyway and rewrites the annotation, see
 * docs/adr/0008-unreadable-hash-annotation.md, while `sidecarset inject` reports the error.)
 */
export function parsePodSidecarSetHashes(
  value: string | undefined,
  annotationKey: string,
): PodSidecarSetHashes {
  if (value === undefined || value === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw badHash(annotationKey, 'it is not valid JSON');
  }
  return podSidecarSetHashesOf(parsed, annotationKey);
}

/** parsePodSidecarSetHashes for a value already parsed as JSON (to parse it only once). */
function podSidecarSetHashesOf(parsed: unknown, annotationKey: string): PodSidecarSetHashes {
  if (!isPlainObject(parsed)) throw badHash(annotationKey, 'it is not a JSON object');
  const out: PodSidecarSetHashes = {};
  for (const [name, entry] of Object.entries(parsed)) {
    if (typeof entry === 'string') {
      out[name] = { updateTimestamp: null, hash: entry, sidecarSetName: name, sidecarList: null };
      continue;
    }
    if (!isPlainObject(entry)) throw badHash(annotationKey, `entry ${name} is not an object`);
    out[name] = readUpgradeSpec(entry);
  }
  return out;
}

type HashForm = 'object' | 'legacy' | 'invalid' | 'absent';

export interface ReadHashes {
  form: HashForm;
  hashes: PodSidecarSetHashes;
}

type HashJson =
  { form: 'absent' | 'invalid' } | { form: 'object' | 'legacy'; map: Record<string, unknown> };

/**
 * Go first decodes the object form, then falls back to `{"name":"hash"}`; a map that mixes both
 * shapes fails both decodings and reads as empty.
 */
function parseHashJson(value: string | undefined): HashJson {
  if (value === undefined || value === '') return { form: 'absent' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return { form: 'invalid' };
  }
  if (!isPlainObject(parsed)) return { form: 'invalid' };
  let objects = 0;
  let strings = 0;
  for (const k in parsed) {
    const v = parsed[k];
    if (isPlainObject(v)) objects++;
    else if (typeof v === 'string') strings++;
    else return { form: 'invalid' };
  }
  if (objects > 0 && strings > 0) return { form: 'invalid' };
  return { form: strings > 0 ? 'legacy' : 'object', map: parsed };
}

export function readHashes(value: string | undefined): ReadHashes {
  const json = parseHashJson(value);
  if (!('map' in json)) return { form: json.form, hashes: {} };
  return { form: json.form, hashes: podSidecarSetHashesOf(json.map, '') };
}

/** The hash a pod records for one SidecarSet, or "" (GetPodSidecarSetUpgradeSpecInAnnotations). */
export function recordedHash(value: string | undefined, sidecarSetName: string): string {
  const json = parseHashJson(value);
  if (!('map' in json)) return '';
  const entry = json.map[sidecarSetName];
  if (typeof entry === 'string') return entry;
  if (!isPlainObject(entry)) return '';
  const hash = entry['hash'];
  return typeof hash === 'string' ? hash : '';
}

function readUpgradeSpec(entry: Record<string, unknown>): SidecarSetUpgradeSpec {
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  const list = entry['sidecarList'];
  const spec: SidecarSetUpgradeSpec = {
    updateTimestamp: typeof entry['updateTimestamp'] === 'string' ? entry['updateTimestamp'] : null,
    hash: str(entry['hash']),
    sidecarSetName: str(entry['sidecarSetName']),
    sidecarList: Array.isArray(list)
      ? list.filter((x): x is string => typeof x === 'string')
      : null,
  };
  const revision = str(entry['controllerRevision']);
  if (revision !== '') spec.controllerRevision = revision;
  return spec;
}

function badHash(key: string, why: string): SidecarSetError {
  return new SidecarSetError(
    'SI_ERR_BAD_HASH_ANNOTATION',
    `pod annotation ${key} cannot be parsed: ${why}`,
  );
}

/** Serializes as Go does: map keys sorted, struct fields in declaration order, no whitespace. */
export function formatPodSidecarSetHashes(hashes: PodSidecarSetHashes): string {
  const names = Object.keys(hashes).sort(compareStrings);
  const entries = names.map((name) => {
    const s = hashes[name];
    /* c8 ignore next -- keys come from the object itself */
    if (s === undefined) return '';
    const fields = [
      `"updateTimestamp":${s.updateTimestamp === null ? 'null' : goJsonString(s.updateTimestamp)}`,
      `"hash":${goJsonString(s.hash)}`,
      `"sidecarSetName":${goJsonString(s.sidecarSetName)}`,
      `"sidecarList":${s.sidecarList === null ? 'null' : `[${s.sidecarList.map(goJsonString).join(',')}]`}`,
    ];
    if (s.controllerRevision !== undefined && s.controllerRevision !== '') {
      fields.push(`"controllerRevision":${goJsonString(s.controllerRevision)}`);
    }
    return `${goJsonString(name)}:{${fields.join(',')}}`;
  });
  return `{${entries.join(',')}}`;
}

/** The hash annotation's new value and, when a legacy one is converted, the without-image one. */
export interface WrittenHashes {
  hash: string;
  withoutImage?: string;
}

/** This SidecarSet's new entries: always the hash, the without-image hash when it changed. */
export interface NewEntries {
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
export function withHashEntries(
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

/** RFC 3339 in UTC with second precision, as metav1.Time marshals. */
export function formatTimestamp(now: Date): string {
  // toISOString always ends in ".sssZ": drop the milliseconds.
  return now.toISOString().slice(0, -5) + 'Z';
}
