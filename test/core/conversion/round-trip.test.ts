/**
 * Conversion both ways over generated SidecarSets: v1alpha1 → v1beta1 → v1alpha1 and
 * v1beta1 → v1alpha1 → v1beta1 give the object back, and the hashes, the revision data and the
 * revision a SidecarSet is recorded in are the same in either version.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';

import {
  convertSidecarSet,
  dropStaleNamespaceAnnotation,
} from '../../../src/core/conversion/sidecarset-conversion.js';
import { customVersionOf } from '../../../src/core/api/custom-version.js';
import { applySidecarSetAdmission } from '../../../src/core/api/hash.js';
import { newRevision } from '../../../src/core/revisions/history.js';
import type { SidecarSet } from '../../../src/core/api/sidecarset-types.js';

const A = 'apps.kruise.io/v1alpha1';
const B = 'apps.kruise.io/v1beta1';
const CUSTOM = 'apps.kruise.io/sidecarset-custom-version';
const KEPT_NAMESPACE = 'apps.kruise.io/sidecarset-v1alpha1-namespace';

const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/);
const labels = fc.dictionary(name, name, { minKeys: 1, maxKeys: 3 });
const selector = fc.record({ matchLabels: labels }, { requiredKeys: [] });
const json = fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<unknown>;

const container = fc.record(
  {
    name,
    image: name,
    podInjectPolicy: fc.constantFrom('BeforeAppContainer', 'AfterAppContainer'),
    upgradeStrategy: fc.record({ upgradeType: fc.constantFrom('ColdUpgrade', 'HotUpgrade') }),
    shareVolumePolicy: fc.record({ type: fc.constantFrom('enabled', 'disabled') }),
    transferEnv: fc.array(fc.record({ sourceContainerName: name, envName: name }), {
      maxLength: 2,
    }),
    resourcesPolicy: fc.record({
      targetContainersMode: fc.constantFrom('sum', 'max'),
      resourcesExpr: fc.record({ limits: fc.record({ cpu: fc.constant('cpu*50%') }) }),
    }),
    restartPolicy: fc.constant('Always'),
  },
  { requiredKeys: ['name', 'image'] },
);

/** Every spec field both versions have. */
const sharedSpec = fc.record(
  {
    selector,
    containers: fc.array(container, { minLength: 1, maxLength: 2 }),
    initContainers: fc.array(container, { maxLength: 2 }),
    volumes: fc.array(fc.record({ name, emptyDir: fc.constant({}) }), { maxLength: 2 }),
    updateStrategy: fc.record(
      {
        type: fc.constantFrom('RollingUpdate', 'NotUpdate'),
        paused: fc.boolean(),
        partition: fc.oneof(fc.nat(10), fc.constant('20%')),
        maxUnavailable: fc.oneof(fc.nat(10), fc.constant('50%')),
        scatterStrategy: fc.array(fc.record({ key: name, value: name }), { maxLength: 2 }),
      },
      { requiredKeys: [] },
    ),
    injectionStrategy: fc.record(
      {
        paused: fc.boolean(),
        revision: fc.record({ customVersion: name, policy: fc.constantFrom('Always', 'Partial') }),
      },
      { requiredKeys: [] },
    ),
    imagePullSecrets: fc.array(fc.record({ name }), { maxLength: 2 }),
    revisionHistoryLimit: fc.nat(20),
    patchPodMetadata: fc.array(
      fc.record({ annotations: labels, patchPolicy: fc.constantFrom('Retain', 'Overwrite') }),
      { maxLength: 2 },
    ),
  },
  { requiredKeys: ['containers'] },
);

/** Status as it is, including fields neither version defines yet. */
const status = fc.record(
  {
    observedGeneration: fc.nat(),
    matchedPods: fc.nat(),
    latestRevision: name,
    collisionCount: fc.nat(),
    conditions: fc.array(fc.record({ type: name, status: fc.constantFrom('True', 'False') })),
    somethingNew: json,
  },
  { requiredKeys: [] },
);

