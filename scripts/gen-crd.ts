/**
 * Generates manifests/base/crd/apps.kruise.io_sidecarsets.yaml, the SidecarSet CustomResourceDefinition,
 * from the JSON Schema the validator uses (src/core/validation/sidecarset-schema.ts), so the API
 * server and `sidecarset validate` accept the same field set.
 *
 *   node --import tsx scripts/gen-crd.ts           # write the file
 *   node --import tsx scripts/gen-crd.ts --check   # exit 1 if the committed file is stale
 *
 * The API server wants a structural schema (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema),
 * which is a subset of JSON Schema with Kubernetes extensions, so the validator's schema is
 * translated rather than copied:
 * - `additionalProperties: false` beside `properties` is not allowed; it is dropped, and the API
 *   server prunes (or, with kubectl's default strict field validation, rejects) unknown fields.
 * - `additionalProperties: true`, or no `additionalProperties` beside `properties` (JSON Schema then
 *   accepts any field), becomes `x-kubernetes-preserve-unknown-fields: true`, so nothing is pruned.
 * - `const` does not exist in a CRD schema; it becomes a one-value `enum`.
 * - The root's apiVersion, kind and metadata are the API server's business: only their types stay,
 *   and the descriptions of apiVersion and kind (the API server refuses one on metadata).
 * - `status` gets its real, typed shape (the validator does not look at it).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { Document } from 'yaml';
import { INSTALLATION } from '../src/core/api/installation-names.js';
import type { SidecarSetApiVersion } from '../src/core/api/sidecarset-types.js';
import { V1ALPHA1, V1BETA1 } from '../src/core/api/sidecarset-types.js';
import { SIDECARSET_SCHEMAS } from '../src/core/validation/sidecarset-schema.js';

export type Schema = { readonly [key: string]: unknown };

export const CRD_PATH = fileURLToPath(
  new URL('../manifests/base/crd/apps.kruise.io_sidecarsets.yaml', import.meta.url),
);

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function mapValues(props: Schema, f: (value: Schema) => Schema): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  for (const [key, value] of Object.entries(props)) {
    if (!isSchema(value)) throw new Error(`property ${key} is not a schema`);
    out[key] = f(value);
  }
  return out;
}

/** Translates one JSON Schema node (draft-07 subset) into a structural CRD schema node. */
export function toStructural(node: Schema): Schema {
  const out: Record<string, unknown> = {};
  const props = node['properties'];
  const additional = node['additionalProperties'];
  for (const [key, value] of Object.entries(node)) {
    switch (key) {
      case '$schema':
      case 'additionalProperties':
        break;
      case 'const':
        out['enum'] = [value];
        break;
      case 'properties':
        if (!isSchema(value)) throw new Error('properties is not an object');
        out[key] = mapValues(value, toStructural);
        break;
      case 'items':
        if (!isSchema(value)) throw new Error('items must be one schema');
        out[key] = toStructural(value);
        break;
      case 'anyOf':
      case 'allOf':
      case 'oneOf':
        if (!Array.isArray(value)) throw new Error(`${key} is not an array`);
        out[key] = value.map((v: unknown) => {
          if (!isSchema(v)) throw new Error(`${key} holds a non-schema`);
          return toStructural(v);
        });
        break;
      default:
        out[key] = value;
    }
  }
  if (isSchema(additional)) {
    if (props !== undefined) throw new Error('additionalProperties beside properties');
    out['additionalProperties'] = toStructural(additional);
  } else if (props !== undefined && additional !== false) {
    out['x-kubernetes-preserve-unknown-fields'] = true;
  }
  return out;
}

const int32 = (description: string): Schema => ({ type: 'integer', format: 'int32', description });

