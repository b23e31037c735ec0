/**
 * The SidecarSet admission webhooks on v1beta1 reviews: defaulted and hashed as v1alpha1 is, to
 * the same hashes, patched in v1beta1 terms, and validated with v1beta1's fields.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import jsonPatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';

import {
  decideSidecarSetMutation,
  decideSidecarSetValidation,
} from '../../../src/core/admission/sidecarset-webhooks.js';
import { parseAdmissionReview } from '../../../src/core/admission/review.js';
import type { AdmissionRequest } from '../../../src/core/admission/review.js';
import { convertSidecarSet } from '../../../src/core/conversion/sidecarset-conversion.js';
import type { SidecarSet } from '../../../src/core/api/sidecarset-types.js';
import { sidecarSetReview } from '../../support/admission.js';

const KEPT_NAMESPACE = 'apps.kruise.io/sidecarset-v1alpha1-namespace';

function request(
  object: unknown,
  options: Parameters<typeof sidecarSetReview>[1] = {},
): AdmissionRequest {
  const parsed = parseAdmissionReview(sidecarSetReview(object, options));
  assert.ok(parsed.ok);
  return parsed.request;
}

function mutated(object: Record<string, unknown>): Record<string, unknown> {
  const decision = decideSidecarSetMutation(request(object));
  const patch = decision.response.patch;
  if (patch === undefined) return object;
  const ops = JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as Operation[];
  return jsonPatch.applyPatch(structuredClone(object), ops).newDocument;
}

const alpha = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: 'agent', labels: { 'apps.kruise.io/sidecarset-custom-version': 'v1' } },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    namespace: 'shop',
    containers: [{ name: 'agent', image: 'agent:1' }],
  },
};
const beta = convertSidecarSet(alpha, 'apps.kruise.io/v1beta1');

describe('the mutating webhook on v1beta1', () => {
  it('defaults and hashes to the same hashes as the v1alpha1 object, and keeps v1beta1 fields', () => {
    const fromAlpha = mutated(alpha) as unknown as SidecarSet;
    const fromBeta = mutated(beta) as unknown as SidecarSet;
    assert.equal(fromBeta.apiVersion, 'apps.kruise.io/v1beta1');
    assert.equal(fromBeta.spec.customVersion, 'v1');
    assert.equal(fromBeta.spec.namespace, undefined);
    for (const key of ['kruise.io/sidecarset-hash', 'kruise.io/sidecarset-hash-without-image']) {
      const annotations = fromBeta.metadata.annotations ?? {};
      assert.ok(annotations[key]);
      assert.equal(annotations[key], fromAlpha.metadata.annotations?.[key]);
    }
    assert.deepEqual(fromBeta.spec.containers, fromAlpha.spec.containers);
    // What v1beta1 stores reads back as what v1alpha1 stored.
    assert.deepEqual(convertSidecarSet(fromBeta, 'apps.kruise.io/v1alpha1'), fromAlpha);
  });

  it('drops the kept namespace once the namespaceSelector was edited in v1beta1', () => {
    const edited = structuredClone(beta);
    (edited['spec'] as Record<string, unknown>)['namespaceSelector'] = {
      matchLabels: { env: 'prod' },
    };
    const out = mutated(edited) as unknown as SidecarSet;
    assert.equal(out.metadata.annotations?.[KEPT_NAMESPACE], undefined);
    const unchanged = mutated(beta) as unknown as SidecarSet;
    assert.equal(unchanged.metadata.annotations?.[KEPT_NAMESPACE], 'shop');
  });

  it('refuses a version that is not served', () => {
    const review = sidecarSetReview(beta);
    const req = review['request'] as Record<string, Record<string, string>>;
    req['kind'] = { group: 'apps.kruise.io', version: 'v2', kind: 'SidecarSet' };
    const parsed = parseAdmissionReview(review);
    assert.ok(parsed.ok);
    const decision = decideSidecarSetMutation(parsed.request);
    assert.equal(decision.outcome, 'rejected');
    assert.match(
      decision.response.status?.message ?? '',
      /apps\.kruise\.io\/v2 is not served; use apps\.kruise\.io\/v1beta1 or apps\.kruise\.io\/v1alpha1/,
    );
  });
});

describe('the validating webhook on v1beta1', () => {
  const admitted = (object: Record<string, unknown>, others: SidecarSet[] = []) =>
    decideSidecarSetValidation(request(mutated(object)), others);

  it('admits the converted SidecarSet', () => {
    assert.equal(admitted(beta).outcome, 'allowed');
  });

  it('refuses spec.namespace (a v1alpha1 field) by the schema', () => {
    const bad = structuredClone(beta);
    (bad['spec'] as Record<string, unknown>)['namespace'] = 'shop';
    const decision = admitted(bad);
    assert.equal(decision.outcome, 'rejected');
    assert.match(
      decision.response.status?.message ?? '',
      /spec\.namespace: Forbidden: unknown field/,
    );
  });

  it('refuses the v1alpha1 custom-version label, naming spec.customVersion', () => {
    const bad = structuredClone(beta) as { metadata: { labels?: Record<string, string> } };
    bad.metadata.labels = { 'apps.kruise.io/sidecarset-custom-version': 'v1' };
    const decision = admitted(bad);
    assert.equal(decision.outcome, 'rejected');
    assert.match(
      decision.response.status?.message ?? '',
      /metadata\.labels\[apps\.kruise\.io\/sidecarset-custom-version\]: Forbidden: in apps\.kruise\.io\/v1beta1 the custom version is spec\.customVersion/,
    );
  });

  it('refuses a spec.customVersion that cannot be a label value', () => {
    const bad = structuredClone(beta);
    (bad['spec'] as Record<string, unknown>)['customVersion'] = 'not a label value';
    const decision = admitted(bad);
    assert.equal(decision.outcome, 'rejected');
    assert.match(
      decision.response.status?.message ?? '',
      /spec\.customVersion: Invalid value: "not a label value"/,
    );
  });

  it('v1alpha1 refuses the annotation the conversion keeps the namespace in', () => {
    const bad = structuredClone(alpha) as { metadata: { annotations?: Record<string, string> } };
    bad.metadata.annotations = { [KEPT_NAMESPACE]: 'shop' };
    const decision = admitted(bad);
    assert.equal(decision.outcome, 'rejected');
    assert.match(
      decision.response.status?.message ?? '',
      /sidecarset-v1alpha1-namespace\]: Forbidden/,
    );
  });

  it('finds a conflict with a SidecarSet of the other version', () => {
    const other = mutated({
      ...alpha,
      metadata: { name: 'other' },
    }) as unknown as SidecarSet;
    const decision = admitted(beta, [other]);
    assert.equal(decision.outcome, 'rejected');
    assert.match(decision.response.status?.message ?? '', /container agent already exist in other/);
  });

  it('checks an UPDATE in v1beta1 against the old v1beta1 object', () => {
    const old = mutated(beta);
    const renamed = structuredClone(old);
    const [first] = (renamed['spec'] as { containers: { name: string }[] }).containers;
    assert.ok(first);
    first.name = 'renamed';
    const decision = decideSidecarSetValidation(
      request(renamed, { operation: 'UPDATE', oldObject: old }),
      [],
    );
    assert.equal(decision.outcome, 'rejected');
    assert.match(decision.response.status?.message ?? '', /container renamed is not found/);
  });
});
