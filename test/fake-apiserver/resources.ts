import { crdValidator } from './crd-validation.js';
import { clone, isJsonObject, jsonEqual } from './json.js';
import type { JsonObject } from './json.js';
import type { KubeObject, ResourceRef } from './types.js';

/** Everything the fake needs to serve one resource type. */
export interface ResourceDef extends ResourceRef {
  readonly kind: string;
  readonly namespaced: boolean;
  /** Writes to the main resource keep the old `.status`; `/status` writes change only `.status`. */
  readonly statusSubresource: boolean;
  /** pods/resize: writes there change only the containers' resources. */
  readonly resizeSubresource?: boolean;
  /** pods/eviction: POST an Eviction to delete the pod within its disruption budget (eviction.ts). */
  readonly evictionSubresource?: boolean;
  /**
   * Served from a CustomResourceDefinition: list items keep apiVersion/kind, PUT requires
   * metadata.resourceVersion, and strategic merge patch is refused (415), as for real CRDs.
   */
  readonly custom: boolean;
  /** Field selector paths beyond metadata.name and metadata.namespace. */
  readonly fieldSelectors: readonly string[];
  /** Server-side changes on create (defaults, initial status). Mutates its argument. */
  readonly prepareForCreate?: (obj: KubeObject) => void;
  /** Returns a validation message (answered as 422 Invalid) or undefined. */
  readonly validateUpdate?: (old: KubeObject, next: KubeObject) => string | undefined;
  /** Checks every version written (create, update, status): the problems, answered as 422. */
  readonly validate?: (obj: KubeObject) => string[];
}

export type ResourceOptions = ResourceRef &
  Partial<Omit<ResourceDef, keyof ResourceRef>> & {
    readonly kind: string;
  };

/** One-line registration: defineResource({ group, version, resource, kind, ...overrides }). */
export function defineResource(options: ResourceOptions): ResourceDef {
  return {
    namespaced: true,
    statusSubresource: false,
    custom: false,
    fieldSelectors: [],
    ...options,
  };
}

export function apiVersionOf(ref: ResourceRef): string {
  return ref.group === '' ? ref.version : `${ref.group}/${ref.version}`;
}

export function sameResource(a: ResourceRef, b: ResourceRef): boolean {
  return a.group === b.group && a.version === b.version && a.resource === b.resource;
}

export function resourceId(ref: ResourceRef): string {
  return `${ref.group}/${ref.version}/${ref.resource}`;
}

export const PODS: ResourceRef = { group: '', version: 'v1', resource: 'pods' };
export const NAMESPACES: ResourceRef = { group: '', version: 'v1', resource: 'namespaces' };
export const EVENTS: ResourceRef = { group: '', version: 'v1', resource: 'events' };
export const EVENTS_V1: ResourceRef = { group: 'events.k8s.io', version: 'v1', resource: 'events' };
export const CONFIGMAPS: ResourceRef = { group: '', version: 'v1', resource: 'configmaps' };
export const LEASES: ResourceRef = {
  group: 'coordination.k8s.io',
  version: 'v1',
  resource: 'leases',
};
export const CONTROLLER_REVISIONS: ResourceRef = {
  group: 'apps',
  version: 'v1',
  resource: 'controllerrevisions',
};
export const PODDISRUPTIONBUDGETS: ResourceRef = {
  group: 'policy',
  version: 'v1',
  resource: 'poddisruptionbudgets',
};
export const SIDECARSETS: ResourceRef = {
  group: 'apps.kruise.io',
  version: 'v1beta1',
  resource: 'sidecarsets',
};

const POD_MUTABLE_SPEC =
  'spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,' +
  '`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions' +
  ' to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it' +
  ' was previously negative)';

/** The pod spec with the fields an update may change blanked out, to compare old with new. */
function immutablePodSpec(pod: KubeObject): JsonObject {
  const spec = isJsonObject(pod['spec']) ? clone(pod['spec']) : {};
  for (const list of ['containers', 'initContainers']) {
    const containers = spec[list];
    if (!Array.isArray(containers)) continue;
    for (const container of containers) {
      if (isJsonObject(container)) delete container['image'];
    }
  }
  // Tolerations may only grow in reality; the fake accepts any change there.
  for (const field of ['activeDeadlineSeconds', 'tolerations', 'terminationGracePeriodSeconds']) {
    delete spec[field];
  }
  delete spec['schedulingGates'];
  return spec;
}

function validatePodUpdate(old: KubeObject, next: KubeObject): string | undefined {
  return jsonEqual(immutablePodSpec(old), immutablePodSpec(next)) ? undefined : POD_MUTABLE_SPEC;
}

function preparePod(pod: KubeObject): void {
  pod['status'] = { phase: 'Pending' };
}

const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

function prepareNamespace(ns: KubeObject): void {
  ns.metadata.labels = { ...ns.metadata.labels, [NAMESPACE_NAME_LABEL]: ns.metadata.name ?? '' };
  ns['spec'] = { finalizers: ['kubernetes'] };
  ns['status'] = { phase: 'Active' };
}

function validateNamespaceUpdate(old: KubeObject, next: KubeObject): string | undefined {
  const label = next.metadata.labels?.[NAMESPACE_NAME_LABEL];
  return label === undefined || label === old.metadata.name
    ? undefined
    : `metadata.labels: Invalid value: "${label}": must be the namespace name`;
}

export const DEFAULT_RESOURCES: readonly ResourceDef[] = [
  defineResource({
    ...PODS,
    kind: 'Pod',
    statusSubresource: true,
    resizeSubresource: true,
    evictionSubresource: true,
    fieldSelectors: [
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'status.phase',
      'status.podIP',
      'status.nominatedNodeName',
    ],
    prepareForCreate: preparePod,
    validateUpdate: validatePodUpdate,
  }),
  defineResource({
    ...NAMESPACES,
    kind: 'Namespace',
    namespaced: false,
    statusSubresource: true,
    fieldSelectors: ['status.phase'],
    prepareForCreate: prepareNamespace,
    validateUpdate: validateNamespaceUpdate,
  }),
  defineResource({
    ...EVENTS,
    kind: 'Event',
    fieldSelectors: [
      'involvedObject.kind',
      'involvedObject.namespace',
      'involvedObject.name',
      'involvedObject.uid',
      'involvedObject.apiVersion',
      'involvedObject.resourceVersion',
      'involvedObject.fieldPath',
      'reason',
      'reportingComponent',
      'type',
    ],
  }),
  defineResource({ ...EVENTS_V1, kind: 'Event', fieldSelectors: ['reason', 'type'] }),
  defineResource({ ...CONFIGMAPS, kind: 'ConfigMap' }),
  defineResource({ ...LEASES, kind: 'Lease' }),
  defineResource({ ...CONTROLLER_REVISIONS, kind: 'ControllerRevision' }),
  defineResource({
    ...PODDISRUPTIONBUDGETS,
    kind: 'PodDisruptionBudget',
    statusSubresource: true,
  }),
  defineResource({
    ...SIDECARSETS,
    kind: 'SidecarSet',
    namespaced: false,
    statusSubresource: true,
    custom: true,
    validate: crdValidator(
      new URL('../../manifests/base/crd/apps.kruise.io_sidecarsets.yaml', import.meta.url),
      SIDECARSETS.version,
    ),
  }),
];
