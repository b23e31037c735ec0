/** patchPodMetadata: annotations a SidecarSet writes into the pods it injects (OpenKruise pkg/webhook/pod/mutating/sidecarset.go). */
import { SidecarSetError } from '../errors.js';
import { deepEqual } from '../encoding/json.js';
import type { SidecarSetPatchPodMetadata } from '../api/sidecarset-types.js';
import { jsonMergePatch, MergePatchError } from './json-merge-patch.js';

/** Applies the entries in order to `annotations` (mutated). */
export function applyPatchPodMetadata(
  annotations: Record<string, string>,
  entries: readonly SidecarSetPatchPodMetadata[],
): void {
  for (const entry of entries) {
    for (const [key, value] of Object.entries(entry.annotations ?? {})) {
      const existing = annotations[key];
      switch (entry.patchPolicy) {
        case 'Overwrite':
          annotations[key] = value;
          break;
        case 'MergePatchJson':
          annotations[key] =
            existing === undefined || existing === '' ? value : mergeJson(key, existing, value);
          break;
        case 'Retain':
        case undefined:
        default:
          if (existing === undefined) annotations[key] = value;
      }
    }
  }
}

/**
 * `patch` merged into `existing` as OpenKruise writes it (json-merge-patch.ts). When the result
 * means the same as `existing`, `existing` is kept byte for byte, so that injecting an injected
 * pod again changes nothing (OpenKruise would re-serialize it once).
 */
function mergeJson(key: string, existing: string, patch: string): string {
  let merged: string;
  try {
    merged = jsonMergePatch(existing, patch);
  } catch (err) {
    if (!(err instanceof MergePatchError)) throw err;
    throw new SidecarSetError(
      'SI_ERR_BAD_MERGE_PATCH',
      `annotation ${key}: cannot merge the patchPodMetadata value into the pod's (MergePatchJson): ${err.message}`,
    );
  }
  return deepEqual(JSON.parse(merged), JSON.parse(existing)) ? existing : merged;
}
