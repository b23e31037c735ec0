/** A pod's identity: its namespace (as matching reads it), name and uid, and their order. */
import { compareStrings } from '../encoding/json.js';
import type { Pod } from './k8s-types.js';

/** The namespace a pod is matched in: its own, else the request's, else `default`. */
export function podNamespace(pod: Pick<Pod, 'metadata'>, requestNamespace?: string): string {
  return pod.metadata.namespace || requestNamespace || 'default';
}

/** Namespace, name and (when the pod has one) uid: the pod a plan names. */
export interface PodRef {
  namespace: string;
  name: string;
  uid?: string;
}

export function podRef(pod: Readonly<Pod>): PodRef {
  const namespace = podNamespace(pod);
  const name = pod.metadata.name ?? '';
  const uid = pod.metadata.uid;
  return uid !== undefined && uid !== '' ? { namespace, name, uid } : { namespace, name };
}

/** Namespace, then name: the order the plan reports pods in (docs/adr/0003-stable-upgrade-order.md). */
export function compareByName(a: Omit<PodRef, 'uid'>, b: Omit<PodRef, 'uid'>): number {
  return compareStrings(a.namespace, b.namespace) || compareStrings(a.name, b.name);
}

/** `namespace/name`. */
export function podKey(ref: PodRef): string {
  return `${ref.namespace}/${ref.name}`;
}
