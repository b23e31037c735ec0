/** The collections both the webhook's cache and the controller list and watch. */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';

import { NAMESPACE_NAME_LABEL } from '../core/api/annotations.js';
import type { Labels } from '../core/matching/selector.js';
import type { ListPage, ListParams } from './reflector.js';

export const SIDECARSETS_PATH = '/apis/apps.kruise.io/v1beta1/sidecarsets';
export const NAMESPACES_PATH = '/api/v1/namespaces';

export function listSidecarSets(
  kubeConfig: KubeConfig,
): (params: ListParams) => Promise<ListPage<KubernetesObject>> {
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  return async (params) =>
    (await custom.listClusterCustomObject({
      group: 'apps.kruise.io',
      version: 'v1beta1',
      plural: 'sidecarsets',
      ...params,
    })) as ListPage<KubernetesObject>;
}

export function listNamespaces(
  kubeConfig: KubeConfig,
): (params: ListParams) => Promise<ListPage<KubernetesObject>> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  return (params) => core.listNamespace(params);
}

/** What the matcher reads of a Namespace: its labels, with the name label the API server sets. */
export interface CachedNamespace {
  name: string;
  labels: Labels;
}

export function cachedNamespace(raw: KubernetesObject): CachedNamespace {
  const name = raw.metadata?.name ?? '';
  return { name, labels: { ...raw.metadata?.labels, [NAMESPACE_NAME_LABEL]: name } };
}
