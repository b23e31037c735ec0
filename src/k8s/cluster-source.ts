/**
 * Cluster mode: SidecarSets and Namespaces from the API server through informers. SidecarSets go
 * through the same defaulting and hashing as files (a no-op for objects our mutating webhook
 * admitted); ones that do not fit the schema are logged and left out.
 */
import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { Logger } from 'pino';

import { NAMESPACE_NAME_LABEL } from '../core/annotations.js';
import type { Labels } from '../core/selector.js';
import { withHashes } from '../core/sidecarset-admission.js';
import type { SidecarSet } from '../core/sidecarset-types.js';
import { formatFieldErrors } from '../core/validation/field-error.js';
import { validateSidecarSetSchema } from '../core/validation/sidecarset.js';
import type { Snapshot, SnapshotSource } from '../cache/snapshot.js';
import { makeSnapshot } from '../cache/snapshot.js';
import type { Backoff, ResilientInformer } from './informer.js';
import { resilientInformer } from './informer.js';

export interface ClusterSourceOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  onRelist?: () => void;
  backoff?: Backoff;
}

export function createClusterSource(options: ClusterSourceOptions): SnapshotSource {
  const log = options.logger.child({ source: 'cluster' });
  const core = options.kubeConfig.makeApiClient(CoreV1Api);
  const custom = options.kubeConfig.makeApiClient(CustomObjectsApi);
  let snapshot: Snapshot | undefined;
  const invalid = new Map<string, string>();
  const markDirty = (): void => {
    snapshot = undefined;
  };
  const common = {
    kubeConfig: options.kubeConfig,
    logger: log,
    onChange: markDirty,
    ...(options.onRelist ? { onRelist: options.onRelist } : {}),
    ...(options.backoff ? { backoff: options.backoff } : {}),
  };
  const sidecarSets: ResilientInformer<KubernetesObject> = resilientInformer({
    ...common,
    path: '/apis/apps.kruise.io/v1alpha1/sidecarsets',
    list: async () =>
      (await custom.listClusterCustomObject({
        group: 'apps.kruise.io',
        version: 'v1alpha1',
        plural: 'sidecarsets',
      })) as KubernetesListObject<KubernetesObject>,
  });
  const namespaces = resilientInformer({
    ...common,
    path: '/api/v1/namespaces',
    list: () => core.listNamespace(),
  });

  function build(): Snapshot {
    const ready: SidecarSet[] = [];
    for (const object of sidecarSets.list()) {
      const name = object.metadata?.name ?? '';
      const errors = validateSidecarSetSchema(object);
      if (errors.length > 0) {
        const version = object.metadata?.resourceVersion ?? '';
        if (invalid.get(name) !== version) {
          log.warn(
            { sidecarSet: name, errors: formatFieldErrors(errors) },
            'ignoring an invalid SidecarSet',
          );
          invalid.set(name, version);
        }
        continue;
      }
      ready.push(withHashes(object as unknown as SidecarSet));
    }
    const byName = new Map<string, Labels>();
    for (const ns of namespaces.list()) {
      const name = ns.metadata?.name;
      if (name) byName.set(name, { ...ns.metadata?.labels, [NAMESPACE_NAME_LABEL]: name });
    }
    return makeSnapshot(ready, byName, byName.size);
  }

  return {
    read() {
      snapshot ??= build();
      return snapshot;
    },
    isSynced: () => sidecarSets.synced() && namespaces.synced(),
    async start() {
      await Promise.all([sidecarSets.start(), namespaces.start()]);
    },
    async stop() {
      await Promise.all([sidecarSets.stop(), namespaces.stop()]);
    },
  };
}
