/**
 * A one-sidecar SidecarSet in versions, and pods injected with it by the real injector, given the
 * status a kubelet reports: the ground for planner tests of changes beyond the image.
 */
import { withHashes } from '../../src/core/api/hash.js';
import { injectPod } from '../../src/core/inject/inject.js';
import type { Container, ContainerStatus, Pod } from '../../src/core/api/k8s-types.js';
import type { SidecarSet, SidecarSetUpdateStrategy } from '../../src/core/api/sidecarset-types.js';
import { revisionLookup } from '../../src/k8s/revisions.js';

export const now = new Date('2026-07-02T10:00:00Z');

export interface Version {
  image?: string;
  cpu?: string;
  memory?: string;
  env?: string;
  native?: boolean;
  strategy?: SidecarSetUpdateStrategy;
  annotations?: Record<string, string>;
}

export function sidecarSet(v: Version = {}): SidecarSet {
  const proxy: Container = {
    name: 'proxy',
    image: v.image ?? 'proxy:1',
    resources: { limits: { cpu: v.cpu ?? '100m', memory: v.memory ?? '64Mi' } },
    env: [{ name: 'MODE', value: v.env ?? 'a' }],
  };
  const spec: SidecarSet['spec'] = {
    selector: { matchLabels: { app: 'web' } },
    updateStrategy: { type: 'RollingUpdate', maxUnavailable: 2, ...v.strategy },
  };
  if (v.native === true) spec.initContainers = [{ ...proxy, restartPolicy: 'Always' }];
  else spec.containers = [proxy];
  return withHashes({
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'SidecarSet',
    metadata: { name: 'proxy-set', generation: 2, annotations: v.annotations ?? {} },
    spec,
  });
}

/** Requests default to limits, as the API server stores them. */
function stored(c: Container): Container {
  const limits = (c.resources?.['limits'] ?? {}) as Record<string, string>;
  return { ...c, resources: { limits, requests: { ...limits } } };
}

/** A pod injected with `ss`, running and ready, its statuses as a kubelet reports them. */
export function injected(i: number, ss: SidecarSet, labels: Record<string, string> = {}): Pod {
  const pod: Pod = {
    metadata: {
      name: `web-${i}`,
      namespace: 'default',
      uid: `uid-${i}`,
      labels: { app: 'web', ...labels },
      creationTimestamp: '2026-07-01T00:00:00Z',
    },
    spec: { containers: [{ name: 'app', image: 'app:1' }], nodeName: 'node-1' },
  };
  const out = injectPod(pod, [ss], { now, revisions: revisionLookup([]), random: () => 0 }).pod;
  out.spec.containers = out.spec.containers.map(stored);
  if (out.spec.initContainers !== undefined)
    out.spec.initContainers = out.spec.initContainers.map(stored);
  const status = (c: Container): ContainerStatus => ({
    name: c.name,
    image: c.image ?? '',
    imageID: `sha256:${c.image ?? ''}`,
    ready: true,
    restartCount: 0,
    resources: c.resources,
  });
  out.status = {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-07-01T00:01:00Z' }],
    containerStatuses: out.spec.containers.map(status),
    ...(out.spec.initContainers && { initContainerStatuses: out.spec.initContainers.map(status) }),
  };
  return out;
}

/** A pod injected with `ss` whose ReplicaSet (web-5d8f) recreates it. */
export function ownedPod(i: number, ss: SidecarSet, labels: Record<string, string> = {}): Pod {
  const pod = injected(i, ss, labels);
  pod.metadata.ownerReferences = [
    { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d8f', uid: 'rs-1', controller: true },
  ];
  return pod;
}
