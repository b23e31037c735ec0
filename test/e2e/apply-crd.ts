import assert from 'node:assert/strict';

import type { ControlPlane } from '../kube-fixture/control-plane.js';

/** `kubectl apply` of a CRD file, then waits until the API server serves the CRD. */
export async function applyCrd(
  plane: ControlPlane,
  file: string,
  applyArgs: readonly string[] = [],
): Promise<void> {
  const applied = await plane.kubectl(['apply', ...applyArgs, '-f', file]);
  assert.equal(applied.code, 0, applied.stderr);
  await crdEstablished(plane);
}

/** Resolves once the API server serves the CRD just created (by default the SidecarSet CRD). */
export async function crdEstablished(
  plane: ControlPlane,
  name = 'sidecarsets.apps.kruise.io',
): Promise<void> {
  const established = await plane.kubectl([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    `crd/${name}`,
  ]);
  assert.equal(established.code, 0, established.stderr);
}
