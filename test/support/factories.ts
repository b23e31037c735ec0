/** Builders for the plain objects the core takes, with only the fields a test cares about. */
import type { Container, Pod } from '../../src/core/api/k8s-types.js';
import type {
  SidecarContainer,
  SidecarSet,
  SidecarSetSpec,
} from '../../src/core/api/sidecarset-types.js';

export function makePod(
  overrides: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    containers?: Container[];
    initContainers?: Container[];
    spec?: Partial<Pod['spec']>;
  } = {},
): Pod {
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: overrides.name ?? 'pod-1',
      namespace: overrides.namespace ?? 'default',
      labels: overrides.labels ?? { app: 'web' },
    },
    spec: {
      containers: overrides.containers ?? [{ name: 'app', image: 'app:1' }],
      ...overrides.spec,
    },
  };
  if (overrides.annotations !== undefined) pod.metadata.annotations = overrides.annotations;
  if (overrides.initContainers !== undefined) pod.spec.initContainers = overrides.initContainers;
  return pod;
}

/** A sidecar container with the defaults the SidecarSet mutating webhook would set. */
export function sidecar(name: string, extra: Partial<SidecarContainer> = {}): SidecarContainer {
  return {
    name,
    image: `${name}:1`,
    podInjectPolicy: 'BeforeAppContainer',
    shareVolumePolicy: { type: 'disabled' },
    upgradeStrategy: { upgradeType: 'ColdUpgrade' },
    ...extra,
  };
}

export function makeSidecarSet(
  name: string,
  spec: Partial<SidecarSetSpec> = {},
  annotations: Record<string, string> = {},
): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: {
      name,
      annotations: {
        'kruise.io/sidecarset-hash': `${name}-hash`,
        'kruise.io/sidecarset-hash-without-image': `${name}-hash-noimg`,
        ...annotations,
      },
    },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [sidecar(`${name}-c`)],
      updateStrategy: { type: 'RollingUpdate', partition: 0, maxUnavailable: 1 },
      ...spec,
    },
  };
}

export const FIXED_NOW = new Date('2026-07-02T10:00:00.123Z');
