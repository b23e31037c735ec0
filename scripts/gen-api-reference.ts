/**
 * Generates docs/api-reference.md from the CRD's openAPIV3Schema (scripts/gen-crd.ts, itself made
 * from src/core/validation/sidecarset-schema.ts), so the page says what `kubectl explain
 * sidecarset` says.
 *
 *   npm run gen:api-reference                                   # write the file
 *   node --import tsx scripts/gen-api-reference.ts --check      # exit 1 if the committed file is stale
 *
 * One table per object, depth first from the root. An object whose fields are the same as those
 * of one already shown (the four label selectors, init containers and containers) links to it.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format, resolveConfig } from 'prettier';
import type { Schema } from './gen-crd.js';
import type { SidecarSetApiVersion } from '../src/core/api/sidecarset-types.js';
import { V1ALPHA1, V1BETA1 } from '../src/core/api/sidecarset-types.js';
import { SIDECARSET_SCHEMA, SIDECARSET_SCHEMAS } from '../src/core/validation/sidecarset-schema.js';
import { sidecarSetOpenApiSchema, writeGenerated } from './gen-crd.js';

export const API_REFERENCE_PATH = fileURLToPath(
  new URL('../docs/api-reference.md', import.meta.url),
);

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(node: Schema, key: string): string {
  const value = node[key];
  return typeof value === 'string' ? value : '';
}

/** The object whose fields a node holds: the node itself, or its array's items. */
function fieldsOf(node: Schema): Schema | undefined {
  if (isSchema(node['properties'])) return node;
  const items = node['items'];
  return isSchema(items) ? fieldsOf(items) : undefined;
}

const anchor = (path: string): string => path.replace(/[^A-Za-z0-9]+/g, '-').replace(/-$/, '');

/** The path of the object a field leads to: `a.b` for an object, `a.b[]` for an array of them. */
function fieldsPath(path: string, node: Schema): string {
  const items = node['items'];
  return isSchema(items) ? fieldsPath(`${path}[]`, items) : path;
}

class Reference {
  private readonly sections: string[] = [];
  /** The first path shown for each set of fields, by their JSON. */
  private readonly shown = new Map<string, string>();

  /** The section's path for an object node, writing the section (and those below) the first time. */
  section(path: string, node: Schema): string {
    const props = node['properties'];
    if (!isSchema(props)) throw new Error(`${path} has no fields`);
    const key = JSON.stringify(props);
    const first = this.shown.get(key);
    if (first !== undefined) return first;
    this.shown.set(key, path);
    const index = this.sections.push('') - 1;
    const required = Array.isArray(node['required']) ? node['required'] : [];
    const rows = Object.entries(props).map(([name, child]) => {
      if (!isSchema(child)) throw new Error(`${path}.${name} is not a schema`);
      const fields = fieldsOf(child);
      const childPath = path === '' ? name : `${path}.${name}`;
      const link = fields === undefined ? '' : this.section(fieldsPath(childPath, child), fields);
      return row(name, child, required.includes(name), link);
    });
    this.sections[index] = [
      `<a id="${anchor(path === '' ? 'sidecarset' : path)}"></a>`,
      '',
      `## ${path === '' ? 'SidecarSet' : `\`${path}\``}`,
      '',
      text(node, 'description'),
      '',
      '| Field | Type | Description |',
      '| --- | --- | --- |',
      ...rows,
      '',
    ].join('\n');
    return path;
  }

  render(): string {
    return this.sections.join('\n');
  }
}

function typeOf(node: Schema): string {
  if (node['x-kubernetes-int-or-string'] === true) return 'integer or string';
  const items = node['items'];
  if (node['type'] === 'array' && isSchema(items)) return `array of ${typeOf(items)}`;
  const values = node['additionalProperties'];
  if (isSchema(values)) return `map of ${typeOf(values)}`;
  return text(node, 'type');
}

/** A table row; `link` is the section holding the field's own fields, if it has any. */
function row(name: string, node: Schema, required: boolean, link: string): string {
  const parts = [text(node, 'description')];
  const values = node['enum'];
  if (Array.isArray(values) && values.length > 1) {
    parts.push(`One of ${values.map((v) => `\`${String(v)}\``).join(', ')}.`);
  }
  const fallback = node['default'];
  if (typeof fallback === 'string') parts.push(`Default \`${fallback}\`.`);
  if (required) parts.push('Required.');
  const description = parts.join(' ').replaceAll('|', '\\|');
  const type = link === '' ? typeOf(node) : `${typeOf(node)} ([fields](#${anchor(link)}))`;
  return `| \`${name}\` | ${type} | ${description} |`;
}

/** The CRD may not describe metadata (the API server refuses it); the page does. */
function withMetadataDescription(root: Schema): Schema {
  const props = root['properties'];
  if (!isSchema(props)) throw new Error('the SidecarSet schema has no properties');
  const { description } = SIDECARSET_SCHEMA.properties.metadata;
  return { ...root, properties: { ...props, metadata: { type: 'object', description } } };
}

/** The spec fields only one version has, as a table. */
function versionDifferences(): string {
  const specOf = (version: SidecarSetApiVersion): Schema => {
    const spec = SIDECARSET_SCHEMAS[version]['properties'];
    const fields =
      isSchema(spec) && isSchema(spec['spec']) ? spec['spec']['properties'] : undefined;
    if (!isSchema(fields)) throw new Error(`${version} has no spec fields`);
    return fields;
  };
  const alpha = specOf(V1ALPHA1);
  const beta = specOf(V1BETA1);
  const rows = ['| Field | Only in | Description |', '| ----- | ------- | ----------- |'];
  for (const [version, fields, other] of [
    ['v1beta1', beta, alpha],
    ['v1alpha1', alpha, beta],
  ] as const) {
    for (const [name, node] of Object.entries(fields)) {
      if (name in other || !isSchema(node)) continue;
      rows.push(
        `| \`spec.${name}\` | ${version} | ${text(node, 'description').replaceAll('|', '\\|')} |`,
      );
    }
  }
  return rows.join('\n');
}

/** The page as committed (formatted with the repository's Prettier). */
export async function renderApiReference(): Promise<string> {
  const reference = new Reference();
  reference.section('', withMetadataDescription(sidecarSetOpenApiSchema()));
  const page = [
    '<!-- Generated by scripts/gen-api-reference.ts from src/core/validation/sidecarset-schema.ts. Do not edit; run npm run gen:api-reference. -->',
    '',
    '# SidecarSet API reference',
    '',
    '`apps.kruise.io/v1beta1` (stored; what a new manifest should use) and',
    '`apps.kruise.io/v1alpha1`, kind `SidecarSet`, cluster-scoped (the CRD',
    '`sidecarsets.apps.kruise.io`). The same descriptions are in the CRD: `kubectl explain',
    'sidecarset.spec.updateStrategy` prints them in a cluster. Defaults that the webhook applies',
    '(not the API server) are named in the descriptions. The tables show v1beta1; the versions',
    'differ only in the fields below, and either converts to the other and back unchanged',
    '([ADR 15](adr/0015-sidecarset-v1beta1.md)).',
    '',
    versionDifferences(),
    '',
    reference.render(),
  ].join('\n');
  const options = (await resolveConfig(API_REFERENCE_PATH)) ?? {};
  return format(page, { ...options, parser: 'markdown' });
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  process.exitCode = writeGenerated(
    API_REFERENCE_PATH,
    await renderApiReference(),
    process.argv.slice(2),
    'npm run gen:api-reference',
  );
}
