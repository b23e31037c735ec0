/** Hand-made defaulted SidecarSets for validation tests (the defaulter is not a dependency). */
import type {
  SidecarContainer,
  SidecarSet,
  SidecarSetSpec,
} from '../../../src/core/api/sidecarset-types.js';

export function sidecar(name: string, extra: Partial<SidecarContainer> = {}): SidecarContainer {
  return {
    name,
    image: `${name}:1.0`,
    imagePullPolicy: 'IfNotPresent',
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    podInjectPolicy: 'BeforeAppContainer',
    upgradeStrategy: { upgradeType: 'ColdUpgrade' },
    shareVolumePolicy: { type: 'disabled' },
    ...extra,
  };
}

export function initSidecar(name: string, extra: Partial<SidecarContainer> = {}): SidecarContainer {
  return sidecar(name, { podInjectPolicy: 'AfterAppContainer', ...extra });
}

/** A valid defaulted SidecarSet; `spec` fields replace the defaults. */
export function makeSidecarSet(name: string, spec: Partial<SidecarSetSpec> = {}): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: 'nginx' } },
      containers: [sidecar('sidecar1')],
      updateStrategy: { type: 'RollingUpdate', partition: 0, maxUnavailable: 1 },
      revisionHistoryLimit: 10,
      ...spec,
    },
  };
}

/** Simple defaults for the example manifests (what defaultSidecarSet does, for these inputs). */
export function defaultForTest(raw: SidecarSet): SidecarSet {
  const ss = structuredClone(raw);
  const s = ss.spec;
  s.updateStrategy = {
    type: 'RollingUpdate',
    partition: 0,
    maxUnavailable: 1,
    ...s.updateStrategy,
  };
  s.revisionHistoryLimit ??= 10;
  const fill = (c: SidecarContainer, policy: string): void => {
    c.podInjectPolicy ??= policy;
    c.upgradeStrategy ??= { upgradeType: 'ColdUpgrade' };
    c.shareVolumePolicy ??= { type: 'disabled' };
    c.imagePullPolicy ??= 'IfNotPresent';
    c.terminationMessagePath ??= '/dev/termination-log';
    c.terminationMessagePolicy ??= 'File';
    for (const probe of [c.livenessProbe, c.readinessProbe]) {
      if (probe === undefined) continue;
      probe['timeoutSeconds'] ??= 1;
      probe['periodSeconds'] ??= 10;
      probe['successThreshold'] ??= 1;
      probe['failureThreshold'] ??= 3;
    }
  };
  for (const c of s.containers ?? []) fill(c, 'BeforeAppContainer');
  for (const c of s.initContainers ?? []) fill(c, 'AfterAppContainer');
  return ss;
}

/** A SidecarSet document whose resourcesPolicy leaves targetContainersNameRegex to its default. */
export const RESOURCES_POLICY_WITHOUT_REGEX = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: 'sized' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    containers: [
      {
        name: 'agent',
        image: 'agent:1',
        resourcesPolicy: {
          targetContainersMode: 'sum',
          resourcesExpr: { limits: { cpu: 'cpu * 10%' } },
        },
      },
    ],
  },
} as const;