const STATUS_SCHEMA: Schema = {
  type: 'object',
  description: 'The observed state of the SidecarSet, written by the controller.',
  required: ['matchedPods', 'updatedPods', 'readyPods'],
  properties: {
    observedGeneration: {
      type: 'integer',
      format: 'int64',
      description: 'The metadata.generation (spec version) that the other numbers are about.',
    },
    matchedPods: int32(
      'Running pods that this SidecarSet injected and still matches (the MATCHED column).',
    ),
    updatedPods: int32(
      'Matched pods that carry the current version of the sidecars, by the ' +
        'kruise.io/sidecarset-hash annotation (the UPDATED column).',
    ),
    readyPods: int32(
      'Matched pods that are Ready and whose sidecars run as specified (the READY column).',
    ),
    updatedReadyPods: int32('Matched pods that are both updated and ready.'),
    latestRevision: {
      type: 'string',
      description:
        'The name of the ControllerRevision that holds the current spec; upgraded pods record it.',
    },
    collisionCount: int32(
      'How many name collisions were met when naming ControllerRevisions; it enters the next ' +
        'name so that it is unique.',
    ),
    conditions: {
      type: 'array',
      description:
        "This project's conditions (OpenKruise has none): RolloutPaused, True while failed " +
        'upgraded pods (reason UnhealthyPods) or updateStrategy.paused (reason Paused) stop the ' +
        "rollout; PodUpdateFailure, True while the API server refuses the controller's pod " +
        'updates (reason FailedUpdate, the refusal in the message); RevisionHistoryFailure, True ' +
        'while the controller cannot record ControllerRevisions (reason CannotRecordRevision); ' +
        'and Ready, Reconciling and ' +
        'Stalled in the kstatus convention, for kubectl wait and GitOps tools (docs/gitops.md).',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      items: {
        type: 'object',
        required: ['type', 'status'],
        properties: {
          type: { type: 'string', description: 'The condition type, e.g. Ready or RolloutPaused.' },
          status: {
            type: 'string',
            enum: ['True', 'False', 'Unknown'],
            description: 'Whether the condition holds.',
          },
          reason: { type: 'string', description: 'Why, in one CamelCase word.' },
          message: { type: 'string', description: 'Why, for people.' },
          lastTransitionTime: { type: 'string', description: 'When the status last changed.' },
          observedGeneration: {
            type: 'integer',
            format: 'int64',
            description: 'The metadata.generation the condition was set for.',
          },
        },
        description: 'One condition, as metav1.Condition.',
      },
    },
    missedPods: int32(
      'Pods this SidecarSet matches, created since it exists, that do not carry its injection ' +
        '(created while the webhook was down or not called); each gets a SidecarNotInjected ' +
        'event. Recreate them to inject them. Not an OpenKruise field.',
    ),
  },
};

/** Root fields the API server validates itself; a CRD schema may only give their type. */
const SERVER_OWNED: ReadonlySet<string> = new Set(['apiVersion', 'kind', 'metadata']);

/** The validator's whole-document schema of one version as the CRD's openAPIV3Schema. */
export function sidecarSetOpenApiSchema(version: SidecarSetApiVersion = V1BETA1): Schema {
  const root = toStructural(SIDECARSET_SCHEMAS[version]);
  const props = root['properties'];
  if (!isSchema(props)) throw new Error('the SidecarSet schema has no properties');
  const properties = Object.fromEntries(
    Object.entries(props).map(([key, value]) => {
      if (key === 'status') return [key, STATUS_SCHEMA];
      if (!SERVER_OWNED.has(key) || !isSchema(value)) return [key, value];
      if (key === 'metadata') return [key, { type: value['type'] }];
      return [key, { type: value['type'], description: value['description'] }];
    }),
  );
  return { description: root['description'], type: 'object', required: ['spec'], properties };
}

