/**
 * The part of Kubernetes pod-create validation that OpenKruise applies to a SidecarSet by
 * validating a fake Pod made of its initContainers, containers and volumes (as sidecarset_create_update_handler.go in OpenKruise does).
 * First the official core/v1 schema (kubernetes-models) checks types and enums; only if that
 * passes do the semantic rules of pkg/apis/core/validation run. Paths point at the SidecarSet.
 */
import { Pod } from 'kubernetes-models/v1/Pod';
import type { Container, Volume } from '../api/k8s-types.js';
import { stripSidecarFields } from '../api/sidecar-container.js';
import type { FieldError } from './field-error.js';
import { invalid, notSupported, required } from './field-error.js';
import { isPlainObject } from '../encoding/json.js';
import { validateContainers } from './pod-containers.js';
import { validateVolumes } from './pod-volumes.js';

export interface FakePodInput {
  initContainers?: readonly Readonly<Container>[] | undefined;
  containers?: readonly Readonly<Container>[] | undefined;
  volumes?: readonly Readonly<Volume>[] | undefined;
}

/** Stands in when the SidecarSet has no regular containers: a pod needs one. */
const DUMMY_CONTAINER = {
  name: 'test',
  image: 'busybox',
  imagePullPolicy: 'IfNotPresent',
  terminationMessagePolicy: 'File',
};

/** Validates the fake pod; `root` is the SidecarSet's spec path (`spec`). */
export function validateFakePodSpec(input: FakePodInput, root = 'spec'): FieldError[] {
  const initContainers = (input.initContainers ?? []).map(stripSidecarFields);
  const containers = (input.containers ?? []).map(stripSidecarFields);
  const volumes = [...(input.volumes ?? [])];
  const spec = {
    initContainers,
    containers: containers.length > 0 ? containers : [DUMMY_CONTAINER],
    volumes,
  };
  const schemaErrors = validatePodSchema(spec, root);
  if (schemaErrors.length > 0) return schemaErrors;
  const { errors, volumeSources } = validateVolumes(volumes, `${root}.volumes`);
  errors.push(...validateContainers(initContainers, containers, volumeSources, root));
  return errors;
}

interface SchemaIssue {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

function isSchemaIssue(x: unknown): x is SchemaIssue {
  return (
    isPlainObject(x) && typeof x['instancePath'] === 'string' && typeof x['keyword'] === 'string'
  );
}

const QUANTITY_DETAIL =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** Runs the core/v1 Pod schema and maps its complaints to field errors, one per location. */
export function validatePodSchema(spec: Record<string, unknown>, root = 'spec'): FieldError[] {
  try {
    new Pod({ metadata: { name: 'test', namespace: 'default' }, spec } as never).validate();
    return [];
  } catch (e) {
    const issues =
      isPlainObject(e) || e instanceof Error ? (e as { errors?: unknown }).errors : undefined;
    if (!Array.isArray(issues)) {
      return [invalid(root, null, e instanceof Error ? e.message : 'schema validation failed')];
    }
    return mapSchemaIssues(issues.filter(isSchemaIssue), { spec }, root);
  }
}

function mapSchemaIssues(
  issues: readonly SchemaIssue[],
  doc: Record<string, unknown>,
  root: string,
): FieldError[] {
  const byPath = new Map<string, SchemaIssue[]>();
  for (const issue of issues) {
    const key =
      issue.keyword === 'required'
        ? `${issue.instancePath}#${String(issue.params['missingProperty'])}`
        : issue.instancePath;
    byPath.set(key, [...(byPath.get(key) ?? []), issue]);
  }
  const out: FieldError[] = [];
  for (const group of byPath.values()) {
    const first = group[0];
    /* c8 ignore next -- groups are never empty */
    if (first === undefined) continue;
    const segments = first.instancePath.split('/').slice(1).map(unescapePointer);
    const path = toFieldPath(segments, root);
    const value = valueAt(doc, segments);
    const req = group.find((i) => i.keyword === 'required');
    const en = group.find((i) => i.keyword === 'enum');
    const fmt = group.find((i) => i.keyword === 'format');
    if (req !== undefined) {
      out.push(required(`${path}.${String(req.params['missingProperty'])}`, ''));
    } else if (en !== undefined) {
      const allowed = Array.isArray(en.params['allowedValues']) ? en.params['allowedValues'] : [];
      out.push(notSupported(path, value, allowed.map(String)));
    } else if (fmt?.params['format'] === 'quantity') {
      out.push(invalid(path, value, QUANTITY_DETAIL));
    } else {
      const detail = group
        .filter((i) => i.keyword !== 'oneOf' && i.keyword !== 'anyOf')
        .map((i) => i.message ?? i.keyword);
      out.push(
        invalid(
          path,
          value,
          detail.length > 0 ? [...new Set(detail)].join(' or ') : (first.message ?? 'is invalid'),
        ),
      );
    }
  }
  return out;
}

function unescapePointer(s: string): string {
  return s.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** `/spec/containers/0/resources/limits/cpu` → `spec.containers[0].resources.limits[cpu]`. */
function toFieldPath(segments: readonly string[], root: string): string {
  let path = root;
  for (const seg of segments.slice(1)) {
    path += /^\d+$/.test(seg)
      ? `[${seg}]`
      : /^[A-Za-z_][A-Za-z0-9_]*$/.test(seg)
        ? `.${seg}`
        : `[${seg}]`;
  }
  return path;
}

function valueAt(doc: unknown, segments: readonly string[]): unknown {
  let cur: unknown = doc;
  for (const seg of segments) {
    if (Array.isArray(cur)) cur = cur[Number(seg)];
    else if (isPlainObject(cur)) cur = cur[seg];
    else return undefined;
  }
  return cur;
}
