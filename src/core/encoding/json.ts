/** JSON values as they arrive from YAML/JSON parsing and leave as patches. */
type JsonPrimitive = string | number | boolean | null;
type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue | undefined;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The JSON object in an annotation value; undefined when it is absent or is not one. */
export function readJsonObject(value: string | undefined): Record<string, unknown> | undefined {
  if (value === undefined || value === '') return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return isPlainObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A deep copy of a JSON-like value: arrays and plain objects are copied, primitives returned as
 * they are. It does what structuredClone does for such values (keys in the same order, keys whose
 * value is undefined kept) at a fraction of its cost, which matters on the per-request path. Any
 * other object (a Date, a Map) is handed to structuredClone, so the result is always the same.
 */
export function cloneJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = cloneJson<unknown>(value[i]);
    return out as T;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(source)) setOwn(out, key, cloneJson(source[key]));
  return out as T;
}

/**
 * `out[key] = value`, except that a key `__proto__` (JSON.parse makes it an own property) stays
 * an own property instead of setting the prototype, as with a spread or structuredClone.
 */
export function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key !== '__proto__') out[key] = value;
  else
    Object.defineProperty(out, key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
}

/** Structural equality of JSON-like values; object key order does not matter. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/** Compares strings by UTF-16 code units, like Go's sort.Strings on ASCII names. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A string as Go's encoding/json writes it: like JSON.stringify, but with <, > and & and the
 * line/paragraph separators escaped (Go's default HTML-safe escaping).
 */
export function goJsonString(value: string): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => {
    return '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0');
  });
}

/** Compact JSON with object keys sorted, as Go writes a map[string]interface{}. */
export function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (isPlainObject(value)) {
    const keys = Object.keys(value).sort(compareStrings);
    return `{${keys.map((k) => `${goJsonString(k)}:${sortedJson(value[k])}`).join(',')}}`;
  }
  return typeof value === 'string' ? goJsonString(value) : JSON.stringify(value);
}
