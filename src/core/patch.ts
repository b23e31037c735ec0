/** The JSON patch (RFC 6902) that turns the original object into the mutated one. */
import jsonPatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';

export type { Operation as JsonPatchOperation } from 'fast-json-patch';

export function diffAsJsonPatch(original: unknown, mutated: unknown): Operation[] {
  return jsonPatch.compare(original as object, mutated as object);
}
