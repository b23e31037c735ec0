/** AdmissionReview requests as the API server sends them. */
import type { Pod } from '../../src/core/api/k8s-types.js';

export interface ReviewOptions {
  apiVersion?: string;
  operation?: string;
  dryRun?: boolean;
  subResource?: string;
  uid?: string;
  namespace?: string;
  oldObject?: unknown;
}

export function podReview(
  pod: Pod | Record<string, unknown>,
  options: ReviewOptions = {},
): Record<string, unknown> {
  return review(
    { group: '', version: 'v1', kind: 'Pod' },
    { group: '', version: 'v1', resource: 'pods' },
    pod,
    options,
  );
}

/** A SidecarSet review in the version the object is written in (v1alpha1 when it says none). */
export function sidecarSetReview(
  object: unknown,
  options: ReviewOptions = {},
): Record<string, unknown> {
  const apiVersion =
    typeof object === 'object' && object !== null && 'apiVersion' in object
      ? String(object.apiVersion)
      : '';
  const version = apiVersion === 'apps.kruise.io/v1beta1' ? 'v1beta1' : 'v1alpha1';
  return review(
    { group: 'apps.kruise.io', version, kind: 'SidecarSet' },
    { group: 'apps.kruise.io', version, resource: 'sidecarsets' },
    object,
    options,
  );
}

function review(
  kind: Record<string, string>,
  resource: Record<string, string>,
  object: unknown,
  options: ReviewOptions,
): Record<string, unknown> {
  return {
    apiVersion: options.apiVersion ?? 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: options.uid ?? 'b6f2d3a1-0000-4000-8000-000000000001',
      kind,
      resource,
      requestKind: kind,
      requestResource: resource,
      ...(options.subResource ? { subResource: options.subResource } : {}),
      namespace: options.namespace ?? 'default',
      operation: options.operation ?? 'CREATE',
      userInfo: { username: 'admin' },
      object,
      oldObject: options.oldObject ?? null,
      dryRun: options.dryRun ?? false,
    },
  };
}
