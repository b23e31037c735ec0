/**
 * `kubectl explain sidecarset…` prints a field's description: every field of the committed CRD
 * must have one (they come from src/core/validation/sidecarset-schema.ts through
 * scripts/gen-crd.ts).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { parse } from 'yaml';

import { CRD_PATH } from '../../scripts/gen-crd.js';
import type { SchemaNode } from './structural.js';

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Every node kubectl explain can reach, with its path: properties, items and map values. The
 * branches of an int-or-string's anyOf are left out: a CRD forbids descriptions there.
 */
function schemaNodes(node: SchemaNode, path = '<root>'): [string, SchemaNode][] {
  const out: [string, SchemaNode][] = [[path, node]];
  const props = node['properties'];
  if (isNode(props)) {
    for (const [name, child] of Object.entries(props)) {
      if (isNode(child))
        out.push(...schemaNodes(child, path === '<root>' ? name : `${path}.${name}`));
    }
  }
  for (const [key, suffix] of [
    ['items', '[]'],
    ['additionalProperties', '{}'],
  ] as const) {
    const child = node[key];
    if (isNode(child)) out.push(...schemaNodes(child, `${path}${suffix}`));
  }
  return out;
}

describe('the SidecarSet CRD explains itself', () => {
  const crd = parse(readFileSync(CRD_PATH, 'utf8')) as {
    spec: { versions: { schema: { openAPIV3Schema: SchemaNode } }[] };
  };
  const nodes = crd.spec.versions.flatMap((v) => schemaNodes(v.schema.openAPIV3Schema));

  it('walks the whole schema', () => {
    assert.ok(nodes.length > 200, `${nodes.length} nodes`);
    const paths = nodes.map(([path]) => path);
    for (const path of [
      'spec.updateStrategy.partition',
      'spec.containers[].resourcesPolicy.resourcesExpr.limits.cpu',
      'spec.selector.matchLabels{}',
      'status.matchedPods',
    ]) {
      assert.ok(paths.includes(path), path);
    }
  });

  it('has a description on every node but metadata, where the API server refuses one', () => {
    const missing = nodes
      .filter(([path]) => path !== 'metadata')
      .filter(([, node]) => typeof node['description'] !== 'string' || node['description'] === '')
      .map(([path]) => path);
    assert.deepEqual(missing, []);
  });

  it('defaults resourcesPolicy.targetContainersNameRegex to .*, as OpenKruise does', () => {
    const regex = nodes.find(
      ([path]) => path === 'spec.containers[].resourcesPolicy.targetContainersNameRegex',
    );
    assert.equal(regex?.[1]['default'], '.*');
  });
});
