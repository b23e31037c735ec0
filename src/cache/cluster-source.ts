/**
 * Cluster mode: SidecarSets, Namespaces and ControllerRevisions from the API server, through the
 * process's shared caches (src/k8s/shared-caches.ts). SidecarSets go through the same defaulting
 * and hashing as files (a no-op for objects our mutating webhook admitted); ones that do not fit
 * the schema are logged and left out. The snapshot is rebuilt on the first read after a change.
 */
import type { Logger } from 'pino';

import type { Labels } from '../core/matching/selector.js';
import { withHashes } from '../core/api/hash.js';
import type { SidecarSet } from '../core/api/sidecarset-types.js';
import { formatFieldErrors } from '../core/validation/field-error.js';
import { validateSidecarSetSchema } from '../core/validation/sidecarset.js';
import type { Snapshot, SnapshotSource } from './snapshot.js';
import { makeSnapshot } from './snapshot.js';
import { failingCaches } from '../k8s/failing-caches.js';
import type { ReflectorHandlers } from '../k8s/reflector.js';
import { revisionLookup } from '../k8s/revisions.js';
import type { SharedCaches } from '../k8s/shared-caches.js';

export interface ClusterSourceOptions {
  /** Shared with the upgrade controller when it runs in the same process. */
  caches: SharedCaches;
  logger: Logger;
  /** Called after each relist (after a 410), not after the first list. */
  onRelist?: () => void;
}

export function createClusterSource(options: ClusterSourceOptions): SnapshotSource {
  const log = options.logger.child({ source: 'cluster' });
  const { caches } = options;
  const { sidecarSets, namespaces, revisions } = caches;
  let snapshot: Snapshot | undefined;
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
  for (const reflector of Object.values(caches.named())) reflector.addHandlers(handlers);

  // Each SidecarSet the cache stores is validated, defaulted and hashed once: the reflector stores
  // a new object for every change, so one status write re-prepares one SidecarSet, not all of
  // them (about 0.1 s for 1,000, paid by the admission that rebuilds the snapshot;
  // bench/cluster-snapshot.bench.ts).
  const prepared = new WeakMap<SidecarSet, { ready?: SidecarSet }>();
  function prepare(object: SidecarSet): SidecarSet | undefined {
    let entry = prepared.get(object);
    if (entry === undefined) {
      const errors = validateSidecarSetSchema(object);
      if (errors.length > 0) {
        log.warn(
          { sidecarSet: object.metadata.name, errors: formatFieldErrors(errors) },
          'ignoring an invalid SidecarSet',
        );
      }
      entry = errors.length > 0 ? {} : { ready: withHashes(object) };
      prepared.set(object, entry);
    }
    return entry.ready;
  }

  function build(): Snapshot {
    const ready = sidecarSets.list().flatMap((object) => prepare(object) ?? []);
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
    isSynced: () => caches.synced(),
    failing: () => failingCaches(caches.named()),
    start: () => caches.start(),
    stop: () => caches.stop(),
  };
}