const metadata = (extraLabels: fc.Arbitrary<Record<string, string>>) =>
  fc.record(
    {
      name,
      labels: extraLabels,
      annotations: labels,
      resourceVersion: fc.nat().map(String),
      uid: fc.uuid(),
    },
    { requiredKeys: ['name'] },
  );

/** v1alpha1: a namespace, a namespaceSelector or neither; the custom version in its label. */
const v1alpha1 = fc
  .record({
    metadata: metadata(labels),
    spec: sharedSpec,
    scope: fc.oneof(
      fc.constant({}),
      name.map((namespace) => ({ namespace })),
      selector.map((namespaceSelector) => ({ namespaceSelector })),
    ),
    customVersion: fc.option(name, { nil: undefined }),
    status: fc.option(status, { nil: undefined }),
  })
  .map(({ metadata: meta, spec, scope, customVersion, status: st }) => {
    const m = { ...meta };
    if (customVersion !== undefined) m.labels = { ...m.labels, [CUSTOM]: customVersion };
    return {
      apiVersion: A,
      kind: 'SidecarSet',
      metadata: m,
      spec: { ...spec, ...scope },
      ...(st ? { status: st } : {}),
    };
  })
  .map(asJson);

/** v1beta1: a namespaceSelector (possibly one a v1alpha1 namespace became), spec.customVersion. */
const v1beta1 = fc
  .record({
    metadata: metadata(labels),
    spec: sharedSpec,
    scope: fc.oneof(
      fc.constant({ spec: {} }),
      selector.map((namespaceSelector) => ({ spec: { namespaceSelector } })),
      name.map((ns) => ({
        spec: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } },
        annotations: { [KEPT_NAMESPACE]: ns },
      })),
    ),
    customVersion: fc.option(name, { nil: undefined }),
    status: fc.option(status, { nil: undefined }),
  })
  .map(({ metadata: meta, spec, scope, customVersion, status: st }) => {
    const m = { ...meta };
    if ('annotations' in scope) m.annotations = { ...m.annotations, ...scope.annotations };
    return {
      apiVersion: B,
      kind: 'SidecarSet',
      metadata: m,
      spec: { ...spec, ...scope.spec, ...(customVersion ? { customVersion } : {}) },
      ...(st ? { status: st } : {}),
    };
  })
  .map(asJson);

/** As a JSON body parses (fast-check makes some objects without a prototype). */
function asJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

const asSidecarSet = (doc: Record<string, unknown>): SidecarSet => doc as unknown as SidecarSet;

describe('conversion round trips over generated SidecarSets', () => {
  it('v1alpha1 → v1beta1 → v1alpha1 gives the object back', () => {
    fc.assert(
      fc.property(v1alpha1, (doc) => {
        const beta = convertSidecarSet(doc, B);
        assert.equal(beta['apiVersion'], B);
        assert.deepEqual(convertSidecarSet(beta, A), doc);
      }),
    );
  });

  it('v1beta1 → v1alpha1 → v1beta1 gives the object back', () => {
    fc.assert(
      fc.property(v1beta1, (doc) => {
        const alpha = convertSidecarSet(doc, A);
        assert.equal(alpha['apiVersion'], A);
        assert.deepEqual(convertSidecarSet(alpha, B), doc);
      }),
    );
  });

  it('either version admits to the same hashes, revision and custom version', () => {
    fc.assert(
      fc.property(fc.oneof(v1alpha1, v1beta1), (doc) => {
        const other = convertSidecarSet(doc, doc.apiVersion === A ? B : A);
        const one = applySidecarSetAdmission(asSidecarSet(doc));
        const two = applySidecarSetAdmission(asSidecarSet(other));
        for (const key of [
          'kruise.io/sidecarset-hash',
          'kruise.io/sidecarset-hash-without-image',
        ]) {
          assert.equal(one.metadata.annotations?.[key], two.metadata.annotations?.[key], key);
        }
        assert.equal(customVersionOf(one), customVersionOf(two));
        const r1 = newRevision(one, 1, 0);
        const r2 = newRevision(two, 1, 0);
        assert.equal(r1.data, r2.data);
        assert.equal(r1.name, r2.name);
        assert.equal(r1.labels[CUSTOM], r2.labels[CUSTOM]);
      }),
    );
  });

  it('a converted object is a copy: the input is not changed', () => {
    fc.assert(
      fc.property(fc.oneof(v1alpha1, v1beta1), (doc) => {
        const before = structuredClone(doc);
        convertSidecarSet(doc, doc.apiVersion === A ? B : A);
        assert.deepEqual(doc, before);
      }),
    );
  });
});

