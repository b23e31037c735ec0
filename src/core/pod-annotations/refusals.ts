/**
 * What the API server refused the controller, recorded on the pod so that the decision outlives
 * the process (a new leader reads the same). Both annotations hold, per SidecarSet, the version
 * refused and why:
 *
 *   {"agent":{"hash":"…","message":"node didn't have enough allocatable resources: cpu, …"}}
 *
 * - sidecarset.dev/resize-refused: a resize refused for good (the node cannot fit it). The pod is
 *   not tried again for that version and the health gate counts it as failed
 *   (docs/adr/0022-resources-and-native-sidecars-in-place.md).
 * - sidecarset.dev/eviction-refused: the last eviction refused (a PodDisruptionBudget allows no
 *   disruption now). Shown by `plan` and `rollout status`; the eviction is tried again
 *   (docs/adr/0024-recreation-through-evictions.md).
 */
import { isPlainObject, readJsonObject } from '../encoding/json.js';
import type { Pod } from '../api/k8s-types.js';

export const RESIZE_REFUSED = 'sidecarset.dev/resize-refused';
export const EVICTION_REFUSED = 'sidecarset.dev/eviction-refused';
export type RefusalAnnotation = typeof RESIZE_REFUSED | typeof EVICTION_REFUSED;

export interface Refusal {
  hash: string;
  message: string;
}

/** This SidecarSet's refusal for `hash`, if the pod records one under `key`. */
export function recordedRefusal(
  pod: Readonly<Pod>,
  key: RefusalAnnotation,
  sidecarSet: string,
  hash: string,
): Refusal | undefined {
  const entry = readJsonObject(pod.metadata.annotations?.[key])?.[sidecarSet];
  if (!isPlainObject(entry) || entry['hash'] !== hash) return undefined;
  const message = typeof entry['message'] === 'string' ? entry['message'] : '';
  return { hash, message };
}

/** The annotation's new value with this SidecarSet's refusal (other SidecarSets' kept). */
export function withRefusal(
  pod: Readonly<Pod>,
  key: RefusalAnnotation,
  sidecarSet: string,
  refusal: Refusal,
): string {
  const all = readJsonObject(pod.metadata.annotations?.[key]) ?? {};
  return JSON.stringify({ ...all, [sidecarSet]: refusal });
}
