/**
 * Reads what `sidecarset check --pre` judges (src/core/diagnosis/migration-preflight.ts): the
 * SidecarSets, the names of every admission webhook configuration, and OpenKruise's manager
 * Deployment and `kruise-configuration` ConfigMap in kruise-system when they exist.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { AdmissionregistrationV1Api, AppsV1Api, CoreV1Api } from '@kubernetes/client-node';

import type { KruiseManager, MigrationInput } from '../core/diagnosis/migration-preflight.js';
import type { CliClient } from './cli-client.js';
import { clusterError } from './cli-client.js';
import { NotFoundError } from './cluster-error.js';

/** Where OpenKruise's chart installs its manager. */
const KRUISE = {
  namespace: 'kruise-system',
  manager: 'kruise-controller-manager',
  configuration: 'kruise-configuration',
} as const;

export async function readMigrationInput(
  kubeConfig: KubeConfig,
  client: CliClient,
  kruiseNamespace: string = KRUISE.namespace,
): Promise<MigrationInput> {
  const admission = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const apps = kubeConfig.makeApiClient(AppsV1Api);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const server = kubeConfig.getCurrentCluster()?.server ?? '';
  /** The object, undefined when it does not exist; any other failure is the command's. */
  const optional = async <T>(what: string, request: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await request();
    } catch (err) {
      const error = clusterError(err, what, server);
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  };
  const [sidecarSets, mutating, validating, deployment, configMap] = await Promise.all([
    client.listSidecarSets(),
    admission.listMutatingWebhookConfiguration(),
    admission.listValidatingWebhookConfiguration(),
    optional(`deployment "${kruiseNamespace}/${KRUISE.manager}"`, () =>
      apps.readNamespacedDeployment({ namespace: kruiseNamespace, name: KRUISE.manager }),
    ),
    optional(`configmap "${kruiseNamespace}/${KRUISE.configuration}"`, () =>
      core.readNamespacedConfigMap({ namespace: kruiseNamespace, name: KRUISE.configuration }),
    ),
  ]);
  const containers = deployment?.spec?.template.spec?.containers ?? [];
  const kruiseManager: KruiseManager | undefined =
    deployment === undefined
      ? undefined
      : {
          args: containers.flatMap((c) => [...(c.command ?? []), ...(c.args ?? [])]),
          env: containers.flatMap((c) =>
            (c.env ?? []).map((e) => ({
              name: e.name,
              ...(e.value === undefined ? {} : { value: e.value }),
            })),
          ),
        };
  return {
    sidecarSets,
    webhookConfigurations: [
      ...mutating.items.map((c) => ({
        kind: 'MutatingWebhookConfiguration',
        name: c.metadata?.name ?? '',
      })),
      ...validating.items.map((c) => ({
        kind: 'ValidatingWebhookConfiguration',
        name: c.metadata?.name ?? '',
      })),
    ],
    ...(kruiseManager === undefined ? {} : { kruiseManager }),
    ...(configMap?.data === undefined ? {} : { kruiseConfiguration: configMap.data }),
  };
}
