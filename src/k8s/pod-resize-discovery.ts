/**
 * Whether the API server has the pods/resize subresource (Kubernetes 1.33 and later): where it has
 * not, sidecar resources cannot change in place, and the planner says so instead of trying
 * (src/core/upgrade/pod-state.ts).
 */
import type { CoreV1Api } from '@kubernetes/client-node';

export async function hasPodResize(core: CoreV1Api): Promise<boolean> {
  const list = await core.getAPIResources();
  return list.resources.some((r) => r.name === 'pods/resize');
}