describe('what one version cannot say', () => {
  const containers = [{ name: 'c', image: 'c' }];

  it('v1alpha1 with namespace and namespaceSelector (refused by validation): the namespace wins', () => {
    const doc = {
      apiVersion: A,
      kind: 'SidecarSet',
      metadata: { name: 's' },
      spec: { namespace: 'ns', namespaceSelector: { matchLabels: { a: 'b' } }, containers },
    };
    const beta = convertSidecarSet(doc, B);
    assert.deepEqual(beta['spec'], {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ns' } },
      containers,
    });
    assert.deepEqual(
      (convertSidecarSet(beta, A)['spec'] as Record<string, unknown>)['namespace'],
      'ns',
    );
  });

  it('a namespaceSelector edited in v1beta1 is no longer read back as the namespace', () => {
    const beta = {
      apiVersion: B,
      kind: 'SidecarSet',
      metadata: { name: 's', annotations: { [KEPT_NAMESPACE]: 'ns' } },
      spec: { namespaceSelector: { matchLabels: { env: 'prod' } }, containers },
    };
    assert.deepEqual(convertSidecarSet(beta, A), {
      apiVersion: A,
      kind: 'SidecarSet',
      metadata: { name: 's' },
      spec: { namespaceSelector: { matchLabels: { env: 'prod' } }, containers },
    });
    const cleaned = dropStaleNamespaceAnnotation(asSidecarSet(beta));
    assert.equal(cleaned.metadata.annotations, undefined);
    const kept = {
      ...beta,
      spec: {
        ...beta.spec,
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ns' } },
      },
    };
    assert.equal(dropStaleNamespaceAnnotation(asSidecarSet(kept)), kept);
    const alpha = asSidecarSet({ ...beta, apiVersion: A });
    assert.equal(dropStaleNamespaceAnnotation(alpha), alpha, 'v1alpha1 is left alone');
    const other = asSidecarSet({
      ...beta,
      metadata: { name: 's', annotations: { [KEPT_NAMESPACE]: 'ns', x: 'y' } },
    });
    assert.deepEqual(dropStaleNamespaceAnnotation(other).metadata.annotations, { x: 'y' });
  });

  it('an empty custom-version label names no version and is dropped, as in OpenKruise', () => {
    const doc = {
      apiVersion: A,
      kind: 'SidecarSet',
      metadata: { name: 's', labels: { [CUSTOM]: '' } },
      spec: { containers },
    };
    assert.deepEqual(convertSidecarSet(doc, B), {
      apiVersion: B,
      kind: 'SidecarSet',
      metadata: { name: 's' },
      spec: { containers },
    });
  });

  it('converting to the version it already is copies it', () => {
    const doc = {
      apiVersion: B,
      kind: 'SidecarSet',
      metadata: { name: 's' },
      spec: { containers, customVersion: 'v' },
    };
    const same = convertSidecarSet(doc, B);
    assert.deepEqual(same, doc);
    assert.notEqual(same, doc);
  });

  it('no spec or metadata: none is made up', () => {
    assert.deepEqual(convertSidecarSet({ apiVersion: A, kind: 'SidecarSet' }, B), {
      apiVersion: B,
      kind: 'SidecarSet',
    });
  });
});
