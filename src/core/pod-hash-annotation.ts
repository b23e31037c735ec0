/**
 * The pod annotations kruise.io/sidecarset-hash and kruise.io/sidecarset-hash-without-image:
 * a JSON object keyed by SidecarSet name (reference injection §3.11).
 */
import { SidecarSetError } from './errors.js';
import { compareStrings, goJsonString, isPlainObject } from './json.js';

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
 * is an empty map; anything else that is not the expected JSON is an error (OpenKruise rejects the
 * pod).
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
export function podSidecarSetHashesOf(parsed: unknown, annotationKey: string): PodSidecarSetHashes {
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

/**
 * goJsonString, without its JSON.stringify and replace for the usual plain value: printable ASCII
 * other than `"`, `\`, `<`, `>` and `&` needs no escape in either, so the value is simply quoted.
 */
export function quotedGoJson(value: string): string {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (
      c < 0x20 ||
      c > 0x7e ||
      c === 0x22 ||
      c === 0x5c ||
      c === 0x3c ||
      c === 0x3e ||
      c === 0x26
    ) {
      return goJsonString(value);
    }
  }
  return `"${value}"`;
}

/** Serializes as Go does: map keys sorted, struct fields in declaration order, no whitespace. */
export function formatPodSidecarSetHashes(hashes: PodSidecarSetHashes): string {
  const names = Object.keys(hashes).sort(compareStrings);
  const entries = names.map((name) => {
    const s = hashes[name];
    /* c8 ignore next -- keys come from the object itself */
    if (s === undefined) return '';
    const fields = [
      `"updateTimestamp":${s.updateTimestamp === null ? 'null' : quotedGoJson(s.updateTimestamp)}`,
      `"hash":${quotedGoJson(s.hash)}`,
      `"sidecarSetName":${quotedGoJson(s.sidecarSetName)}`,
      `"sidecarList":${s.sidecarList === null ? 'null' : `[${s.sidecarList.map(quotedGoJson).join(',')}]`}`,
    ];
    if (s.controllerRevision !== undefined && s.controllerRevision !== '') {
      fields.push(`"controllerRevision":${quotedGoJson(s.controllerRevision)}`);
    }
    return `${quotedGoJson(name)}:{${fields.join(',')}}`;
  });
  return `{${entries.join(',')}}`;
}

/** RFC 3339 in UTC with second precision, as metav1.Time marshals. */
export function formatTimestamp(now: Date): string {
  // toISOString always ends in ".sssZ": drop the milliseconds.
  return now.toISOString().slice(0, -5) + 'Z';
}
