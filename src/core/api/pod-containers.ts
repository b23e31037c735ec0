/** A pod's containers and their statuses by name, whichever list holds them. */
import type { Container, ContainerStatus, Pod } from './k8s-types.js';

/**
 * The pod's container of that name. A sidecar is an app-list container or, as a native sidecar,
 * an init container; names are unique across both lists (the API server validates it).
 */
export function podContainer(pod: Readonly<Pod>, name: string): Container | undefined {
  for (const c of pod.spec.containers) if (c.name === name) return c;
  for (const c of pod.spec.initContainers ?? []) if (c.name === name) return c;
  return undefined;
}

/** The status of the pod's container of that name, whichever list it is in. */
export function containerStatus(pod: Readonly<Pod>, name: string): ContainerStatus | undefined {
  const status = pod.status;
  if (status === undefined) return undefined;
  for (const s of status.containerStatuses ?? []) if (s.name === name) return s;
  for (const s of status.initContainerStatuses ?? []) if (s.name === name) return s;
  return undefined;
}