export function buildCrd(): Schema {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: 'sidecarsets.apps.kruise.io',
      labels: { 'app.kubernetes.io/name': 'sidecarset', 'app.kubernetes.io/part-of': 'sidecarset' },
    },
    spec: {
      group: 'apps.kruise.io',
      // As in OpenKruise: no shortNames, so kubectl commands and scripts read the same against either.
      names: {
        kind: 'SidecarSet',
        listKind: 'SidecarSetList',
        plural: 'sidecarsets',
        singular: 'sidecarset',
      },
      scope: 'Cluster',
      // As OpenKruise since v1.9: both served, v1beta1 stored, v1alpha1 converted by our webhook
      // (docs/adr/0015-sidecarset-v1beta1.md). Reading or writing v1alpha1 needs the webhook up.
      versions: [crdVersion(V1ALPHA1, false), crdVersion(V1BETA1, true)],
      conversion: {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: ['v1'],
          clientConfig: {
            // Not the admission Service: this one keeps not-ready replicas, which need conversion
            // to become ready when SidecarSets are stored as v1alpha1 (docs/adr/0036).
            service: {
              name: INSTALLATION.conversionService,
              namespace: INSTALLATION.namespace,
              path: '/convert',
              port: 443,
            },
            // No caBundle, unlike the webhook configurations' placeholder: the API server does not
            // establish a CRD whose conversion caBundle is not a CA. The webhook writes it (self-
            // managed certificate), or certs/gen.sh's overlay, cert-manager or the chart sets it.
          },
        },
      },
    },
  };
}

function crdVersion(apiVersion: SidecarSetApiVersion, storage: boolean): Schema {
  return {
    name: apiVersion.split('/')[1],
    served: true,
    storage,
    subresources: { status: {} },
    additionalPrinterColumns: [
      column('MATCHED', '.status.matchedPods', 'integer', 'The number of pods matched.'),
      column('UPDATED', '.status.updatedPods', 'integer', 'Matched pods that are updated.'),
      column('READY', '.status.readyPods', 'integer', 'Matched pods that are ready.'),
      column(
        'PAUSED',
        '.status.conditions[?(@.type=="RolloutPaused")].status',
        'string',
        'Whether the rollout is paused (condition RolloutPaused).',
      ),
      column(
        'REASON',
        '.status.conditions[?(@.type=="RolloutPaused")].reason',
        'string',
        'Why: UnhealthyPods (failed upgraded pods), Paused (updateStrategy.paused) or Resumed.',
      ),
      column('AGE', '.metadata.creationTimestamp', 'date', 'Time since creation.'),
    ],
    schema: { openAPIV3Schema: sidecarSetOpenApiSchema(apiVersion) },
  };
}

function column(name: string, jsonPath: string, type: string, description: string): Schema {
  return { name, jsonPath, type, description };
}

/** The CRD as the YAML text committed under manifests/ (formatted with the repository's Prettier). */
export async function renderCrd(): Promise<string> {
  // No anchors: each version's schema written out whole, as every CRD tool writes them.
  const doc = new Document(buildCrd(), { aliasDuplicateObjects: false });
  doc.commentBefore =
    ' Generated by scripts/gen-crd.ts from src/core/validation/sidecarset-schema.ts. Do not edit.\n' +
    ' Regenerate: node --import tsx scripts/gen-crd.ts';
  const options = (await resolveConfig(CRD_PATH)) ?? {};
  return format(doc.toString({ lineWidth: 0 }), { ...options, parser: 'yaml' });
}

/**
 * Writes a generated file, or with `--check` in `args` only compares: 1 (and a message naming
 * `command`) if the committed file differs.
 */
export function writeGenerated(
  path: string,
  text: string,
  args: readonly string[],
  command: string,
): number {
  if (args.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(path, 'utf8');
    } catch {
      // missing: stale
    }
    if (current === text) return 0;
    process.stderr.write(`${path} is stale: run ${command}\n`);
    return 1;
  }
  writeFileSync(path, text);
  process.stderr.write(`wrote ${path}\n`);
  return 0;
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  process.exitCode = writeGenerated(
    CRD_PATH,
    await renderCrd(),
    process.argv.slice(2),
    'node --import tsx scripts/gen-crd.ts',
  );
}
