/**
 * Serialises a plain JS object the way Go's encoding/json serialises the typed struct it would be
 * decoded into: the JS value is first read as Go would read it (unknown keys dropped, null and
 * absent read as the zero value), then written as Go writes that struct (declaration order,
 * omitempty, map keys sorted, no whitespace). A declarative type table drives it
 * (go-container-fields.ts); no type has hand-written code here.
 */
import { SidecarSetError } from '../errors.js';
import { goJsonString, isPlainObject } from './json.js';
import { canonicalQuantity } from './quantity.js';

type GoScalarKind = 'string' | 'bool' | 'int32' | 'int64' | 'quantity' | 'intOrString';

export type GoType =
  | { readonly kind: GoScalarKind }
  | { readonly kind: 'ptr' | 'slice' | 'map'; readonly elem: GoType }
  | GoStruct;

export interface GoStruct {
  readonly kind: 'struct';
  readonly name: string;
  readonly fields: readonly GoField[];
}

interface GoField {
  /** The json tag's name; empty for an embedded (inline) struct, whose fields are promoted. */
  readonly json: string;
  readonly omitempty: boolean;
  readonly type: GoType;
}

export const goString: GoType = { kind: 'string' };
export const goBool: GoType = { kind: 'bool' };
export const goInt32: GoType = { kind: 'int32' };
export const goInt64: GoType = { kind: 'int64' };
/** resource.Quantity: a struct with its own MarshalJSON, so omitempty never omits it. */
export const goQuantity: GoType = { kind: 'quantity' };
/** intstr.IntOrString: a struct, so omitempty never omits it; zero value is the number 0. */
export const goIntOrString: GoType = { kind: 'intOrString' };

export function goPtr(elem: GoType): GoType {
  return { kind: 'ptr', elem };
}

export function goSlice(elem: GoType): GoType {
  return { kind: 'slice', elem };
}

/** A map with string keys (Go writes them sorted). */
export function goMap(elem: GoType): GoType {
  return { kind: 'map', elem };
}

/**
 * A struct from its fields written like Go tags: `['image,omitempty', goString]`, and
 * `[',inline', EMBEDDED]` for an embedded struct.
 */
export function goStruct(name: string, fields: readonly (readonly [string, GoType])[]): GoStruct {
  return {
    kind: 'struct',
    name,
    fields: fields.map(([tag, type]) => {
      const [json = '', ...options] = tag.split(',');
      return { json, omitempty: options.includes('omitempty'), type };
    }),
  };
}

const INT_RANGE = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [-(2 ** 63), 2 ** 63 - 1],
} as const;

function bad(path: string, why: string): SidecarSetError {
  return new SidecarSetError('SI_ERR_BAD_INPUT', `${path || 'value'}: ${why}`, 400);
}

/** Go decodes a lone surrogate escape to U+FFFD, so its output never carries one. */
function quote(value: string): string {
  return goJsonString(
    value.replace(
      /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
      '\uFFFD',
    ),
  );
}

/** Go's sort.Strings order: UTF-8 bytes. */
function compareUtf8(a: string, b: string): number {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

function isNil(value: unknown): value is null | undefined {
  return value === undefined || value === null;
}

/** Go's isEmptyValue for the value decoded from `value`. */
function isEmpty(value: unknown, type: GoType): boolean {
  switch (type.kind) {
    case 'string':
      return isNil(value) || value === '';
    case 'bool':
      return isNil(value) || value === false;
    case 'int32':
    case 'int64':
      return isNil(value) || value === 0;
    case 'ptr':
      return isNil(value);
    case 'slice':
      return isNil(value) || (Array.isArray(value) && value.length === 0);
    case 'map':
      return isNil(value) || (isPlainObject(value) && Object.keys(value).length === 0);
    case 'quantity':
    case 'intOrString':
    case 'struct':
      return false;
  }
}

function encodeInt(value: unknown, kind: 'int32' | 'int64', path: string): string {
  if (isNil(value)) return '0';
  const [min, max] = INT_RANGE[kind];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw bad(path, `expected an ${kind}, got ${JSON.stringify(value)}`);
  }
  return String(value);
}

function encodeScalar(value: unknown, kind: GoScalarKind, path: string): string {
  switch (kind) {
    case 'string':
      if (isNil(value)) return '""';
      if (typeof value !== 'string')
        throw bad(path, `expected a string, got ${JSON.stringify(value)}`);
      return quote(value);
    case 'bool':
      if (isNil(value)) return 'false';
      if (typeof value !== 'boolean')
        throw bad(path, `expected a boolean, got ${JSON.stringify(value)}`);
      return String(value);
    case 'int32':
    case 'int64':
      return encodeInt(value, kind, path);
    case 'quantity':
      if (isNil(value)) return '"0"';
      if (typeof value !== 'string' && typeof value !== 'number') {
        throw bad(path, `expected a quantity, got ${JSON.stringify(value)}`);
      }
      return quote(canonicalQuantity(value));
    case 'intOrString':
      return typeof value === 'string' ? quote(value) : encodeInt(value, 'int32', path);
  }
}

function encodeFields(
  value: Record<string, unknown>,
  struct: GoStruct,
  path: string,
  out: string[],
): void {
  for (const field of struct.fields) {
    if (field.json === '' && field.type.kind === 'struct') {
      encodeFields(value, field.type, path, out);
      continue;
    }
    const raw = value[field.json];
    if (field.omitempty && isEmpty(raw, field.type)) continue;
    out.push(`${quote(field.json)}:${encodeGo(raw, field.type, `${path}.${field.json}`)}`);
  }
}

/**
 * The bytes Go's json.Marshal writes for `value` decoded into `type`. Throws SI_ERR_BAD_INPUT
 * where Go's json.Unmarshal would fail (a value of the wrong JSON type, a fractional integer).
 */
export function encodeGo(value: unknown, type: GoType, path = ''): string {
  switch (type.kind) {
    case 'ptr':
      return isNil(value) ? 'null' : encodeGo(value, type.elem, path);
    case 'slice': {
      if (isNil(value)) return 'null';
      if (!Array.isArray(value)) throw bad(path, 'expected an array');
      const items: unknown[] = value;
      return `[${items.map((item, i) => encodeGo(item, type.elem, `${path}[${i}]`)).join(',')}]`;
    }
    case 'map': {
      if (isNil(value)) return 'null';
      if (!isPlainObject(value)) throw bad(path, 'expected an object');
      const keys = Object.keys(value)
        .filter((k) => value[k] !== undefined)
        .sort(compareUtf8);
      return `{${keys.map((k) => `${quote(k)}:${encodeGo(value[k], type.elem, `${path}.${k}`)}`).join(',')}}`;
    }
    case 'struct': {
      if (isNil(value)) return encodeGo({}, type, path);
      if (!isPlainObject(value)) throw bad(path, `expected an object for ${type.name}`);
      const out: string[] = [];
      encodeFields(value, type, path, out);
      return `{${out.join(',')}}`;
    }
    case 'string':
    case 'bool':
    case 'int32':
    case 'int64':
    case 'quantity':
    case 'intOrString':
      return encodeScalar(value, type.kind, path);
  }
}
