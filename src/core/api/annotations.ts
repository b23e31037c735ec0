/** Every annotation and label key this project reads or writes, with OpenKruise's spelling. */
export const SIDECARSET_HASH = 'kruise.io/sidecarset-hash';
export const SIDECARSET_HASH_WITHOUT_IMAGE = 'kruise.io/sidecarset-hash-without-image';
/**
 * Ours, on SidecarSets and (like kruise.io/sidecarset-hash-without-image) on pods: the hash
 * without images and cold sidecars' resources (core/api/hash.ts).
 */
export const HASH_WITHOUT_IMAGE_RESOURCES = 'sidecarset.dev/hash-without-image-resources';
export const SIDECARSET_INJECTED_LIST = 'kruise.io/sidecarset-injected-list';
export const SIDECARSET_WORKING_HOTUPGRADE_CONTAINER =
  'kruise.io/sidecarset-working-hotupgrade-container';
export const SIDECARSET_INPLACE_UPDATE_STATE = 'kruise.io/sidecarset-inplace-update-state';

/**
 * The SidecarSet version a hot-upgrade slot runs ("0" when empty), exposed to it as
 * SIDECARSET_VERSION (GetPodSidecarSetVersionAnnotation in util_hotupgrade.go).
 */
export function versionAnnotation(slot: string): string {
  return `${VERSION_PREFIX}${slot}`;
}

/** The version the other slot runs, exposed as SIDECARSET_VERSION_ALT. */
export function versionAltAnnotation(slot: string): string {
  return `${VERSION_ALT_PREFIX}${slot}`;
}

const VERSION_PREFIX = 'version.sidecarset.kruise.io/';
const VERSION_ALT_PREFIX = 'versionalt.sidecarset.kruise.io/';

/**
 * Pod annotation keys that hold SidecarSet bookkeeping (the hashes, the injected list, the
 * in-place update state, the hot-upgrade slots, our own sidecarset.dev/ keys): a SidecarSet's
 * patchPodMetadata may never write them, or one SidecarSet could forge another's state and pin its
 * pods.
 */
const RESERVED_POD_ANNOTATION_PREFIXES = [
  'kruise.io/sidecarset-',
  'sidecarset.dev/',
  VERSION_PREFIX,
  VERSION_ALT_PREFIX,
] as const;

export function isReservedPodAnnotation(key: string): boolean {
  return RESERVED_POD_ANNOTATION_PREFIXES.some((prefix) => key.startsWith(prefix));
}

/** Whether `key` is a hot-upgrade slot's version or versionalt annotation. */
export function isSlotVersionAnnotation(key: string): boolean {
  return key.startsWith(VERSION_PREFIX) || key.startsWith(VERSION_ALT_PREFIX);
}

export const SIDECARSET_CUSTOM_VERSION_LABEL = 'apps.kruise.io/sidecarset-custom-version';
export const SIDECARSET_NAME_LABEL = 'kruise.io/sidecarset-name';
export const SIDECARSET_CANARY = 'apps.kruise.io/sidecarset-canary';
export const SIDECARSET_BASE = 'apps.kruise.io/sidecarset-base';
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';
/** Env var every injected container carries, so that it is never mistaken for an app container. */
export const IS_INJECTED_ENV = 'IS_INJECTED';
/**
 * Ours, not OpenKruise's: on a SidecarSet stored as v1beta1 that was written as v1alpha1 with
 * spec.namespace, the namespace, so that reading it as v1alpha1 gives spec.namespace back
 * (src/core/conversion/sidecarset-conversion.ts, docs/adr/0015-sidecarset-v1beta1.md).
 */
/**
 * Ours, on a SidecarSet: "true" evicts pods whose sidecars cannot change in place, so that their
 * controller recreates them (docs/adr/0024-recreation-through-evictions.md).
 */
export const RECREATE_PODS = 'sidecarset.dev/recreate-pods';
export const SIDECARSET_V1ALPHA1_NAMESPACE = 'apps.kruise.io/sidecarset-v1alpha1-namespace';
