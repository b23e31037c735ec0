/**
 * Field-level validation errors rendered exactly like Kubernetes' field.Error.Error() and the
 * aggregate of an ErrorList (k8s.io/apimachinery/pkg/util/validation/field/errors.go).
 */
import { goJsonString, isPlainObject } from '../encoding/json.js';

type FieldErrorType =
  'Required' | 'Invalid' | 'Duplicate' | 'NotSupported' | 'Forbidden' | 'TooLong' | 'NotFound';

export interface FieldError {
  type: FieldErrorType;
  /** Dotted path with indices and keys in brackets: `spec.containers[0].image`. */
  field: string;
  value?: unknown;
  detail: string;
}

const TYPE_TEXT: Record<FieldErrorType, string> = {
  Required: 'Required value',
  Invalid: 'Invalid value',
  Duplicate: 'Duplicate value',
  NotSupported: 'Unsupported value',
  Forbidden: 'Forbidden',
  TooLong: 'Too long',
  NotFound: 'Not found',
};

export function required(field: string, detail = ''): FieldError {
  return { type: 'Required', field, detail };
}

export function invalid(field: string, value: unknown, detail: string): FieldError {
  return { type: 'Invalid', field, value, detail };
}

export function duplicate(field: string, value: unknown): FieldError {
  return { type: 'Duplicate', field, value, detail: '' };
}

export function notFound(field: string, value: unknown): FieldError {
  return { type: 'NotFound', field, value, detail: '' };
}

export function notSupported(
  field: string,
  value: unknown,
  validValues: readonly string[],
): FieldError {
  const detail =
    validValues.length > 0 ? `supported values: ${validValues.map(goQuote).join(', ')}` : '';
  return { type: 'NotSupported', field, value, detail };
}

export function forbidden(field: string, detail: string): FieldError {
  return { type: 'Forbidden', field, detail };
}

export function tooLong(field: string, maxLength: number): FieldError {
  return {
    type: 'TooLong',
    field,
    detail: `may not be more than ${maxLength} ${maxLength === 1 ? 'byte' : 'bytes'}`,
  };
}

/** `parent.name`, or `name` when there is no parent. */
export function childPath(parent: string, name: string): string {
  return parent === '' ? name : `${parent}.${name}`;
}

/** `parent[i]`; also used for map keys (`metadata.annotations[key]`), as field.Path.Key does. */
export function indexPath(parent: string, index: number | string): string {
  return `${parent}[${String(index)}]`;
}

/** One error as `<field>: <Type>[: <value>][: <detail>]`. */
export function formatFieldError(e: FieldError): string {
  return `${e.field}: ${errorBody(e)}`;
}

function errorBody(e: FieldError): string {
  let s = TYPE_TEXT[e.type];
  switch (e.type) {
    case 'Required':
    case 'Forbidden':
    case 'TooLong':
      break;
    case 'Invalid':
    case 'Duplicate':
    case 'NotSupported':
    case 'NotFound':
      s += `: ${formatBadValue(e.value)}`;
      break;
  }
  return e.detail === '' ? s : `${s}: ${e.detail}`;
}

/**
 * The aggregate's rendering: one error alone, several as `[e1, e2]`, identical messages once
 * (utilerrors.aggregate.Error). An empty list renders as the empty string.
 */
export function formatFieldErrors(errors: readonly FieldError[]): string {
  const seen = new Set<string>();
  for (const e of errors) seen.add(formatFieldError(e));
  const msgs = [...seen];
  return msgs.length === 1 ? (msgs[0] ?? '') : msgs.length === 0 ? '' : `[${msgs.join(', ')}]`;
}

/** A bad value as Go prints it: strings %q, numbers and booleans %v, everything else as JSON. */
export function formatBadValue(value: unknown): string {
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return goJson(value);
}

/** Go's JSON encoding of a decoded JSON value (insertion order kept; HTML-safe escaping). */
function goJson(value: unknown): string {
  if (typeof value === 'string') return goJsonString(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map((v) => goJson(v)).join(',')}]`;
  if (isPlainObject(value)) {
    const parts = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${goJsonString(k)}:${goJson(v)}`);
    return `{${parts.join(',')}}`;
  }
  return 'null';
}

const GO_ESCAPES: Record<string, string> = {
  '\u0007': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\u000b': '\\v',
  '"': '\\"',
  '\\': '\\\\',
};

/** strconv.Quote for the characters that occur in practice (non-printables escaped). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const escaped = GO_ESCAPES[ch];
    const code = ch.codePointAt(0) ?? 0;
    if (escaped !== undefined) out += escaped;
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if ((code >= 0x80 && code < 0xa0) || code === 0x2028 || code === 0x2029 || code === 0xfeff)
      out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}
