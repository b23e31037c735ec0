/** patchPodMetadata: annotations a SidecarSet writes into the pods it injects (OpenKruise pkg/webhook/pod/mutating/sidecarset.go). */
import { SidecarSetError } from '../errors.js';
import { deepEqual, isPlainObject, sortedJson } from '../json.js';
import type { SidecarSetPatchPodMetadata } from '../sidecarset-types.js';

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
 * RFC 7386 merge of `patch` into `existing`, written compactly with sorted keys as Go does. When
 * the result means the same as `existing`, `existing` is kept byte for byte, so that injecting an
 * injected pod again changes nothing (OpenKruise would re-serialize it once).
 */
function mergeJson(key: string, existing: string, patch: string): string {
  const target = parseJson(key, existing, 'the pod annotation');
  const merged = mergePatch(target, parseJson(key, patch, 'the patchPodMetadata value'));
  return deepEqual(merged, target) ? existing : sortedJson(merged);
}

function parseJson(key: string, text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new SidecarSetError(
      'SI_ERR_BAD_MERGE_PATCH',
      `annotation ${key}: ${what} is not valid JSON, so it cannot be merged (MergePatchJson)`,
    );
  }
}

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}
