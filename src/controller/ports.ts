/**
 * The controller's ports, in one place: what a round reads (ControllerView, the caches), what it
 * writes (ClusterWriter: src/k8s/kube-writer.ts, or the dry-run writer below) and what it tells
 * (RoundObserver: the metrics). Reconcile logic depends only on these.
 */
import type { Pod, PodCondition } from '../core/api/k8s-types.js';
import type { NamespaceLabels } from '../core/matching/match.js';
import type { SidecarSet, SidecarSetStatus } from '../core/api/sidecarset-types.js';
import type { UpgradeStatus } from '../core/upgrade/types.js';

/** What a round reads: the controller's caches, as plain values. */
export interface ControllerView {
  sidecarSet(name: string): SidecarSet | undefined;
  /** Cached (slim) pods whose kruise.io/sidecarset-injected-list names this SidecarSet. */
  podsInjectedBy(name: string): readonly Pod[];
  namespaces: NamespaceLabels;
}

export interface ObjectReference {
  kind: 'Pod' | 'SidecarSet';
  apiVersion: string;
  name: string;
  namespace?: string;
  uid?: string;
}

export type EventType = 'Normal' | 'Warning';

/** Thrown by a writer when the object changed since it was read (HTTP 409). */
export class ConflictError extends Error {
  override name = 'ConflictError';
}

/**
 * Thrown by a writer when the API server refuses a resize for good (HTTP 403 or 422: the node
 * cannot fit it, or the change is invalid), as opposed to a failure worth retrying.
 */
export class ResizeRefusedError extends Error {
  override name = 'ResizeRefusedError';
}

/**
 * Thrown by a writer when the API server refuses an eviction because of a PodDisruptionBudget
 * (HTTP 429): try again later.
 */
export class EvictionRefusedError extends Error {
  override name = 'EvictionRefusedError';
}

/**
 * Thrown by a writer when the API server answers a pod update with an error other than a
 * conflict (an admission policy or webhook, RBAC, validation): the Status's message and code.
 */
export class UpdateRefusedError extends Error {
  override name = 'UpdateRefusedError';
}

export interface ClusterWriter {
  /** The full, current pod from the API server (not the cache); undefined when it is gone. */
  getPod(namespace: string, name: string): Promise<Pod | undefined>;
  /**
   * A strategic merge patch of the pod. When `patch.metadata.resourceVersion` is set the server
   * rejects a stale write with 409, surfaced as ConflictError; any other error answer is an
   * UpdateRefusedError.
   */
  patchPod(namespace: string, name: string, patch: Record<string, unknown>): Promise<void>;
  /** Whether the API server has the pods/resize subresource (Kubernetes 1.33 and later). */
  canResizePods(): Promise<boolean>;
  /** A strategic merge patch of the pod's resources through the pods/resize subresource. */
  resizePod(namespace: string, name: string, patch: Record<string, unknown>): Promise<void>;
  /**
   * Evicts the pod through the Eviction API (policy/v1), only if it still has this uid. Resolves
   * false when there was nothing to evict (gone, or another pod under the name).
   */
  evictPod(namespace: string, name: string, uid: string | undefined): Promise<boolean>;
  /** Sets pod status conditions (merged by type). */
  setPodConditions(namespace: string, name: string, conditions: PodCondition[]): Promise<void>;
  /**
   * Merges into the SidecarSet's status through the status subresource. With `resourceVersion`,
   * only while the SidecarSet still has it (the status was computed from that version): otherwise
   * ConflictError, and nothing is written.
   */
  writeSidecarSetStatus(
    name: string,
    status: SidecarSetStatus,
    resourceVersion?: string,
  ): Promise<void>;
  event(about: ObjectReference, type: EventType, reason: string, message: string): Promise<void>;
}

/** What rounds tell the outside (the metrics). */
export interface RoundObserver {
  /** The status a round computed for a SidecarSet; undefined once the SidecarSet is gone. */
  status?(sidecarSet: string, status: UpgradeStatus | undefined): void;
  /** Pods written in a round (in a dry run: that would have been): upgrades, hot-upgrade flips, evictions. */
  podsWritten?(kind: 'upgrade' | 'flip' | 'evict', count: number): void;
  /** Whether failed pods paused the SidecarSet's rollout; undefined once the SidecarSet is gone. */
  rolloutPaused?(sidecarSet: string, paused: boolean | undefined): void;
}

/** Reads for real and writes nothing: what `--dry-run` runs with. Events are not sent either. */
export function dryRunWriter(
  real: Pick<ClusterWriter, 'getPod' | 'canResizePods'>,
  log: (msg: string, fields: Record<string, unknown>) => void,
): ClusterWriter {
  return {
    getPod: (namespace, name) => real.getPod(namespace, name),
    canResizePods: () => real.canResizePods(),
    patchPod: (namespace, name, patch) => {
      log('dry run: would patch pod', { namespace, name, patch });
      return Promise.resolve();
    },
    resizePod: (namespace, name, patch) => {
      log('dry run: would resize pod', { namespace, name, patch });
      return Promise.resolve();
    },
    evictPod: (namespace, name, uid) => {
      log('dry run: would evict pod', { namespace, name, uid });
      return Promise.resolve(true);
    },
    setPodConditions: (namespace, name, conditions) => {
      log('dry run: would set pod conditions', { namespace, name, conditions });
      return Promise.resolve();
    },
    writeSidecarSetStatus: (name, status) => {
      log('dry run: would write SidecarSet status', { name, status });
      return Promise.resolve();
    },
    event: () => Promise.resolve(),
  };
}
