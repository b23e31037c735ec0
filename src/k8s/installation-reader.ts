/**
 * Reads what `sidecarset check` judges (src/core/diagnosis/installation-check.ts), read-only: the
 * CRD, the webhook configurations, the Services they call with their endpoints, the Deployment, the
 * Lease and the SidecarSets; and GET /readyz of the server behind each webhook URL (a webhook run
 * outside the cluster). A missing object comes back undefined and an unreadable one (403, a
 * timeout) as Unreadable, so that one refused read is one failed check, not a failed command.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  AdmissionregistrationV1Api,
  ApiextensionsV1Api,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  DiscoveryV1Api,
} from '@kubernetes/client-node';

import type {
  Crd,
  Deployment,
  Lease,
  InstallationState,
  Read,
  ReadyzAnswer,
  ServiceEndpoints,
  WebhookConfiguration,
} from '../core/diagnosis/installation-check.js';
import {
  behind,
  controllerSetup,
  isUnreadable,
  referencedServices,
  serviceKey,
  urlServers,
} from '../core/diagnosis/installation-check.js';
import { INSTALLATION } from '../core/api/installation-names.js';
import type { SidecarSet } from '../core/api/sidecarset-types.js';
import type { CliClient } from './cli-client.js';
import { clusterError } from './cli-client.js';
import { NotFoundError } from './cluster-error.js';
import { probeWebhookReadyz } from './readyz-probe.js';

export interface InstallationReadOptions {
  /** Where the Deployment and the Lease are. */
  namespace: string;
  /** How long to wait before reading SidecarSets again when one looks behind its spec. */
  settleMs: number;
  /** How long the server of a webhook URL has to answer GET /readyz. */
  probeTimeoutMs: number;
}

export async function readInstallation(
  kubeConfig: KubeConfig,
  client: CliClient,
  options: InstallationReadOptions,
): Promise<InstallationState> {
  const admission = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const extensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
  const apps = kubeConfig.makeApiClient(AppsV1Api);
  const coordination = kubeConfig.makeApiClient(CoordinationV1Api);
  const { namespace } = options;
  const [crd, mutating, validating, deployment, sidecarSets] = await Promise.all([
    read<Crd>(kubeConfig, `customresourcedefinition "${INSTALLATION.crd}"`, () =>
      extensions.readCustomResourceDefinition({ name: INSTALLATION.crd }),
    ),
    read<WebhookConfiguration>(
      kubeConfig,
      `mutatingwebhookconfiguration "${INSTALLATION.mutatingWebhookConfiguration}"`,
      () =>
        admission.readMutatingWebhookConfiguration({
          name: INSTALLATION.mutatingWebhookConfiguration,
        }),
    ),
    read<WebhookConfiguration>(
      kubeConfig,
      `validatingwebhookconfiguration "${INSTALLATION.validatingWebhookConfiguration}"`,
      () =>
        admission.readValidatingWebhookConfiguration({
          name: INSTALLATION.validatingWebhookConfiguration,
        }),
    ),
    read<Deployment>(kubeConfig, `deployment "${namespace}/${INSTALLATION.deployment}"`, () =>
      apps.readNamespacedDeployment({ namespace, name: INSTALLATION.deployment }),
    ),
    settledSidecarSets(client, options.settleMs),
  ]);
  // The Lease the Deployment's controller uses, if it elects a leader at all.
  const setup = controllerSetup(deployment);
  const leaseName = setup.leaseName;
  const lease =
    setup.controller && setup.leaderElect
      ? await read<Lease>(kubeConfig, `lease "${namespace}/${leaseName}"`, () =>
          coordination.readNamespacedLease({ namespace, name: leaseName }),
        )
      : undefined;
  const services = new Map<string, Read<ServiceEndpoints>>();
  const answers = new Map<string, ReadyzAnswer>();
  await Promise.all([
    ...referencedServices(crd, [mutating, validating]).map(async (ref) => {
      services.set(serviceKey(ref), await readEndpoints(kubeConfig, ref.namespace, ref.name));
    }),
    ...urlServers(crd, [mutating, validating]).map(async (server) => {
      answers.set(server.key, await probeWebhookReadyz(server, options.probeTimeoutMs));
    }),
  ]);
  return {
    crd,
    webhookConfigurations: [
      {
        kind: 'MutatingWebhookConfiguration',
        name: INSTALLATION.mutatingWebhookConfiguration,
        object: mutating,
      },
      {
        kind: 'ValidatingWebhookConfiguration',
        name: INSTALLATION.validatingWebhookConfiguration,
        object: validating,
      },
    ],
    services,
    urlServers: answers,
    deployment: { namespace, name: INSTALLATION.deployment, object: deployment },
    lease: { namespace, name: leaseName, object: lease },
    sidecarSets,
  };
}

/** The SidecarSets, read again after settleMs when one has a spec its controller has not seen. */
async function settledSidecarSets(
  client: CliClient,
  settleMs: number,
): Promise<SidecarSet[] | { unreadable: string }> {
  const list = async () => {
    try {
      return await client.listSidecarSets();
    } catch (err) {
      return { unreadable: err instanceof Error ? err.message : String(err) };
    }
  };
  const first = await list();
  if (!Array.isArray(first) || !first.some(behind)) return first;
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  return list();
}

async function readEndpoints(
  kubeConfig: KubeConfig,
  namespace = '',
  name = '',
): Promise<Read<ServiceEndpoints>> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const discovery = kubeConfig.makeApiClient(DiscoveryV1Api);
  const service = await read<object>(kubeConfig, `service "${namespace}/${name}"`, () =>
    core.readNamespacedService({ namespace, name }),
  );
  if (service === undefined || isUnreadable(service)) return service;
  const slices = await read<{ items: ServiceEndpoints['endpointSlices'] }>(
    kubeConfig,
    'endpointslices',
    () =>
      discovery.listNamespacedEndpointSlice({
        namespace,
        labelSelector: `kubernetes.io/service-name=${name}`,
      }),
  );
  const endpointSlices = slices === undefined || isUnreadable(slices) ? [] : slices.items;
  if (endpointSlices.length > 0) return { endpointSlices };
  const endpoints = await read<NonNullable<ServiceEndpoints['endpoints']>>(
    kubeConfig,
    `endpoints "${namespace}/${name}"`,
    () => core.readNamespacedEndpoints({ namespace, name }),
  );
  if (isUnreadable(endpoints)) return endpoints;
  return { endpointSlices: [], ...(endpoints === undefined ? {} : { endpoints }) };
}

/**
 * One read as plain JSON (client-node's typed reads turn times into Date objects; the core reads
 * RFC 3339 strings, as the API server sends them).
 */
async function read<T extends object>(
  kubeConfig: KubeConfig,
  what: string,
  request: () => Promise<unknown>,
): Promise<Read<T>> {
  try {
    return JSON.parse(JSON.stringify(await request())) as T;
  } catch (err) {
    const error = clusterError(err, what, kubeConfig.getCurrentCluster()?.server ?? '');
    return error instanceof NotFoundError ? undefined : { unreadable: error.message };
  }
}
