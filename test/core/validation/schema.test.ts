import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Ajv } from 'ajv';

import { formatFieldError } from '../../../src/core/validation/field-error.js';
import { validateSidecarSetSchema } from '../../../src/core/validation/sidecarset.js';
import {
  SIDECARSET_SCHEMA,
  SIDECARSET_SCHEMAS,
} from '../../../src/core/validation/sidecarset-schema.js';

const doc = (spec: object, extra: object = {}): object => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: 'x' },
  spec: {
    selector: { matchLabels: { app: 'a' } },
    containers: [{ name: 'c', image: 'i' }],
    ...spec,
  },
  ...extra,
});
const check = (v: unknown): string[] => validateSidecarSetSchema(v).map(formatFieldError);

test('a well-formed document passes', () => {
  assert.deepEqual(
    check(
      doc(
        { updateStrategy: { type: 'RollingUpdate', partition: '10%', maxUnavailable: 2 } },
        { status: {} },
      ),
    ),
    [],
  );
  assert.equal(SIDECARSET_SCHEMA.properties.kind.const, 'SidecarSet');
});

test("each version's schema is valid JSON Schema (the validator skips this check at start-up)", () => {
  const ajv = new Ajv();
  ajv.addVocabulary(['x-kubernetes-int-or-string', 'x-kubernetes-preserve-unknown-fields']);
  for (const schema of Object.values(SIDECARSET_SCHEMAS)) {
    assert.equal(ajv.validateSchema(schema), true, JSON.stringify(ajv.errors));
  }
  assert.equal(ajv.validateSchema({ type: 'no-such-type' }), false);
});

test('shape errors with dotted paths', () => {
  assert.deepEqual(check({}), [
    'apiVersion: Required value',
    'kind: Required value',
    'metadata: Required value',
    'spec: Required value',
  ]);
  assert.deepEqual(check(doc({}, { apiVersion: 'v1', kind: 'Pod', metadata: { name: '' } })), [
    'apiVersion: Unsupported value: "v1": supported values: "apps.kruise.io/v1beta1", "apps.kruise.io/v1alpha1"',
    'kind: Unsupported value: "Pod": supported values: "SidecarSet"',
    'metadata.name: Required value',
  ]);
  assert.deepEqual(
    check(
      doc({
        bogus: 1,
        updateStrategy: { type: 'Sometimes', partition: true },
        containers: [
          {
            image: 'i',
            podInjectPolicy: 'Middle',
            upgradeStrategy: { upgradeType: 'Cold', extra: 1 },
          },
        ],
        revisionHistoryLimit: 'ten',
        patchPodMetadata: [{ annotations: { 'a/b': 1 } }],
      }),
    ),
    [
      'spec.bogus: Forbidden: unknown field',
      'spec.containers[0].name: Required value',
      'spec.containers[0].podInjectPolicy: Unsupported value: "Middle": supported values: "BeforeAppContainer", "AfterAppContainer"',
      'spec.containers[0].upgradeStrategy.extra: Forbidden: unknown field',
      'spec.containers[0].upgradeStrategy.upgradeType: Unsupported value: "Cold": supported values: "ColdUpgrade", "HotUpgrade"',
      'spec.updateStrategy.type: Unsupported value: "Sometimes": supported values: "RollingUpdate", "NotUpdate"',
      'spec.updateStrategy.partition: Invalid value: true: must be an integer or a string',
      'spec.revisionHistoryLimit: Invalid value: "ten": must be of type integer',
      'spec.patchPodMetadata[0].annotations[a/b]: Invalid value: 1: must be of type string',
    ],
  );
  assert.deepEqual(
    check(
      doc({
        containers: [{ name: 'c', resourcesPolicy: { targetContainersMode: 'sum' }, ports: 'x' }],
      }),
    ),
    ['spec.containers[0].ports: Invalid value: "x": must be of type array'],
  );
  assert.deepEqual(
    check(
      doc({
        selector: {
          matchLabels: { a: 'b' },
          matchExpressions: [{ key: 'a', operator: 'In', values: [1] }],
        },
      }),
    ),
    ['spec.selector.matchExpressions[0].values[0]: Invalid value: 1: must be of type string'],
  );
  // In the CRD too: stored while the webhook is not called, it would fail every pod's admission.
  assert.deepEqual(
    check(
      doc({
        selector: { matchExpressions: [{ key: 'a', operator: 'Near', values: ['x'] }] },
        namespaceSelector: { matchExpressions: [{ key: 'b', operator: 'exists' }] },
      }),
    ),
    [
      'spec.selector.matchExpressions[0].operator: Unsupported value: "Near": supported values: "In", "NotIn", "Exists", "DoesNotExist"',
      'spec.namespaceSelector.matchExpressions[0].operator: Unsupported value: "exists": supported values: "In", "NotIn", "Exists", "DoesNotExist"',
    ],
  );
  assert.deepEqual(check(doc({ volumes: [{ name: 'v', emptyDir: {} }, { hostPath: {} }] })), [
    'spec.volumes[1].name: Required value',
  ]);
  assert.deepEqual(check(null), [': Invalid value: null: must be of type object']);
});

test('v1beta1: spec.customVersion, no spec.namespace; each version its own fields', () => {
  const beta = (spec: object): object => ({
    ...doc(spec),
    apiVersion: 'apps.kruise.io/v1beta1',
  });
  assert.deepEqual(
    check(beta({ customVersion: 'v2', namespaceSelector: { matchLabels: {} } })),
    [],
  );
  assert.deepEqual(check(beta({ namespace: 'shop' })), [
    'spec.namespace: Forbidden: unknown field',
  ]);
  assert.deepEqual(check(doc({ customVersion: 'v2' })), [
    'spec.customVersion: Forbidden: unknown field',
  ]);
  assert.deepEqual(check(doc({ namespace: 'shop' })), []);
});
