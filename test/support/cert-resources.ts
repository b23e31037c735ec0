/** What the fake API server needs to serve for self-managed certificates (src/k8s/certificates.ts). */
import { DEFAULT_RESOURCES, defineResource } from '../fake-apiserver/index.js';
import type { ResourceDef, ResourceRef } from '../fake-apiserver/index.js';

export const SECRETS: ResourceRef = { group: '', version: 'v1', resource: 'secrets' };
export const MUTATING: ResourceRef = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  resource: 'mutatingwebhookconfigurations',
};
export const VALIDATING: ResourceRef = { ...MUTATING, resource: 'validatingwebhookconfigurations' };
export const CRDS: ResourceRef = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  resource: 'customresourcedefinitions',
};

/** DEFAULT_RESOURCES plus Secrets, both kinds of webhook configuration and CRDs. */
export const CERT_RESOURCES: readonly ResourceDef[] = [
  ...DEFAULT_RESOURCES,
  defineResource({ ...SECRETS, kind: 'Secret' }),
  defineResource({ ...MUTATING, kind: 'MutatingWebhookConfiguration', namespaced: false }),
  defineResource({ ...VALIDATING, kind: 'ValidatingWebhookConfiguration', namespaced: false }),
  defineResource({ ...CRDS, kind: 'CustomResourceDefinition', namespaced: false }),
];
