/**
 * The rules of a structural schema that can be checked without an API server
 * (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema
 * and apiextensions-apiserver's validation of openAPIV3Schema):
 * - every node has a non-empty `type`, except an int-or-string node (and a preserve-unknown-fields
 *   node, which may leave it out);
 * - `x-kubernetes-int-or-string` nodes use exactly anyOf [integer, string] and no `type`;
 * - inside anyOf/allOf/oneOf/not: no type, description, default, additionalProperties, nullable,
 *   and no properties/items that the node does not also declare outside;
 * - `properties` and `additionalProperties` are mutually exclusive, and `additionalProperties`
 *   is a schema (not a boolean);
 * - arrays have exactly one `items` schema; `properties` only on objects;
 * - keywords outside the CRD subset ($schema, $ref, const, definitions, ...) and
 *   `uniqueItems: true` are rejected;
 * - at the root, metadata may only constrain name and generateName;
 * - `x-kubernetes-preserve-unknown-fields` is only ever `true`.
 */
export type SchemaNode = { readonly [key: string]: unknown };

const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);

const ALLOWED = new Set([
  'type',
  'format',
  'title',
  'description',
  'default',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
  'items',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'properties',
  'additionalProperties',
  'nullable',
  'example',
  'externalDocs',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
]);

const NOT_IN_JUNCTORS = ['type', 'description', 'default', 'additionalProperties', 'nullable'];

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function junctors(node: SchemaNode): SchemaNode[] {
  const out: SchemaNode[] = [];
  for (const key of ['anyOf', 'allOf', 'oneOf']) {
    const list = node[key];
    if (Array.isArray(list)) for (const item of list) if (isNode(item)) out.push(item);
  }
  if (isNode(node['not'])) out.push(node['not']);
  return out;
}

function isIntOrStringPattern(node: SchemaNode): boolean {
  const anyOf = node['anyOf'];
  return (
    Array.isArray(anyOf) &&
    anyOf.length === 2 &&
    isNode(anyOf[0]) &&
    isNode(anyOf[1]) &&
    anyOf[0]['type'] === 'integer' &&
    anyOf[1]['type'] === 'string' &&
    Object.keys(anyOf[0]).length === 1 &&
    Object.keys(anyOf[1]).length === 1
  );
}

/** Checks a junctor branch: it may only repeat what its node declares outside the junctor. */
function checkJunctorBranch(
  branch: SchemaNode,
  outside: SchemaNode,
  path: string,
  errors: string[],
): void {
  for (const key of NOT_IN_JUNCTORS) {
    if (key in branch) errors.push(`${path}: ${key} inside a logical junctor`);
  }
  const props = branch['properties'];
  const outsideProps = outside['properties'];
  if (isNode(props)) {
    for (const name of Object.keys(props)) {
      if (!isNode(outsideProps) || !(name in outsideProps)) {
        errors.push(`${path}.properties.${name}: only declared inside a logical junctor`);
      }
    }
  }
  if ('items' in branch && !('items' in outside)) {
    errors.push(`${path}.items: only declared inside a logical junctor`);
  }
}

function checkKeywords(node: SchemaNode, path: string, errors: string[]): void {
  for (const key of Object.keys(node)) {
    if (!ALLOWED.has(key)) errors.push(`${path}: keyword ${key} is not allowed in a CRD schema`);
  }
  if (node['uniqueItems'] === true) errors.push(`${path}: uniqueItems must not be true`);
  if (
    'x-kubernetes-preserve-unknown-fields' in node &&
    node['x-kubernetes-preserve-unknown-fields'] !== true
  ) {
    errors.push(`${path}: x-kubernetes-preserve-unknown-fields must be true if set`);
  }
}

function checkType(node: SchemaNode, path: string, errors: string[]): void {
  const type = node['type'];
  if (node['x-kubernetes-int-or-string'] === true) {
    if (type !== undefined) errors.push(`${path}: int-or-string must not set type`);
    if (!isIntOrStringPattern(node)) {
      errors.push(`${path}: int-or-string needs anyOf [{type: integer}, {type: string}]`);
    }
    return;
  }
  if (type === undefined) {
    if (node['x-kubernetes-preserve-unknown-fields'] !== true) errors.push(`${path}: no type`);
    return;
  }
  if (typeof type !== 'string' || !TYPES.has(type))
    errors.push(`${path}: bad type ${JSON.stringify(type)}`);
  if (type === 'array' && !isNode(node['items'])) errors.push(`${path}: array without one items`);
  if (type !== 'array' && 'items' in node) errors.push(`${path}: items on a non-array`);
  if (type !== 'object' && ('properties' in node || 'additionalProperties' in node)) {
    errors.push(`${path}: properties on a non-object`);
  }
}

function checkNode(node: SchemaNode, path: string, errors: string[]): void {
  checkKeywords(node, path, errors);
  checkType(node, path, errors);
  const props = node['properties'];
  const additional = node['additionalProperties'];
  if (additional !== undefined) {
    if (!isNode(additional)) errors.push(`${path}: additionalProperties must be a schema`);
    if (props !== undefined) {
      errors.push(`${path}: properties and additionalProperties are mutually exclusive`);
    }
  }
  if (props !== undefined && !isNode(props)) errors.push(`${path}: properties must be an object`);
  if (isNode(props)) {
    for (const [name, child] of Object.entries(props)) {
      if (isNode(child)) checkNode(child, `${path}.properties.${name}`, errors);
      else errors.push(`${path}.properties.${name}: not a schema`);
    }
  }
  if (isNode(additional)) checkNode(additional, `${path}.additionalProperties`, errors);
  if (isNode(node['items'])) checkNode(node['items'], `${path}.items`, errors);
  if (node['x-kubernetes-int-or-string'] === true && isIntOrStringPattern(node)) return;
  for (const branch of junctors(node)) checkJunctorBranch(branch, node, path, errors);
}

/** All violations of the structural-schema rules in a CRD's openAPIV3Schema; empty if none. */
export function structuralErrors(root: SchemaNode): string[] {
  const errors: string[] = [];
  if (root['type'] !== 'object') errors.push('root: type must be object');
  checkNode(root, 'root', errors);
  const props = root['properties'];
  const metadata = isNode(props) ? props['metadata'] : undefined;
  if (isNode(metadata)) {
    const allowed = new Set(['type', 'description', 'properties']);
    for (const key of Object.keys(metadata)) {
      if (!allowed.has(key)) errors.push(`root.properties.metadata: ${key} is not allowed`);
    }
    const metaProps = metadata['properties'];
    if (isNode(metaProps)) {
      for (const name of Object.keys(metaProps)) {
        if (name !== 'name' && name !== 'generateName') {
          errors.push(`root.properties.metadata: only name and generateName may be restricted`);
        }
      }
    }
  }
  return errors;
}
