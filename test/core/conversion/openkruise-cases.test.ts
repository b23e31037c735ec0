/**
 * OpenKruise's SidecarSet conversion cases (apis/apps/v1alpha1/conversion_test.go,
 * TestSidecarSet_ConvertTo and TestSidecarSet_ConvertFrom), rewritten as JSON documents. Go's
 * zero values (an empty upgradeStrategy, paused: false) are what the JSON leaves out.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { convertSidecarSet } from '../../../src/core/conversion/sidecarset-conversion.js';

const A = 'apps.kruise.io/v1alpha1';
const B = 'apps.kruise.io/v1beta1';

type Doc = Record<string, unknown>;

const doc = (apiVersion: string, metadata: Doc, spec: Doc, status?: Doc): Doc => ({
  apiVersion,
  kind: 'SidecarSet',
  metadata,
  spec,
  ...(status ? { status } : {}),
});

/** The fields both versions share in the "all fields populated" cases. */
function sharedSpec(): Doc {
  return {
    selector: { matchLabels: { app: 'nginx' } },
    initContainers: [
      {
        name: 'init-sidecar',
        image: 'init:latest',
        podInjectPolicy: 'BeforeAppContainer',
        upgradeStrategy: { upgradeType: 'ColdUpgrade' },
        shareVolumePolicy: { type: 'enabled' },
        transferEnv: [{ sourceContainerName: 'app', envName: 'APP_ENV' }],
      },
    ],
    containers: [
      {
        name: 'sidecar',
        image: 'sidecar:latest',
        podInjectPolicy: 'AfterAppContainer',
        upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:latest' },
        shareVolumePolicy: { type: 'disabled' },
        shareVolumeDevicePolicy: { type: 'enabled' },
        transferEnv: [{ sourceContainerName: 'main', envNames: ['ENV1', 'ENV2'] }],
      },
    ],
    volumes: [{ name: 'config-volume', emptyDir: {} }],
    updateStrategy: {
      type: 'RollingUpdate',
      selector: { matchLabels: { update: 'true' } },
      partition: '30%',
      maxUnavailable: '20%',
      scatterStrategy: [{ key: 'zone', value: 'us-west' }],
    },
    injectionStrategy: {
      revision: { customVersion: 'v1.0', revisionName: 'test-revision', policy: 'Always' },
    },
    imagePullSecrets: [{ name: 'my-secret' }],
    revisionHistoryLimit: 5,
    patchPodMetadata: [{ annotations: { key: 'value' }, patchPolicy: 'Overwrite' }],
  };
}

const STATUS = {
  observedGeneration: 1,
  matchedPods: 10,
  updatedPods: 8,
  readyPods: 9,
  updatedReadyPods: 7,
  latestRevision: 'test-revision-1',
  collisionCount: 0,
};

function withResourcesPolicy(policy: Doc, list = 'containers', restartPolicy?: string): Doc {
  const container: Doc = { name: 'sidecar', image: 'sidecar:latest', resourcesPolicy: policy };
  if (restartPolicy !== undefined) container['restartPolicy'] = restartPolicy;
  return { selector: { matchLabels: { app: 'test' } }, [list]: [container] };
}

/** The resourcesPolicy cases: the same in both versions, in both directions. */
const RESOURCES_POLICY_CASES: [string, Doc][] = [
  [
    'sum mode and full expressions',
    withResourcesPolicy({
      targetContainersMode: 'sum',
      targetContainersNameRegex: '^large-engine-v.*$',
      resourcesExpr: {
        limits: { cpu: 'max(cpu*50%, 50m)', memory: '200Mi' },
        requests: { cpu: 'max(cpu*50%, 50m)', memory: '100Mi' },
      },
    }),
  ],
  [
    'max mode',
    withResourcesPolicy({
      targetContainersMode: 'max',
      targetContainersNameRegex: '.*',
      resourcesExpr: {
        limits: { cpu: 'cpu*30%', memory: 'memory*25%' },
        requests: { cpu: 'cpu*20%', memory: 'memory*15%' },
      },
    }),
  ],
  [
    'only limits',
    withResourcesPolicy({
      targetContainersMode: 'sum',
      targetContainersNameRegex: '^app.*$',
      resourcesExpr: {
        limits: { cpu: 'cpu*50% + 100m', memory: 'max(memory*20% + 100Mi, 200Mi)' },
      },
    }),
  ],
  [
    'only requests',
    withResourcesPolicy({
      targetContainersMode: 'max',
      targetContainersNameRegex: '.*',
      resourcesExpr: { requests: { cpu: 'cpu*30% + 50m', memory: 'memory*15% + 50Mi' } },
    }),
  ],
  [
    'in an init container',
    withResourcesPolicy(
      {
        targetContainersMode: 'sum',
        targetContainersNameRegex: '.*',
        resourcesExpr: { limits: { cpu: 'cpu*50%' }, requests: { cpu: 'cpu*25%' } },
      },
      'initContainers',
      'Always',
    ),
  ],
  [
    'none',
    {
      selector: { matchLabels: { app: 'test' } },
      containers: [{ name: 'sidecar', image: 'sidecar:latest' }],
    },
  ],
];

