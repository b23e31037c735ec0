/**
 * Recreation through evictions (ours; docs/adr/0024-recreation-through-evictions.md): with
 * sidecarset.dev/recreate-pods: "true", a pod whose sidecars cannot change in place is evicted at
 * the update strategy's pace, and the webhook injects the new sidecar into its replacement.
 */
import type { Pod } from '../api/k8s-types.js';

/**
 * Why the pod is not evicted to be recreated, or undefined when it may be: nothing recreates a pod
 * without a controller, and evicting a run-to-completion pod (a Job's) would fail its work.
 */
export function whyNotRecreated(pod: Readonly<Pod>): string | undefined {
  if (podController(pod) === undefined) return 'no controller recreates the pod';
  const policy = pod.spec.restartPolicy;
  if (policy === 'Never' || policy === 'OnFailure') {
    return `a run-to-completion pod (restartPolicy ${policy}) is not evicted`;
  }
  return undefined;
}

/** The pod's managing controller (the ownerReference with controller: true), kind/name. */
export function podController(pod: Readonly<Pod>): string | undefined {
  for (const owner of pod.metadata.ownerReferences ?? []) {
    const { kind, name } = owner;
    if (owner['controller'] === true && typeof kind === 'string' && typeof name === 'string') {
      return `${kind}/${name}`;
    }
  }
  return undefined;
}
