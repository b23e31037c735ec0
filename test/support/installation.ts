/**
 * The objects of a healthy installation as `kubectl apply -k manifests` leaves it running
 * (manifests/base), for the tests of `sidecarset check` on plain objects and on the fake API server.
 */
import { INSTALLATION } from '../../src/core/api/installation-names.js';
import { defineResource } from '../fake-apiserver/index.js';
import type { JsonObject, ResourceDef } from '../fake-apiserver/index.js';
import { CERT_RESOURCES } from './cert-resources.js';

const LABELS = {
  'app.kubernetes.io/name': 'sidecarset',
  'app.kubernetes.io/part-of': 'sidecarset',
};

/**
 * The Service of manifests/base; with `webhookUrl`, `url: webhookUrl + path` instead, as the overlay
 * of docs/local-cluster.md (test/e2e/install.ts) points the webhooks at a process on the host.
 */
function clientConfig(caBundle: string, path: string, webhookUrl?: string): JsonObject {
  if (webhookUrl !== undefined) return { url: `${webhookUrl}${path}`, caBundle };
  return {
    service: { name: INSTALLATION.service, namespace: INSTALLATION.namespace, path, port: 443 },
    caBundle,
  };
}

export function crd(caBundle: string, webhookUrl?: string): JsonObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: INSTALLATION.crd },
    spec: {
      group: 'apps.kruise.io',
      names: { kind: 'SidecarSet', plural: 'sidecarsets' },
      scope: 'Cluster',
      versions: [
        { name: 'v1alpha1', served: true, storage: false },
        { name: 'v1beta1', served: true, storage: true },
      ],
      conversion: {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: ['v1'],
          clientConfig: clientConfig(caBundle, '/convert', webhookUrl),
        },
      },
    },
    status: {
      conditions: [
        { type: 'NamesAccepted', status: 'True' },
        { type: 'Established', status: 'True' },
      ],
    },
  };
}

export function mutatingWebhookConfiguration(caBundle: string, webhookUrl?: string): JsonObject {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: INSTALLATION.mutatingWebhookConfiguration, labels: LABELS },
    webhooks: [
      {
        name: 'mpod.sidecarset.kruise.io',
        clientConfig: clientConfig(caBundle, '/mutate-pods', webhookUrl),
        failurePolicy: 'Ignore',
      },
      {
        name: 'msidecarset.sidecarset.kruise.io',
        clientConfig: clientConfig(caBundle, '/mutate-sidecarsets', webhookUrl),
        failurePolicy: 'Fail',
      },
    ],
  };
}

export function validatingWebhookConfiguration(caBundle: string, webhookUrl?: string): JsonObject {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: INSTALLATION.validatingWebhookConfiguration, labels: LABELS },
    webhooks: [
      {
        name: 'vsidecarset.sidecarset.kruise.io',
        clientConfig: clientConfig(caBundle, '/validate-sidecarsets', webhookUrl),
        failurePolicy: 'Fail',
      },
    ],
  };
}

/** The webhook's Deployment; `env` on top of the manifests' SIDECARSET_LEADER_ELECT true. */
export function deployment(
  replicas: number,
  readyReplicas: number,
  env: Record<string, string> = {},
): JsonObject {
  const vars = { SIDECARSET_LEADER_ELECT: 'true', ...env };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: INSTALLATION.deployment, namespace: INSTALLATION.namespace, labels: LABELS },
    spec: {
      replicas,
      template: {
        spec: {
          containers: [
            {
              name: 'webhook',
              image: 'sidecarset:0.2.0-dev',
              env: Object.entries(vars).map(([name, value]) => ({ name, value })),
            },
          ],
        },
      },
    },
    status: { replicas, readyReplicas },
  };
}

export function service(): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: INSTALLATION.service, namespace: INSTALLATION.namespace, labels: LABELS },
    spec: { ports: [{ name: 'https', port: 443 }] },
  };
}

/** An EndpointSlice of the webhook Service with one endpoint per readiness given. */
export function endpointSlice(ready: readonly boolean[]): JsonObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${INSTALLATION.service}-abcde`,
      namespace: INSTALLATION.namespace,
      labels: { 'kubernetes.io/service-name': INSTALLATION.service },
    },
    addressType: 'IPv4',
    endpoints: ready.map((r, i) => ({ addresses: [`10.0.0.${i + 1}`], conditions: { ready: r } })),
  };
}

export function lease(holder: string, renewTime: Date, leaseDurationSeconds = 15): JsonObject {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: INSTALLATION.lease, namespace: INSTALLATION.namespace },
    spec: {
      holderIdentity: holder,
      leaseDurationSeconds,
      renewTime: renewTime.toISOString().replace('Z', '000Z'),
    },
  };
}

/** CERT_RESOURCES and what else an installation has: Deployments, Services and their endpoints. */
export const INSTALLATION_RESOURCES: readonly ResourceDef[] = [
  ...CERT_RESOURCES,
  defineResource({ group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' }),
  defineResource({ group: '', version: 'v1', resource: 'services', kind: 'Service' }),
  defineResource({ group: '', version: 'v1', resource: 'endpoints', kind: 'Endpoints' }),
  defineResource({
    group: 'discovery.k8s.io',
    version: 'v1',
    resource: 'endpointslices',
    kind: 'EndpointSlice',
  }),
];
