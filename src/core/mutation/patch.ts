/**
 * The JSON patch (RFC 6902) that turns the original object into the mutated one. Objects are
 * compared key by key. An array that only gained items (a sidecar put in front of the
 * containers, a volume appended) gets one `add` per new item, at its final index, in ascending
 * order; any other change to an array replaces it whole. That keeps patches short and readable:
 * `add /spec/containers/0` rather than the whole container list again, or a dozen index-wise
 * edits after a sidecar is put in front.
 */
import { cloneJson, deepEqual, isPlainObject } from '../encoding/json.js';

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
  if (before === after) return;
  if (isPlainObject(before) && isPlainObject(after)) {
    for (const [key, value] of Object.entries(before)) {
      if (value !== undefined && own(after, key) === undefined) {
        ops.push({ op: 'remove', path: `${path}/${escape(key)}` });
      }
    }
    for (const [key, value] of Object.entries(after)) {
      if (value === undefined) continue;
      const child = `${path}/${escape(key)}`;
      const old = own(before, key);
      if (old === undefined) ops.push({ op: 'add', path: child, value: cloneJson(value) });
      else diff(old, value, child, ops);
    }
    return;
  }
  if (deepEqual(before, after)) return;
  const added =
    Array.isArray(before) && Array.isArray(after) ? insertions(before, after) : undefined;
  if (added === undefined) ops.push({ op: 'replace', path, value: cloneJson(after) });
  else for (const [at, item] of added) ops.push({ op: 'add', path: `${path}/${at}`, value: item });
}

/**
 * The items `after` gained, each with its index there, when `after` is `before` with items
 * inserted (every item of `before` still there, unchanged and in order); otherwise undefined.
 */
function insertions(
  before: readonly unknown[],
  after: readonly unknown[],
): [number, unknown][] | undefined {
  if (after.length <= before.length) return undefined;
  const added: [number, unknown][] = [];
  let kept = 0;
  for (const [at, item] of after.entries()) {
    if (kept < before.length && deepEqual(before[kept], item)) kept++;
    else added.push([at, cloneJson(item)]);
  }
  return kept === before.length ? added : undefined;
}

/** An own property (a key such as `toString` is not looked up in the prototype). */
function own(object: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** RFC 6901: `~` and `/` inside a key (most keys have neither: no replace for them). */
function escape(key: string): string {
  if (!key.includes('~') && !key.includes('/')) return key;
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
