/**
 * Checks a SidecarSet document against the schema of its apiVersion (SIDECARSET_SCHEMAS) with
 * ajv, each compiled on first use. A document of neither version is checked as v1beta1, the
 * version a new manifest should use, with its apiVersion refused.
 */
import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { FieldError } from './field-error.js';
import { forbidden, invalid, notSupported, required } from './field-error.js';
import { isPlainObject } from '../encoding/json.js';
import { SIDECARSET_SCHEMAS } from './sidecarset-schema.js';
import type { SidecarSetApiVersion } from '../api/sidecarset-types.js';
import {
  SIDECARSET_API_VERSIONS,
  V1BETA1,
  isSidecarSetApiVersion,
} from '../api/sidecarset-types.js';

const compiled = new Map<SidecarSetApiVersion, ValidateFunction>();
let ajv: Ajv | undefined;

function validator(version: SidecarSetApiVersion): ValidateFunction {
  let validate = compiled.get(version);
  if (validate === undefined) {
    if (ajv === undefined) {
      // The schemas are ours and checked against the meta-schema by
      // test/core/validation/schema.test.ts; checking them again at every start costs each CLI
      // run a tenth of a second.
      ajv = new Ajv({ allErrors: true, validateSchema: false });
      ajv.addVocabulary(['x-kubernetes-int-or-string', 'x-kubernetes-preserve-unknown-fields']);
    }
    validate = ajv.compile(SIDECARSET_SCHEMAS[version]);
    compiled.set(version, validate);
  }
  return validate;
}

export function validateSidecarSetSchema(value: unknown): FieldError[] {
  const apiVersion = isPlainObject(value) ? value['apiVersion'] : undefined;
  const known = isSidecarSetApiVersion(apiVersion);
  const validate = validator(known ? apiVersion : V1BETA1);
  const errors = validate(value) ? [] : mapAjvErrors(validate.errors ?? [], value);
  if (known || !isPlainObject(value)) return errors;
  const others = errors.filter((e) => e.field !== 'apiVersion');
  if (apiVersion === undefined) return [required('apiVersion', ''), ...others];
  return [notSupported('apiVersion', apiVersion, SIDECARSET_API_VERSIONS), ...others];
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
function mapAjvErrors(errors: readonly ErrorObject[], doc: unknown): FieldError[] {
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
