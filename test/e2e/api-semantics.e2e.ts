/**
 * The API server behaviour our code depends on (test/scenarios/api-semantics.ts), on a real
 * kube-apiserver with the SidecarSet CRD and no webhooks. The fake runs the same checks in
 * test/fake-apiserver/api-semantics.test.ts.
 */
import { before, describe } from 'node:test';

import { apiSemantics } from '../scenarios/api-semantics.js';
import { applyCrd } from './apply-crd.js';
import { useControlPlane } from './support.js';

const crd = new URL('../../manifests/base/crd/apps.kruise.io_sidecarsets.yaml', import.meta.url)
  .pathname;

describe('API semantics on a real API server', () => {
  const { plane } = useControlPlane();
  before(() => applyCrd(plane(), crd));
  apiSemantics(() => ({
    kubeConfig: () => plane().kubeConfig(),
    createNamespace: (name) => plane().createNamespace(name),
  }));
});
