/**
 * The pod annotation sidecarset.dev/resize-refused: per SidecarSet, the version whose resize the
 * API server refused for good (the node cannot fit it), and why. Written by the controller in
 * place of the upgrade, so that the pod is not tried again for that version and the health gate
 * counts it as failed (docs/adr/0022-resources-and-native-sidecars-in-place.md):
 *
 *   {"agent":{"hash":"…","message":"node didn't have enough allocatable resources: cpu, …"}}
 */
import { isPlainObject, readJsonObject } from '../encoding/json.js';
import type { Pod } from '../api/k8s-types.js';

export const RESIZE_REFUSED = 'sidecarset.dev/resize-refused';

export interface ResizeRefusal {
  hash: string;
  message: string;
}

/** This SidecarSet's refusal for `hash`, if the pod records one. */
export function refusedResize(
  pod: Readonly<Pod>,
  sidecarSet: string,
  hash: string,
): ResizeRefusal | undefined {
  const entry = readJsonObject(pod.metadata.annotations?.[RESIZE_REFUSED])?.[sidecarSet];
  if (!isPlainObject(entry) || entry['hash'] !== hash) return undefined;
  const message = typeof entry['message'] === 'string' ? entry['message'] : '';
  return { hash, message };
}

/** The annotation's new value with this SidecarSet's refusal (other SidecarSets' kept). */
export function withRefusedResize(
  pod: Readonly<Pod>,
  sidecarSet: string,
  refusal: ResizeRefusal,
): string {
  const all = readJsonObject(pod.metadata.annotations?.[RESIZE_REFUSED]) ?? {};
  return JSON.stringify({ ...all, [sidecarSet]: refusal });
}
