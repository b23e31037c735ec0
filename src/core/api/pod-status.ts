/** Kubernetes' pod utilities (k8s.io/kubernetes/pkg/api/v1/pod): a pod's phase, deletion and Ready condition. */
import type { Pod, PodCondition } from './k8s-types.js';

/** IsPodActive: not Succeeded, not Failed, not being deleted. */
export function isActivePod(pod: Readonly<Pod>): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !isDeleting(pod);
}

/** Being deleted before it finished: its replacement, if any, is on the way. */
export function isTerminating(pod: Readonly<Pod>): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && isDeleting(pod);
}

function isDeleting(pod: Readonly<Pod>): boolean {
  const ts = pod.metadata.deletionTimestamp;
  return ts !== undefined && ts !== null && ts !== '';
}

/** Kubernetes' podutil.IsPodReady: the Ready condition alone. */
export function hasReadyCondition(pod: Readonly<Pod>): boolean {
  return readyCondition(pod)?.status === 'True';
}

/** The kubelet's ContainersReady condition: every container ready, whatever the readiness gates. */
export function hasContainersReady(pod: Readonly<Pod>): boolean {
  return (
    pod.status?.conditions?.some((c) => c.type === 'ContainersReady' && c.status === 'True') ===
    true
  );
}

export function isRunning(pod: Readonly<Pod>): boolean {
  return pod.status?.phase === 'Running';
}

export function readyCondition(pod: Readonly<Pod>): PodCondition | undefined {
  for (const c of pod.status?.conditions ?? []) if (c.type === 'Ready') return c;
  return undefined;
}

/** Kubernetes' IsRunningAndReady: Running, Ready=True, not being deleted. */
export function isRunningAndReady(pod: Readonly<Pod>): boolean {
  return isRunning(pod) && hasReadyCondition(pod) && !isDeleting(pod);
}
