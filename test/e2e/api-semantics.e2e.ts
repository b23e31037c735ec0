/**
 * The API server behaviour our code depends on (test/scenarios/api-semantics.ts), on a real
 * kube-apiserver with the SidecarSet CRD and no webhooks. The fake runs the same checks in
 * test/fake-apiserver/api-semantics.test.ts.
 */
import assert from 'node:assert/strict';
import { before, describe } from 'node:test';

import { apiSemantics } from '../scenarios/api-semantics.js';
import { useControlPlane } from './support.js';

const crd = new URL('../../manifests/base/crd/apps.kruise.io_sidecarsets.yaml', import.meta.url)
  .pathname;

describe('API semantics on a real API server', () => {
  const { plane } = useControlPlane();
  before(async () => {
    const applied = await plane().kubectl(['apply', '-f', crd]);
    assert.equal(applied.code, 0, applied.stderr);
    const established = await plane().kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/sidecarsets.apps.kruise.io',
    ]);
    assert.equal(established.code, 0, established.stderr);
  });
  apiSemantics(() => ({
    kubeConfig: () => plane().kubeConfig(),
    createNamespace: (name) => plane().createNamespace(name),
  }));
});
