/**
 * kruise.io/sidecarset-hash and kruise.io/sidecarset-hash-without-image, as OpenKruise's
 * pkg/control/sidecarcontrol/hash.go computes them: Go's json.Marshal of
 * {"containers": [...], "initContainers": [...]?}, SHA-256 as lowercase hex, then each hex digit
 * mapped through Kubernetes' SafeEncodeString alphabet.
 */
import { createHash } from 'node:crypto';

import {
  HASH_WITHOUT_IMAGE_RESOURCES,
  SIDECARSET_HASH,
  SIDECARSET_HASH_WITHOUT_IMAGE,
} from './annotations.js';
import { defaultSidecarSet } from './defaults.js';
import { SIDECAR_CONTAINER } from '../encoding/go-container-fields.js';
import { encodeGo, goMap, goSlice } from '../encoding/go-json.js';
import { isPlainObject } from '../encoding/json.js';
import type { SidecarSet, SidecarSetSpec } from './sidecarset-types.js';

const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';
const HASH_INPUT = goMap(goSlice(SIDECAR_CONTAINER));

/**
 * k8s.io/apimachinery rand.SafeEncodeString: each code point mapped to ALPHANUMS[cp % 27]. Go
 * sizes the result in UTF-8 bytes and fills it per code point, so non-ASCII input leaves NULs at
 * the end; hex input (the only real use) is unaffected.
 */
export function safeEncodeString(s: string): string {
  let out = '';
  let runes = 0;
  for (const ch of s) {
    out += ALPHANUMS[(ch.codePointAt(0) ?? 0) % ALPHANUMS.length] ?? '';
    runes++;
  }
  return out + '\0'.repeat(new TextEncoder().encode(s).length - runes);
}

function isNativeSidecar(container: unknown): boolean {
  return isPlainObject(container) && container['restartPolicy'] === 'Always';
}

/** What a hash leaves out of each container. */
type Blank = (container: Record<string, unknown>) => Record<string, unknown>;

const keepAll: Blank = (c) => c;
const withoutImage: Blank = (c) => ({ ...c, image: '' });
/** Hot-upgrade sidecars keep their resources: their two slots are never resized. */
const withoutImageResources: Blank = (c) => {
  const upgradeType = isPlainObject(c['upgradeStrategy']) && c['upgradeStrategy']['upgradeType'];
  return upgradeType === 'HotUpgrade' ? { ...c, image: '' } : { ...c, image: '', resources: {} };
};

function blanked(list: unknown, blank: Blank): unknown {
  if (!Array.isArray(list)) return list;
  return (list as unknown[]).map((c) => (isPlainObject(c) ? blank(c) : c));
}

/**
 * The exact bytes OpenKruise hashes. Init containers are included, all of them, only when at
 * least one is a native sidecar (restartPolicy Always).
 */
export function sidecarSetHashInput(spec: Readonly<SidecarSetSpec>, blank = keepAll): string {
  const input: Record<string, unknown> = { containers: blanked(spec.containers, blank) ?? null };
  const init: unknown = spec.initContainers;
  if (Array.isArray(init) && (init as unknown[]).some(isNativeSidecar)) {
    input['initContainers'] = blanked(init, blank);
  }
  return encodeGo(input, HASH_INPUT, 'spec');
}

/** kruise.io/sidecarset-hash of a defaulted spec. */
export function computeSidecarSetHash(spec: Readonly<SidecarSetSpec>): string {
  return safeEncodeString(sha256Hex(sidecarSetHashInput(spec)));
}

/** kruise.io/sidecarset-hash-without-image of a defaulted spec: the same, with every image blank. */
export function computeSidecarSetHashWithoutImage(spec: Readonly<SidecarSetSpec>): string {
  return safeEncodeString(sha256Hex(sidecarSetHashInput(spec, withoutImage)));
}

/**
 * Ours (sidecarset.dev/hash-without-image-resources): the same, with every image and every cold
 * sidecar's resources blank. Pods whose recorded value matches differ from the SidecarSet only in
 * images and resources, which change in place (docs/adr/0022-resources-and-native-sidecars-in-place.md).
 */
export function computeHashWithoutImageResources(spec: Readonly<SidecarSetSpec>): string {
  return safeEncodeString(sha256Hex(sidecarSetHashInput(spec, withoutImageResources)));
}

/** The SidecarSet's hash without images and resources, as withHashes left it or computed now. */
export function hashWithoutImageResources(ss: Readonly<SidecarSet>): string {
  return (
    ss.metadata.annotations?.[HASH_WITHOUT_IMAGE_RESOURCES] ??
    computeHashWithoutImageResources(defaultSidecarSet(ss).spec)
  );
}

/**
 * What OpenKruise's SidecarSet mutating webhook does on CREATE and UPDATE: apply the defaults, then
 * (re)compute both hash annotations, overwriting any present. Returns a new object.
 */
export function applySidecarSetAdmission(ss: Readonly<SidecarSet>): SidecarSet {
  const out = defaultSidecarSet(ss);
  if (!isPlainObject(out.metadata)) out.metadata = {};
  out.metadata.annotations = {
    ...out.metadata.annotations,
    [SIDECARSET_HASH]: computeSidecarSetHash(out.spec),
    [SIDECARSET_HASH_WITHOUT_IMAGE]: computeSidecarSetHashWithoutImage(out.spec),
  };
  return out;
}

/**
 * A SidecarSet as a cluster stores it: defaulted, with both hash annotations, kept when both are
 * present (computed by the webhook that admitted it) and computed otherwise; plus our
 * sidecarset.dev/hash-without-image-resources, always computed. For SidecarSets read
 * from files or a cache, not for admission (applySidecarSetAdmission recomputes them).
 */
export function withHashes(input: SidecarSet): SidecarSet {
  const ss = defaultSidecarSet(input);
  const annotations = { ...ss.metadata.annotations };
  if (
    annotations[SIDECARSET_HASH] === undefined ||
    annotations[SIDECARSET_HASH_WITHOUT_IMAGE] === undefined
  ) {
    annotations[SIDECARSET_HASH] = computeSidecarSetHash(ss.spec);
    annotations[SIDECARSET_HASH_WITHOUT_IMAGE] = computeSidecarSetHashWithoutImage(ss.spec);
  }
  // Ours, never stored: computed once here for the webhook and the controller.
  annotations[HASH_WITHOUT_IMAGE_RESOURCES] = computeHashWithoutImageResources(ss.spec);
  return { ...ss, metadata: { ...ss.metadata, annotations } };
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
