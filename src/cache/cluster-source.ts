/**
 * Cluster mode: SidecarSets and Namespaces from the API server through reflectors (list, then
 * watch, restarted with backoff). SidecarSets are cached whole and go through the same defaulting
 * and hashing as files (a no-op for objects our mutating webhook admitted); ones that do not fit
 * the schema are logged and left out. Namespaces are cached as their name and labels only.
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';

import type { StoredRevision } from '../core/revisions/history.js';
import type { Labels } from '../core/matching/selector.js';
import { withHashes } from '../core/api/hash.js';
import type { SidecarSet } from '../core/api/sidecarset-types.js';
import { formatFieldErrors } from '../core/validation/field-error.js';
import { validateSidecarSetSchema } from '../core/validation/sidecarset.js';
import type { Snapshot, SnapshotSource } from './snapshot.js';
import { makeSnapshot } from './snapshot.js';
import type { CachedNamespace } from '../k8s/collections.js';
import {
  NAMESPACES_PATH,
  SIDECARSETS_PATH,
  cachedNamespace,
  listNamespaces,
  listSidecarSets,
} from '../k8s/collections.js';
import type { Backoff, Reflector, ReflectorHandlers } from '../k8s/reflector.js';
import { createReflector, withoutManagedFields } from '../k8s/reflector.js';
import { failingCaches } from '../k8s/failing-caches.js';
import {
  DEFAULT_REVISION_NAMESPACE,
  createRevisionReflector,
  revisionLookup,
} from '../k8s/revisions.js';

export interface ClusterSourceOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  /** Called after each relist (after a 410), not after the first list. */
  onRelist?: () => void;
  backoff?: Backoff;
  /** Where the SidecarSets' ControllerRevisions live (default sidecarset-system). */
  revisionNamespace?: string;
}

export function createClusterSource(options: ClusterSourceOptions): SnapshotSource {
  const log = options.logger.child({ source: 'cluster' });
  let snapshot: Snapshot | undefined;
  const invalid = new Map<string, string>();
  const markDirty = (): void => {
    snapshot = undefined;
  };
  const handlers: ReflectorHandlers<unknown> = {
    onAdd: markDirty,
    onUpdate: markDirty,
    onDelete: markDirty,
    onSynced: markDirty,
    ...(options.onRelist ? { onRelist: options.onRelist } : {}),
  };
  const common = {
    kubeConfig: options.kubeConfig,
    logger: log,
    handlers,
    ...(options.backoff ? { backoff: options.backoff } : {}),
  };
  const sidecarSets: Reflector<KubernetesObject> = createReflector({
    ...common,
    path: SIDECARSETS_PATH,
    list: listSidecarSets(options.kubeConfig),
    transform: withoutManagedFields,
  });
  const namespaces: Reflector<CachedNamespace> = createReflector({
    ...common,
    path: NAMESPACES_PATH,
    list: listNamespaces(options.kubeConfig),
    transform: cachedNamespace,
  });

  const revisions: Reflector<StoredRevision> = createRevisionReflector({
    kubeConfig: options.kubeConfig,
    namespace: options.revisionNamespace ?? DEFAULT_REVISION_NAMESPACE,
    logger: log,
    handlers,
    ...(options.backoff ? { backoff: options.backoff } : {}),
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
      if (ns.name !== '') byName.set(ns.name, ns.labels);
    }
    return makeSnapshot(ready, byName, byName.size, revisionLookup(revisions.list()));
  }

  return {
    read() {
      snapshot ??= build();
      return snapshot;
    },
    isSynced: () => sidecarSets.synced() && namespaces.synced() && revisions.synced(),
    failing: () =>
      failingCaches({
        SidecarSets: sidecarSets,
        Namespaces: namespaces,
        ControllerRevisions: revisions,
      }),
    async start() {
      await Promise.all([sidecarSets.start(), namespaces.start(), revisions.start()]);
    },
    async stop() {
      await Promise.all([sidecarSets.stop(), namespaces.stop(), revisions.stop()]);
    },
  };
}
