/**
 * The shape checks a pod passes before injection reads it. The API server always sends a decoded,
 * well-typed Pod; anything else (a hand-written AdmissionReview, another client) is refused with
 * the field that is wrong, never with the TypeError injection would throw.
 */
import { isPlainObject } from '../encoding/json.js';
import type { Pod } from '../api/k8s-types.js';

/** The pod, or the first field that is not what a Pod has there. */
export function checkPodShape(object: unknown): { pod: Pod } | { problem: string } {
  if (!isPlainObject(object)) return { problem: `it is ${kindOf(object)}, not an object` };
  const { metadata, spec } = object;
  if (!present(metadata)) {
    // metadata may be absent: the API server fills it in later.
  } else if (!isPlainObject(metadata)) return wrong('metadata', 'an object', metadata);
  else {
    for (const key of ['labels', 'annotations']) {
      const problem = stringMap(metadata[key], `metadata.${key}`);
      if (problem !== undefined) return { problem };
    }
  }
  if (!isPlainObject(spec)) return wrong('spec', 'an object', spec);
  if (!Array.isArray(spec['containers']))
    return wrong('spec.containers', 'a list', spec['containers']);
  for (const key of ['containers', 'initContainers', 'ephemeralContainers']) {
    const problem = containerList(spec[key], `spec.${key}`);
    if (problem !== undefined) return { problem };
  }
  for (const key of ['volumes', 'imagePullSecrets']) {
    const problem = objectList(spec[key], `spec.${key}`);
    if (problem !== undefined) return { problem };
  }
  return { pod: { ...object, metadata: metadata ?? {} } as unknown as Pod };
}

function containerList(value: unknown, path: string): string | undefined {
  const problem = objectList(value, path);
  if (problem !== undefined || !Array.isArray(value)) return problem;
  for (const [i, container] of (value as Record<string, unknown>[]).entries()) {
    if (typeof container['name'] !== 'string') {
      return wrong(`${path}[${i}].name`, 'a string', container['name']).problem;
    }
    for (const key of ['env', 'envFrom', 'volumeMounts', 'volumeDevices', 'ports']) {
      const inner = objectList(container[key], `${path}[${i}].${key}`);
      if (inner !== undefined) return inner;
    }
  }
  return undefined;
}

function objectList(value: unknown, path: string): string | undefined {
  if (!present(value)) return undefined;
  if (!Array.isArray(value)) return wrong(path, 'a list', value).problem;
  const at = value.findIndex((item) => !isPlainObject(item));
  return at < 0 ? undefined : wrong(`${path}[${at}]`, 'an object', value[at]).problem;
}

function stringMap(value: unknown, path: string): string | undefined {
  if (!present(value)) return undefined;
  if (!isPlainObject(value)) return wrong(path, 'a map of strings', value).problem;
  const key = Object.keys(value).find((k) => typeof value[k] !== 'string');
  return key === undefined ? undefined : wrong(`${path}[${key}]`, 'a string', value[key]).problem;
}

/** JSON null is how Go's encoder writes a nil slice or map: the same as absent. */
function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function wrong(path: string, expected: string, value: unknown): { problem: string } {
  return { problem: `${path} must be ${expected}, not ${kindOf(value)}` };
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'missing';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