describe('OpenKruise TestSidecarSet_ConvertTo (v1alpha1 → v1beta1)', () => {
  it('all fields populated: the namespace wins over the namespaceSelector', () => {
    const from = doc(
      A,
      {
        name: 'test-sidecarset',
        labels: { app: 'test', 'apps.kruise.io/sidecarset-custom-version': 'v1.0' },
      },
      {
        ...sharedSpec(),
        namespace: 'test-namespace',
        namespaceSelector: { matchLabels: { env: 'prod' } },
      },
      STATUS,
    );
    const to = convertSidecarSet(from, B);
    assert.deepEqual(
      to,
      doc(
        B,
        {
          name: 'test-sidecarset',
          labels: { app: 'test' },
          // Ours: where v1alpha1's namespace is kept (docs/adr/0015).
          annotations: { 'apps.kruise.io/sidecarset-v1alpha1-namespace': 'test-namespace' },
        },
        {
          ...sharedSpec(),
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'test-namespace' } },
          customVersion: 'v1.0',
        },
        STATUS,
      ),
    );
  });

  it('minimal fields', () => {
    const spec = {
      selector: { matchLabels: { app: 'test' } },
      containers: [{ name: 'sidecar', image: 'sidecar:latest' }],
    };
    const status = { matchedPods: 5 };
    assert.deepEqual(
      convertSidecarSet(doc(A, { name: 'minimal-sidecarset' }, spec, status), B),
      doc(B, { name: 'minimal-sidecarset' }, spec, status),
    );
  });

  it('namespace only', () => {
    const containers = [{ name: 'sidecar', image: 'sidecar:latest' }];
    assert.deepEqual(
      convertSidecarSet(
        doc(A, { name: 'namespace-only' }, { namespace: 'test-ns', containers }),
        B,
      ),
      doc(
        B,
        {
          name: 'namespace-only',
          annotations: { 'apps.kruise.io/sidecarset-v1alpha1-namespace': 'test-ns' },
        },
        {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'test-ns' } },
          containers,
        },
      ),
    );
  });

  it('namespaceSelector only', () => {
    const spec = {
      namespaceSelector: { matchLabels: { env: 'dev' } },
      containers: [{ name: 'sidecar', image: 'sidecar:latest' }],
    };
    assert.deepEqual(
      convertSidecarSet(doc(A, { name: 'namespace-selector-only' }, spec), B),
      doc(B, { name: 'namespace-selector-only' }, spec),
    );
  });

  for (const [name, spec] of RESOURCES_POLICY_CASES) {
    it(`ResourcesPolicy: ${name}`, () => {
      assert.deepEqual(
        convertSidecarSet(doc(A, { name: 'rp' }, spec), B),
        doc(B, { name: 'rp' }, spec),
      );
    });
  }
});

describe('OpenKruise TestSidecarSet_ConvertFrom (v1beta1 → v1alpha1)', () => {
  it('all fields populated: customVersion becomes the label', () => {
    const spec = { ...sharedSpec(), namespaceSelector: { matchLabels: { env: 'prod' } } };
    const from = doc(
      B,
      { name: 'test-sidecarset', labels: { app: 'test' } },
      { ...spec, customVersion: 'v1.0' },
      STATUS,
    );
    assert.deepEqual(
      convertSidecarSet(from, A),
      doc(
        A,
        {
          name: 'test-sidecarset',
          labels: { app: 'test', 'apps.kruise.io/sidecarset-custom-version': 'v1.0' },
        },
        spec,
        STATUS,
      ),
    );
  });

  it('minimal fields', () => {
    const spec = {
      selector: { matchLabels: { app: 'test' } },
      containers: [{ name: 'sidecar', image: 'sidecar:latest' }],
    };
    assert.deepEqual(
      convertSidecarSet(doc(B, { name: 'minimal' }, spec, { matchedPods: 5 }), A),
      doc(A, { name: 'minimal' }, spec, { matchedPods: 5 }),
    );
  });

  it('a NamespaceSelector stays a namespaceSelector', () => {
    const spec = {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'specific-ns' } },
      containers: [{ name: 'sidecar', image: 'sidecar:latest' }],
    };
    assert.deepEqual(
      convertSidecarSet(doc(B, { name: 'specific-namespace' }, spec), A),
      doc(A, { name: 'specific-namespace' }, spec),
    );
  });

  it('nil NamespaceSelector', () => {
    const spec = { containers: [{ name: 'sidecar', image: 'sidecar:latest' }] };
    assert.deepEqual(
      convertSidecarSet(doc(B, { name: 'nil-specific-namespace' }, spec), A),
      doc(A, { name: 'nil-specific-namespace' }, spec),
    );
  });

  for (const [name, spec] of RESOURCES_POLICY_CASES) {
    it(`ResourcesPolicy: ${name}`, () => {
      assert.deepEqual(
        convertSidecarSet(doc(B, { name: 'rp' }, spec), A),
        doc(A, { name: 'rp' }, spec),
      );
    });
  }
});
