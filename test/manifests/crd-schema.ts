/**
 * Turns a CRD's structural openAPIV3Schema into a JSON Schema for ajv that fails where the API
 * server would reject a document or silently prune one of its fields: an object node without
 * `x-kubernetes-preserve-unknown-fields` and without an `additionalProperties` schema accepts no
 * field it does not declare. (The API server drops such fields, or with kubectl's default strict
 * field validation rejects them; either way a manifest that relies on them does not work.)
 */
import { Ajv } from 'ajv';
import type { ValidateFunction } from 'ajv';
import type { SchemaNode } from './structural.js';

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function convertChildren(value: unknown, unknownFields: 'reject' | 'allow'): unknown {
  if (Array.isArray(value)) return value.map((v) => convertChildren(v, unknownFields));
  if (isNode(value)) return toAjvSchema(value, false, unknownFields);
  return value;
}

/**
 * `unknownFields: 'reject'` (the default) fails on fields the schema does not declare, as
 * strict field validation does; 'allow' accepts them, as the API server does when it prunes them.
 */
export function toAjvSchema(
  node: SchemaNode,
  isRoot = true,
  unknownFields: 'reject' | 'allow' = 'reject',
): SchemaNode {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-kubernetes-')) continue;
    if (key === 'properties' && isNode(value)) {
      const props: Record<string, unknown> = {};
      for (const [name, child] of Object.entries(value)) {
        // The root's metadata is ObjectMeta, validated by the API server itself.
        props[name] =
          isRoot && name === 'metadata'
            ? { type: 'object' }
            : convertChildren(child, unknownFields);
      }
      out[key] = props;
    } else if (
      key === 'items' ||
      key === 'additionalProperties' ||
      key === 'not' ||
      key === 'anyOf' ||
      key === 'allOf' ||
      key === 'oneOf'
    ) {
      out[key] = convertChildren(value, unknownFields);
    } else {
      out[key] = value;
    }
  }
  const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
  if (
    unknownFields === 'reject' &&
    node['type'] === 'object' &&
    !preserve &&
    !('additionalProperties' in node)
  ) {
    out['additionalProperties'] = false;
  }
  return out;
}

function int(bits: 32 | 64): { type: 'number'; validate: (n: number) => boolean } {
  const limit = 2 ** (bits - 1);
  return { type: 'number', validate: (n) => Number.isInteger(n) && n >= -limit && n < limit };
}

/** An ajv validator for documents of the CRD version whose openAPIV3Schema is given. */
export function compileCrdSchema(
  openAPIV3Schema: SchemaNode,
  unknownFields: 'reject' | 'allow' = 'reject',
): ValidateFunction {
  const ajv = new Ajv({ allErrors: true, strict: true });
  ajv.addFormat('int32', int(32));
  ajv.addFormat('int64', int(64));
  return ajv.compile(toAjvSchema(openAPIV3Schema, true, unknownFields));
}
