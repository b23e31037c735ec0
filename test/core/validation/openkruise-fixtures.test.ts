/**
 * TestValidateSidecarSet (OpenKruise pkg/webhook/sidecarset/validating/sidecarset_validating_test.go)
 * with its fixtures as written there: SidecarSets that no defaulting webhook has seen. The same
 * cases with our defaulted fixtures are in sidecarset.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type {
  SidecarContainer,
  SidecarSet,
  SidecarSetRevision,
} from '../../../src/core/api/sidecarset-types.js';
import { formatFieldErrors } from '../../../src/core/validation/field-error.js';
import { validateSidecarSet } from '../../../src/core/validation/sidecarset.js';

const container = (extra: Partial<SidecarContainer> = {}): SidecarContainer => ({
  podInjectPolicy: 'BeforeAppContainer',
  shareVolumePolicy: { type: 'disabled' },
  upgradeStrategy: { upgradeType: 'ColdUpgrade' },
  name: 'test-sidecar',
  image: 'test-image',
  imagePullPolicy: 'IfNotPresent',
  terminationMessagePolicy: 'File',
  ...extra,
});
const sidecarSet = (spec: SidecarSet['spec']): SidecarSet => ({
  apiVersion: 'apps.kruise.io/v1beta1',
  kind: 'SidecarSet',
  metadata: { name: 'test-sidecarset' },
  spec,
});
const ab = { matchLabels: { a: 'b' } };
const notUpdate = { type: 'NotUpdate' };
const appTest = { matchLabels: { app: 'test' } };
const policy = (extra: object = {}): NonNullable<SidecarContainer['resourcesPolicy']> => ({
  targetContainersMode: 'sum',
  resourcesExpr: { limits: { cpu: 'cpu*50%' } },
  ...extra,
});
const notIn = (last: string) => ({
  matchLabels: { a: 'b' },
  matchExpressions: [{ key: 'app-name', operator: 'NotIn', values: ['app-group', last] }],
});
const shared = container({ shareVolumePolicy: { type: 'enabled' } });

const cases: [string, SidecarSet, number][] = [
  ['missing-selector', sidecarSet({ updateStrategy: notUpdate, containers: [container()] }), 1],
  [
    'wrong-updateStrategy',
    sidecarSet({
      selector: ab,
      updateStrategy: {
        type: 'RollingUpdate',
        scatterStrategy: [
          { key: 'key-1', value: 'value-1' },
          { key: 'key-1', value: 'value-1' },
        ],
      },
      containers: [container()],
    }),
    1,
  ],
  ['wrong-selector', sidecarSet({ selector: notIn('app-risk-'), containers: [shared] }), 2],
  [
    'wrong-namespaceSelector',
    sidecarSet({
      selector: notIn('app-risk'),
      namespaceSelector: notIn('app-risk-'),
      containers: [shared],
    }),
    2,
  ],
  [
    'wrong-namespace-selector',
    sidecarSet({ selector: notIn('app-risk'), namespaceSelector: ab, containers: [shared] }),
    0,
  ],
  [
    'wrong-initContainer',
    sidecarSet({
      selector: ab,
      updateStrategy: notUpdate,
      initContainers: [
        { name: 'test-sidecar', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' },
      ],
    }),
    1,
  ],
  ['missing-container', sidecarSet({ selector: ab, updateStrategy: notUpdate }), 1],
  [
    'wrong-containers',
    sidecarSet({
      selector: ab,
      updateStrategy: notUpdate,
      containers: [container({ shareVolumePolicy: {} })],
    }),
    1,
  ],
  [
    'wrong-volumes',
    sidecarSet({
      selector: ab,
      updateStrategy: notUpdate,
      containers: [container()],
      volumes: [
        { name: 'test-volume' },
        {
          name: 'istio-token',
          projected: {
            defaultMode: 420,
            sources: [
              {
                serviceAccountToken: {
                  audience: 'istio-ca',
                  expirationSeconds: 43200,
                  path: 'istio-token',
                },
              },
            ],
          },
        },
      ],
    }),
    1,
  ],
  [
    'wrong-volumeDevice-volumes',
    sidecarSet({
      selector: ab,
      updateStrategy: notUpdate,
      containers: [container({ volumeDevices: [{ name: 'disk0', devicePath: '/dev/nvme1' }] })],
    }),
    1,
  ],
  [
    'right-volumeDevice-volumes',
    sidecarSet({
      selector: ab,
      updateStrategy: notUpdate,
      containers: [container({ volumeDevices: [{ name: 'disk0', devicePath: '/dev/nvme1' }] })],
      volumes: [{ name: 'disk0', persistentVolumeClaim: { claimName: 'pvc-0' } }],
    }),
    0,
  ],
  [
    'volumeDevice-volumeMount-path-conflict',
    sidecarSet({
      selector: ab,
      updateStrategy: notUpdate,
      containers: [
        container({
          volumeDevices: [{ name: 'disk0', devicePath: '/home/admin/log' }],
          volumeMounts: [{ name: 'log', mountPath: '/home/admin/log' }],
        }),
      ],
      volumes: [
        { name: 'disk0', persistentVolumeClaim: { claimName: 'pvc-0' } },
        { name: 'log', emptyDir: {} },
      ],
    }),
    2,
  ],
  [
    'wrong-metadata',
    sidecarSet({
      selector: ab,
      updateStrategy: notUpdate,
      containers: [container()],
      patchPodMetadata: [
        { annotations: { key1: 'value1' }, patchPolicy: 'MergePatchJson' },
        { annotations: { key1: 'value1' }, patchPolicy: 'Overwrite' },
      ],
    }),
    1,
  ],
  [
    'wrong-name-injectionStrategy',
    sidecarSet({
      selector: ab,
      injectionStrategy: { revision: { customVersion: 'normal-sidecarset-01234' } },
      updateStrategy: notUpdate,
      containers: [container()],
    }),
    1,
  ],
  [
    'not-existing-injectionStrategy',
    sidecarSet({
      selector: ab,
      injectionStrategy: { revision: { revisionName: 'test-sidecarset-678235', policy: 'Always' } },
      updateStrategy: notUpdate,
      containers: [container()],
    }),
    1,
  ],
  [
    // OpenKruise: "The initContainer in-place upgrade is not currently supported." Ours upgrades
    // native sidecars in place (docs/adr/0022-resources-and-native-sidecars-in-place.md).
    'native sidecar under RollingUpdate',
    sidecarSet({
      selector: ab,
      updateStrategy: { type: 'RollingUpdate' },
      initContainers: [container({ restartPolicy: 'Always' })],
    }),
    0,
  ],
  [
    'resources-policy-and-resources-conflict',
    sidecarSet({
      selector: appTest,
      containers: [
        container({
          resources: { limits: { cpu: '100m', memory: '100Mi' } },
          resourcesPolicy: policy(),
        }),
      ],
    }),
    1,
  ],
  [
    'invalid-target-container-mode',
    sidecarSet({
      selector: appTest,
      containers: [container({ resourcesPolicy: policy({ targetContainersMode: 'invalid' }) })],
    }),
    1,
  ],
  [
    'initContainer-with-resources-policy-forbidden',
    sidecarSet({
      selector: appTest,
      initContainers: [
        container({
          name: 'test-init',
          resourcesPolicy: policy({ targetContainersNameRegex: '.*' }),
        }),
      ],
    }),
    1,
  ],
  [
    'native-sidecar-initContainer-with-resources-policy-allowed',
    sidecarSet({
      selector: appTest,
      updateStrategy: notUpdate,
      initContainers: [
        container({
          name: 'test-init',
          restartPolicy: 'Always',
          resourcesPolicy: policy({ targetContainersNameRegex: '.*' }),
        }),
      ],
    }),
    0,
  ],
];

const revisions: SidecarSetRevision[] = ['test-sidecarset-01234', 'test-sidecarset-56789'].map(
  (name, i) => ({ name, sidecarSetName: 'test-sidecarset', revision: i + 1, spec: {} }),
);

for (const [name, set, expected] of cases) {
  test(`TestValidateSidecarSet, OpenKruise's fixture: ${name}`, () => {
    const errors = validateSidecarSet(set, { others: [], revisions });
    assert.equal(errors.length, expected, formatFieldErrors(errors));
  });
}

// TestValidateResourcesPolicy (sidecarset_resources_policy_test.go), its policies as written there.
const withPolicy = (
  mode: string,
  regex: string,
  resourcesExpr: object,
  extra: Partial<SidecarContainer> = {},
): SidecarSet =>
  sidecarSet({
    selector: appTest,
    updateStrategy: notUpdate,
    containers: [
      container({
        resourcesPolicy: {
          targetContainersMode: mode,
          ...(regex === '' ? {} : { targetContainersNameRegex: regex }),
          resourcesExpr,
        },
        ...extra,
      }),
    ],
  });
const maxHalf = { cpu: 'max(cpu*50%, 50m)', memory: 'max(memory*50%, 100Mi)' };
const half = { limits: { cpu: 'cpu*50%' } };
const policyCases: [string, SidecarSet, number][] = [
  [
    'valid resources policy with sum mode and both limits and requests',
    withPolicy('sum', '^app.*$', { limits: maxHalf, requests: maxHalf }),
    0,
  ],
  ['valid resources policy with max mode and only limits', withPolicy('max', '^app.*$', half), 0],
  [
    'valid resources policy with only requests',
    withPolicy('sum', '.*', { requests: { cpu: 'max(cpu*50%, 50m)', memory: '100Mi' } }),
    0,
  ],
  ['valid resources policy with empty regex', withPolicy('sum', '', half), 1],
  [
    'resources policy and resources.limits both configured - should fail',
    withPolicy('sum', '', half, { resources: { limits: { cpu: '100m', memory: '100Mi' } } }),
    1,
  ],
  [
    'resources policy and resources.requests both configured - should fail',
    withPolicy('sum', '', half, { resources: { requests: { cpu: '50m' } } }),
    1,
  ],
  ['invalid regex pattern - should fail', withPolicy('sum', '[invalid(regex', half), 1],
  ['no limits and requests - should fail', withPolicy('sum', '^app.*$', {}), 1],
  [
    'invalid cpu expression - should fail',
    withPolicy('sum', '^app.*$', { limits: { cpu: 'invalid expression @#$' } }),
    1,
  ],
  [
    'unbalanced parentheses - should fail',
    withPolicy('sum', '^app.*$', { limits: { cpu: 'max(cpu*50%, 50m' } }),
    1,
  ],
  [
    'invalid function syntax - should fail',
    withPolicy('sum', '^app.*$', { limits: { cpu: 'max(cpu*50%)' } }),
    1,
  ],
  [
    'invalid variable name - should fail',
    withPolicy('sum', '^app.*$', { limits: { cpu: 'invalidvar * 50%' } }),
    1,
  ],
  [
    'valid complex expression from story 5',
    withPolicy('sum', '^app.*$', {
      limits: {
        cpu: '0.5*cpu - 0.3*max(0, cpu-4) + 0.3*max(0, cpu-8)',
        memory: 'max(memory*50%, 100Mi)',
      },
    }),
    0,
  ],
  ['valid with only cpu in limits', withPolicy('max', '^.*', half), 0],
  [
    'valid with only memory in limits',
    withPolicy('max', '^.*', { limits: { memory: 'memory*50%' } }),
    0,
  ],
  [
    'empty cpu expression in requests is valid',
    withPolicy('sum', '^.*', { requests: { memory: '100Mi' } }),
    0,
  ],
  [
    'invalid cpu expression in requests - should fail',
    withPolicy('sum', '^.*', { requests: { cpu: 'invalid_cpu_expr' } }),
    1,
  ],
  [
    'invalid memory expression in limits - should fail',
    withPolicy('sum', '^.*', { limits: { memory: 'bad_memory_expr' } }),
    1,
  ],
  [
    'invalid memory expression in requests - should fail',
    withPolicy('sum', '^.*', { requests: { memory: 'bad_memory_expr' } }),
    1,
  ],
];

// OpenKruise's errorContains: the message of each refused policy holds this.
const together = 'resourcesPolicy and resources cannot be configured together';
const errorContains: Record<string, string> = {
  'resources policy and resources.limits both configured - should fail': together,
  'resources policy and resources.requests both configured - should fail': together,
  'invalid regex pattern - should fail': 'invalid regex pattern',
  'no limits and requests - should fail': 'at least one of limits or requests must be configured',
};

for (const [name, set, expected] of policyCases) {
  test(`TestValidateResourcesPolicy: ${name}`, () => {
    const errors = validateSidecarSet(set, { others: [], revisions });
    assert.equal(errors.length, expected, formatFieldErrors(errors));
    if (expected === 0 || name === 'valid resources policy with empty regex') return;
    const contains = errorContains[name] ?? 'invalid expression';
    assert.ok(formatFieldErrors(errors).includes(contains), contains);
  });
}
