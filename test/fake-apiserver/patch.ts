import jsonPatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import { ApiError, badRequest } from './errors.js';
import { clone, isJsonObject } from './json.js';
import type { JsonObject, JsonValue } from './json.js';
import { PATCH_TYPES } from './types.js';
import type { PatchType } from './types.js';

export function isPatchType(contentType: string): contentType is PatchType {
  return (Object.values(PATCH_TYPES) as string[]).includes(contentType);
}

function isOperation(value: JsonValue): boolean {
  return (
    isJsonObject(value) && typeof value['op'] === 'string' && typeof value['path'] === 'string'
  );
}

/** RFC 6902. A failed `test` or an unresolvable path is 422, as in the API server's patch handler. */
export function applyJsonPatch(doc: JsonObject, patch: JsonValue): JsonObject {
  if (!Array.isArray(patch) || !patch.every(isOperation)) {
    throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  }
  try {
    const result = jsonPatch.applyPatch(clone(doc), patch as unknown as Operation[], true, true);
    const out: unknown = result.newDocument;
    if (!isJsonObject(out)) throw badRequest('the patch replaced the whole object');
    return out;
  } catch (err: unknown) {
    if (err instanceof ApiError) throw err;
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new ApiError(422, 'Invalid', message ?? 'json patch failed');
  }
}

/** RFC 7386: objects merge recursively, null deletes, anything else (arrays too) replaces. */
export function applyMergePatch(target: JsonValue | undefined, patch: JsonValue): JsonValue {
  if (!isJsonObject(patch)) return clone(patch);
  const result: JsonObject = isJsonObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

/**
 * Lists that strategic merge patch merges by key instead of replacing, by field name. The real
 * patch strategy comes from the Go struct tags of each type; for the built-in objects the fake
 * serves (pods, namespaces, events, leases) matching on the field name gives the same result.
 */
const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  env: 'name',
  imagePullSecrets: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  ports: 'containerPort',
  conditions: 'type',
  ownerReferences: 'uid',
  hostAliases: 'ip',
};

function isDirective(key: string): boolean {
  return key.startsWith('$setElementOrder/') || key === '$retainKeys' || key === '$patch';
}

function mergeList(target: JsonValue | undefined, patch: JsonValue[], key: string): JsonValue[] {
  const result: JsonValue[] = Array.isArray(target) ? [...target] : [];
  for (const item of patch) {
    if (!isJsonObject(item)) return clone(patch);
    const index = result.findIndex((t) => isJsonObject(t) && t[key] === item[key]);
    if (item['$patch'] === 'delete') {
      if (index >= 0) result.splice(index, 1);
    } else if (index >= 0) {
      result[index] = applyStrategicMergePatch(result[index], item);
    } else {
      result.push(applyStrategicMergePatch(undefined, item));
    }
  }
  return result;
}

/**
 * A subset of strategic merge patch: merge patch, except that the lists in MERGE_KEYS merge item
 * by item on their key (`$patch: delete` removes an item) and `$patch: replace` replaces an
 * object. Other directives (`$setElementOrder`, `$retainKeys`, `$deleteFromPrimitiveList`) are
 * ignored; primitive lists are replaced.
 */
export function applyStrategicMergePatch(
  target: JsonValue | undefined,
  patch: JsonValue,
): JsonValue {
  if (!isJsonObject(patch)) return clone(patch);
  if (patch['$patch'] === 'replace') {
    const replaced = clone(patch);
    delete replaced['$patch'];
    return replaced;
  }
  const result: JsonObject = isJsonObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (isDirective(key)) continue;
    const mergeKey = MERGE_KEYS[key];
    if (value === null) delete result[key];
    else if (Array.isArray(value) && mergeKey !== undefined) {
      result[key] = mergeList(result[key], value, mergeKey);
    } else result[key] = applyStrategicMergePatch(result[key], value);
  }
  return result;
}

export function applyPatch(type: PatchType, doc: JsonObject, patch: JsonValue): JsonObject {
  let result: JsonValue;
  switch (type) {
    case PATCH_TYPES.json:
      return applyJsonPatch(doc, patch);
    case PATCH_TYPES.merge:
      result = applyMergePatch(doc, patch);
      break;
    case PATCH_TYPES.strategic:
      result = applyStrategicMergePatch(doc, patch);
      break;
  }
  if (!isJsonObject(result)) throw badRequest('the patch must be a JSON object');
  return result;
}
