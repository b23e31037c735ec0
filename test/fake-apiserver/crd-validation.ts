/**
 * What the real API server checks on every write of a custom resource, main resource and status
 * alike: the document against its CRD's openAPIV3Schema (types, required fields, enums, formats).
 * Fields the schema does not declare are accepted here; the real server prunes them.
 */
import { readFileSync } from 'node:fs';

import type { ErrorObject } from 'ajv';
import { parse } from 'yaml';

import { compileCrdSchema } from '../manifests/crd-schema.js';
import type { SchemaNode } from '../manifests/structural.js';
import type { KubeObject } from './types.js';

interface CrdVersion {
  name: string;
  schema: { openAPIV3Schema: SchemaNode };
}

/** `/spec/containers/0/image` as the API server writes it: `spec.containers[0].image`. */
function fieldPath(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`))
    .join('')
    .replace(/^\./, '');
}

/** The value at a JSON pointer such as ajv's instancePath. */
function valueAt(doc: unknown, pointer: string): unknown {
  let value = doc;
  for (const part of pointer.split('/').slice(1)) {
    const key = part.replaceAll('~1', '/').replaceAll('~0', '~');
    value = (value as Record<string, unknown> | undefined)?.[key];
  }
  return value;
}

function describeError(error: ErrorObject, doc: unknown): string {
  const path = fieldPath(error.instancePath);
  if (error.keyword === 'required') {
    const missing = String((error.params as { missingProperty?: string }).missingProperty);
    return `${path === '' ? '' : `${path}.`}${missing}: Required value`;
  }
  if (error.keyword === 'enum') {
    const allowed = (error.params as { allowedValues: unknown[] }).allowedValues;
    const supported = allowed.map((v) => JSON.stringify(v)).join(', ');
    const value = JSON.stringify(valueAt(doc, error.instancePath));
    return `${path}: Unsupported value: ${value}: supported values: ${supported}`;
  }
  return `${path}: Invalid value: ${error.message ?? 'does not match the schema'}`;
}

/** A checker for documents of `version` of the CRD in `crdFile`; returns one message per problem. */
export function crdValidator(crdFile: URL, version: string): (obj: KubeObject) => string[] {
  const crd = parse(readFileSync(crdFile, 'utf8')) as { spec: { versions: CrdVersion[] } };
  const served = crd.spec.versions.find((v) => v.name === version);
  if (served === undefined) throw new Error(`${crdFile.pathname} does not serve ${version}`);
  const validate = compileCrdSchema(served.schema.openAPIV3Schema, 'allow');
  return (obj) =>
    validate(obj) ? [] : (validate.errors ?? []).map((error) => describeError(error, obj));
}
