/**
 * What the controller writes to the cluster, as an interface: the Kubernetes implementation is in
 * src/k8s/kube-writer.ts, a dry-run one below. Reconcile logic depends only on this.
 */
import type { Pod, PodCondition } from '../core/api/k8s-types.js';
import type { SidecarSetStatus } from '../core/api/sidecarset-types.js';

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

export interface ClusterWriter {
  /** The full, current pod from the API server (not the cache); undefined when it is gone. */
  getPod(namespace: string, name: string): Promise<Pod | undefined>;
  /**
   * A strategic merge patch of the pod. When `patch.metadata.resourceVersion` is set the server
   * rejects a stale write with 409, surfaced as ConflictError.
   */
  patchPod(namespace: string, name: string, patch: Record<string, unknown>): Promise<void>;
  /** Whether the API server has the pods/resize subresource (Kubernetes 1.33 and later). */
  canResizePods(): Promise<boolean>;
  /** A strategic merge patch of the pod's resources through the pods/resize subresource. */
  resizePod(namespace: string, name: string, patch: Record<string, unknown>): Promise<void>;
  /** Sets pod status conditions (merged by type). */
  setPodConditions(namespace: string, name: string, conditions: PodCondition[]): Promise<void>;
  /** Writes the SidecarSet's status through the status subresource. */
  writeSidecarSetStatus(name: string, status: SidecarSetStatus): Promise<void>;
  event(about: ObjectReference, type: EventType, reason: string, message: string): Promise<void>;
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
