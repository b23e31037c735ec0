/**
 * The SidecarSet cache behind one interface. The webhook reads a plain, immutable snapshot per
 * request; whoever keeps the cache (files or a cluster) swaps in a new snapshot on change.
 */
import type { RevisionLookup } from '../core/inject/revision.js';
import type { NamespaceLabels } from '../core/matching/match.js';
import type { InjectionSnapshot } from '../core/mutation/pod-mutation.js';
import type { SidecarSetIndex } from '../core/matching/sidecarset-index.js';
import { buildSidecarSetIndex } from '../core/matching/sidecarset-index.js';
import type { SidecarSet } from '../core/api/sidecarset-types.js';

export interface Snapshot extends InjectionSnapshot {
  readonly sidecarSets: SidecarSetIndex;
  readonly namespaces: NamespaceLabels;
  /** Number of namespaces known, or undefined when every namespace is assumed to exist. */
  readonly namespaceCount: number | undefined;
}

/** A cache whose list or watch is failing (FailingCache.reason says why). */
export interface FailingCache {
  /** What it caches: SidecarSets, Namespaces, ControllerRevisions. */
  readonly name: string;
  /** Since when, in ms since the epoch (Reflector.failingSince()). */
  readonly sinceMs: number;
  readonly reason: string;
}

export interface SnapshotSource {
  /** The current snapshot; cheap, call it per request. */
  read(): Snapshot;
  /** True once the first complete load or list has finished. */
  isSynced(): boolean;
  /** The caches not current now because their list or watch fails (cluster mode only). */
  failing?(): FailingCache[];
  /** Resolves once synced; rejects if the first load fails. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** `revisions`: the ControllerRevisions kept in cluster mode; files have none to pin to. */
export function makeSnapshot(
  sidecarSets: readonly SidecarSet[],
  namespaces: NamespaceLabels,
  namespaceCount: number | undefined,
  revisions: RevisionLookup = () => [],
): Snapshot {
  return {
    sidecarSets: buildSidecarSetIndex(sidecarSets),
    namespaces,
    namespaceCount,
    revisions,
  };
}
