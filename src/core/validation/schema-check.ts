/** Checks a SidecarSet document against SIDECARSET_SCHEMA with ajv, compiled on first use. */
import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { FieldError } from './field-error.js';
import { forbidden, invalid, notSupported, required } from './field-error.js';
import { isPlainObject } from '../json.js';
import { SIDECARSET_SCHEMA } from './sidecarset-schema.js';

let compiled: ValidateFunction | undefined;

function validator(): ValidateFunction {
  if (compiled === undefined) {
    // The schema is ours and checked against the meta-schema by test/core/validation/schema.test.ts;
    // checking it again at every start costs each CLI run a tenth of a second.
    const ajv = new Ajv({ allErrors: true, validateSchema: false });
    ajv.addVocabulary(['x-kubernetes-int-or-string', 'x-kubernetes-preserve-unknown-fields']);
    compiled = ajv.compile(SIDECARSET_SCHEMA);
  }
  return compiled;
}

export function validateSidecarSetSchema(value: unknown): FieldError[] {
  const validate = validator();
  if (validate(value)) return [];
  return mapAjvErrors(validate.errors ?? [], value);
}

function segmentsOf(instancePath: string): string[] {
  return instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function toPath(segments: readonly string[]): string {
  let path = '';
  for (const seg of segments) {
    if (/^\d+$/.test(seg) || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(seg)) path += `[${seg}]`;
    else path += path === '' ? seg : `.${seg}`;
  }
  return path;
}

function valueAt(doc: unknown, segments: readonly string[]): unknown {
  let cur = doc;
  for (const seg of segments) {
    if (Array.isArray(cur)) cur = cur[Number(seg)];
    else if (isPlainObject(cur)) cur = cur[seg];
    else return undefined;
  }
  return cur;
}

function join(path: string, child: string): string {
  return path === '' ? child : `${path}.${child}`;
}

/** One field error per failing location; int-or-string's anyOf noise collapses to one. */
export function mapAjvErrors(errors: readonly ErrorObject[], doc: unknown): FieldError[] {
  const out: FieldError[] = [];
  const typeSeen = new Set<string>();
  for (const e of errors) {
    const segments = segmentsOf(e.instancePath);
    const path = toPath(segments);
    const value = valueAt(doc, segments);
    const params = e.params as Record<string, unknown>;
    switch (e.keyword) {
      case 'required':
        out.push(required(join(path, String(params['missingProperty'])), ''));
        break;
      case 'additionalProperties':
        out.push(forbidden(join(path, String(params['additionalProperty'])), 'unknown field'));
        break;
      case 'enum': {
        const allowed = Array.isArray(params['allowedValues']) ? params['allowedValues'] : [];
        out.push(notSupported(path, value, allowed.map(String)));
        break;
      }
      case 'const':
        out.push(notSupported(path, value, [String(params['allowedValue'])]));
        break;
      case 'minLength':
        out.push(required(path, ''));
        break;
      case 'type':
      case 'anyOf': {
        if (typeSeen.has(path)) break;
        typeSeen.add(path);
        const anyOf = errors.some(
          (x) => x.instancePath === e.instancePath && x.keyword === 'anyOf',
        );
        const detail = anyOf
          ? 'must be an integer or a string'
          : `must be of type ${String(params['type'])}`;
        out.push(invalid(path, value, detail));
        break;
      }
      default:
        out.push(invalid(path, value, e.message ?? e.keyword));
    }
  }
  return out;
}
