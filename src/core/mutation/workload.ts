/**
 * The pod inside the objects `sidecarset inject` accepts: a Pod itself, or the pod template of a
 * workload. Injecting a template gives what its pods will look like once created.
 */
import { isPlainObject } from '../encoding/json.js';
import type { Pod } from '../api/k8s-types.js';

/** Kind → path from the object to its pod template. */
const TEMPLATE_PATHS: Readonly<Record<string, readonly string[]>> = {
  Deployment: ['spec', 'template'],
  StatefulSet: ['spec', 'template'],
  DaemonSet: ['spec', 'template'],
  ReplicaSet: ['spec', 'template'],
  ReplicationController: ['spec', 'template'],
  Job: ['spec', 'template'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template'],
};

const INJECTABLE_KINDS = ['Pod', ...Object.keys(TEMPLATE_PATHS)] as const;

export interface PodView {
  /** The pod as injection sees it (a template gets the object's namespace). */
  pod: Pod;
  /** The object with the injected pod written back where it came from. */
  withPod: (injected: Pod) => Record<string, unknown>;
}

/** The pod of an object, or an explanation of why it has none. */
export function podViewOf(object: Readonly<Record<string, unknown>>): PodView | string {
  const kind = object['kind'];
  if (typeof kind !== 'string') return 'it has no kind';
  const metadata = isPlainObject(object['metadata']) ? object['metadata'] : {};
  if (kind === 'Pod') {
    if (!isPlainObject(object['spec'])) return 'the Pod has no spec';
    const pod = { ...object, metadata } as unknown as Pod;
    return { pod, withPod: (injected) => ({ ...injected }) };
  }
  const path = TEMPLATE_PATHS[kind];
  if (path === undefined) {
    return `kind ${kind} is not supported (expected one of ${INJECTABLE_KINDS.join(', ')})`;
  }
  const template = dig(object, path);
  if (template === undefined || !isPlainObject(template['spec'])) {
    return `the ${kind} has no pod template at .${path.join('.')}`;
  }
  const namespace = typeof metadata['namespace'] === 'string' ? metadata['namespace'] : 'default';
  const templateMeta = isPlainObject(template['metadata']) ? template['metadata'] : {};
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...templateMeta, namespace },
    spec: template['spec'],
  } as unknown as Pod;
  return {
    pod,
    withPod: (injected) => {
      const copy = structuredClone(object) as Record<string, unknown>;
      const target = dig(copy, path);
      /* c8 ignore next -- the template was found above on the same shape */
      if (target === undefined) return copy;
      const meta: Record<string, unknown> = { ...injected.metadata };
      if (!('namespace' in templateMeta)) delete meta['namespace'];
      target['metadata'] = meta;
      target['spec'] = injected.spec;
      return copy;
    },
  };
}

function dig(
  object: Readonly<Record<string, unknown>>,
  path: readonly string[],
): Record<string, unknown> | undefined {
  let at: unknown = object;
  for (const key of path) {
    if (!isPlainObject(at)) return undefined;
    at = at[key];
  }
  return isPlainObject(at) ? at : undefined;
}
