/**
 * The JSON patch (RFC 6902) that turns the original object into the mutated one. Objects are
 * compared key by key; an array that changed is replaced whole. That keeps patches short and
 * readable (`replace /spec/containers` rather than a dozen index-wise edits after a sidecar is
 * put in front), and it never depends on the order in which ops are applied.
 */
import { cloneJson, deepEqual, isPlainObject } from './json.js';

/** The RFC 6902 operations this project writes. */
export type JsonPatchOperation =
  | { op: 'add'; path: string; value: unknown }
  | { op: 'replace'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'test'; path: string; value: unknown };

export function diffAsJsonPatch(original: unknown, mutated: unknown): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  diff(original, mutated, '', ops);
  return ops;
}

function diff(before: unknown, after: unknown, path: string, ops: JsonPatchOperation[]): void {
  if (isPlainObject(before) && isPlainObject(after)) {
    for (const key of Object.keys(before)) {
      if (before[key] !== undefined && after[key] === undefined) {
        ops.push({ op: 'remove', path: `${path}/${escape(key)}` });
      }
    }
    for (const [key, value] of Object.entries(after)) {
      if (value === undefined) continue;
      const child = `${path}/${escape(key)}`;
      if (before[key] === undefined) ops.push({ op: 'add', path: child, value: cloneJson(value) });
      else diff(before[key], value, child, ops);
    }
    return;
  }
  if (!deepEqual(before, after)) ops.push({ op: 'replace', path, value: cloneJson(after) });
}

/** RFC 6901: `~` and `/` inside a key (most keys have neither: no replace for them). */
function escape(key: string): string {
  if (!key.includes('~') && !key.includes('/')) return key;
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
