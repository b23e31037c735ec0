import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { reviewConversion } from '../../../src/core/conversion/conversion-review.js';
import {
  computeSidecarSetHash,
  computeSidecarSetHashWithoutImage,
} from '../../../src/core/api/hash.js';
import type { SidecarSetSpec } from '../../../src/core/api/sidecarset-types.js';

const alpha = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: 'one', labels: { 'apps.kruise.io/sidecarset-custom-version': 'v1' } },
  spec: { containers: [{ name: 'c', image: 'c:1' }] },
};

function conversionReview(request: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request };
}

describe('ConversionReview (/convert)', () => {
  it('converts every object to desiredAPIVersion, echoing the uid', () => {
    const outcome = reviewConversion(
      conversionReview({
        uid: 'u-1',
        desiredAPIVersion: 'apps.kruise.io/v1beta1',
        objects: [alpha, { ...alpha, metadata: { name: 'two' } }],
      }),
    );
    assert.ok(outcome.ok);
    assert.equal(outcome.converted, 2);
    assert.equal(outcome.review.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(outcome.review.kind, 'ConversionReview');
    assert.equal(outcome.review.response.uid, 'u-1');
    assert.deepEqual(outcome.review.response.result, { status: 'Success' });
    assert.deepEqual(outcome.review.response.convertedObjects, [
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'SidecarSet',
        metadata: { name: 'one' },
        spec: { containers: [{ name: 'c', image: 'c:1' }], customVersion: 'v1' },
      },
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'SidecarSet',
        metadata: { name: 'two' },
        spec: { containers: [{ name: 'c', image: 'c:1' }] },
      },
    ]);
  });

  it('answers Failure, with no objects, when one object cannot be converted', () => {
    for (const [objects, desired, message] of [
      [
        [alpha, { ...alpha, kind: 'Pod' }],
        'apps.kruise.io/v1beta1',
        /^objects\[1\] \(one\): cannot convert kind "Pod"$/,
      ],
      [
        [{ ...alpha, apiVersion: 'apps.kruise.io/v2' }],
        'apps.kruise.io/v1beta1',
        /cannot convert from apiVersion "apps.kruise.io\/v2"/,
      ],
      [[alpha], 'apps.kruise.io/v2', /cannot convert to apiVersion "apps.kruise.io\/v2"/],
      [['text'], 'apps.kruise.io/v1beta1', /^objects\[0\]: the object is not a JSON object$/],
      [{}, 'apps.kruise.io/v1beta1', /request\.objects is not a list/],
      [[alpha], undefined, /request\.desiredAPIVersion is missing/],
    ] as const) {
      const outcome = reviewConversion(
        conversionReview({ uid: 'u', desiredAPIVersion: desired, objects }),
      );
      assert.ok(outcome.ok);
      assert.equal(outcome.review.response.result.status, 'Failure');
      assert.match(outcome.review.response.result.message ?? '', message);
      assert.deepEqual(outcome.review.response.convertedObjects, []);
      assert.equal(outcome.review.response.uid, 'u');
    }
  });

  it('refuses what is not a ConversionReview it can answer', () => {
    for (const [body, message] of [
      ['x', /not a JSON object/],
      [
        { kind: 'AdmissionReview', apiVersion: 'apiextensions.k8s.io/v1' },
        /kind must be ConversionReview, not "AdmissionReview"/,
      ],
      [
        { kind: 'ConversionReview', apiVersion: 'apiextensions.k8s.io/v1beta1' },
        /apiVersion "apiextensions.k8s.io\/v1beta1" is not supported \(use apiextensions.k8s.io\/v1\)/,
      ],
      [{ kind: 'ConversionReview', apiVersion: 'apiextensions.k8s.io/v1' }, /has no request/],
      [
        conversionReview({ desiredAPIVersion: 'apps.kruise.io/v1beta1', objects: [] }),
        /request\.uid is missing/,
      ],
    ] as const) {
      const outcome = reviewConversion(body);
      assert.ok(!outcome.ok);
      assert.match(outcome.message, message);
    }
  });
});

/**
 * OpenKruise's TestSidecarSetHashV1beta1 and TestSidecarSetHashWithoutImageV1beta1
 * (pkg/control/sidecarcontrol/hash_test.go) expect the v1alpha1 values: a v1beta1 spec hashes as
 * the v1alpha1 one does.
 */
describe('hash: TestSidecarSetHashV1beta1 (the v1alpha1 values)', () => {
  const container = { name: 'container1', image: 'test-image' };
  const cases: [string, SidecarSetSpec, string, string | undefined][] = [
    [
      'containers',
      { containers: [container], customVersion: 'v2' },
      'w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78',
      undefined,
    ],
    [
      'containers and initContainers',
      { containers: [container], initContainers: [container] },
      'w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78',
      '8wzddb4dvv9c6x8zdc77z4z75987424f457dfv6724ddw6zbdx467wz5x24fc759',
    ],
    [
      'containers and initContainers with restartPolicy=Always',
      { containers: [container], initContainers: [{ ...container, restartPolicy: 'Always' }] },
      '4xwx4d4844vd4v9x79wb4xbxf4xb29475cc4446v8cz2c2f2f5c5bw448vd42z8w',
      '5725fw8bwbx249bw57v5892c847dzf48bww9zb7c86xb95264fdz26654847b2c8',
    ],
  ];
  for (const [name, spec, hash, withoutImage] of cases) {
    it(name, () => {
      assert.equal(computeSidecarSetHash(spec), hash);
      if (withoutImage !== undefined)
        assert.equal(computeSidecarSetHashWithoutImage(spec), withoutImage);
      const changed = { ...spec, containers: [{ ...container, image: 'new-image' }] };
      assert.notEqual(computeSidecarSetHash(changed), hash);
    });
  }
});
