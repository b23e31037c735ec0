/**
 * In-place pod resize (KEP-1287) as the API server and the kubelet do it: the pods/resize
 * subresource changes only cpu and memory, may not remove a request or limit, nor change the
 * pod's QoS class (the API server refuses these); the kubelet reports what it applied in
 * status.containerStatuses[].resources and what it defers in pod conditions. The controller
 * resizes sidecars with it (docs/adr/0022-resources-and-native-sidecars-in-place.md).
 */
import type { JsonObject } from '../encoding/json.js';
import { isPlainObject } from '../encoding/json.js';
import type { Container, Pod, PodCondition } from './k8s-types.js';
import {
  KINDS,
  RESIZABLE,
  defaulted,
  qosClass,
  quantities,
  sameQuantity,
} from './resource-requirements.js';
import { containerStatus, podContainer } from './pod-containers.js';

export interface ResourceChange {
  container: string;
  from: JsonObject;
  /** Requests defaulted from limits, as the API server stores them. */
  to: JsonObject;
}

/** The pod conditions the kubelet sets while a resize is not applied (KEP-1287). */
export const RESIZE_PENDING = 'PodResizePending';
export const RESIZE_IN_PROGRESS = 'PodResizeInProgress';

/**
 * Why the API server would refuse these resizes, or undefined: a resource other than cpu and
 * memory changes, a request or limit is removed, or the pod's QoS class changes.
 */
export function resizeRefusal(
  pod: Readonly<Pod>,
  changes: readonly ResourceChange[],
): string | undefined {
  for (const { container, from, to } of changes) {
    const before = defaulted(from);
    for (const kind of KINDS) {
      const was = quantities(before, kind);
      const now = quantities(to, kind);
      for (const name of new Set([...Object.keys(was), ...Object.keys(now)])) {
        const resizable = (RESIZABLE as readonly string[]).includes(name);
        if (!resizable && !sameQuantity(was[name], now[name])) {
          return `sidecar ${container}: ${kind}.${name} cannot change in place (only cpu and memory resize)`;
        }
        if (was[name] !== undefined && now[name] === undefined) {
          return `sidecar ${container}: a resize cannot remove ${kind}.${name}`;
        }
      }
    }
  }
  const after = structuredClone<Pod['spec']>(pod.spec);
  const resized: Pod = { ...pod, spec: after };
  for (const change of changes) {
    const container = podContainer(resized, change.container);
    if (container !== undefined) container.resources = change.to;
  }
  const was = qosClass(pod);
  const now = qosClass(resized);
  if (was !== now) return `the change would make the pod ${now} instead of ${was} (QoS class)`;
  return undefined;
}

/**
 * Whether the kubelet runs the container with the cpu and memory its spec asks for, as
 * status.containerStatuses[].resources reports it. A kubelet that reports nothing (no in-place
 * resize) is taken at its word.
 */
export function resourcesApplied(pod: Readonly<Pod>, container: Readonly<Container>): boolean {
  const reported = containerStatus(pod, container.name)?.['resources'];
  if (!isPlainObject(reported)) return true;
  const spec = container.resources ?? {};
  for (const kind of KINDS) {
    const want = quantities(spec, kind);
    const have = quantities(reported as JsonObject, kind);
    for (const name of RESIZABLE) {
      if (want[name] !== undefined && !sameQuantity(want[name], have[name])) return false;
    }
  }
  return true;
}

/** The kubelet's PodResizePending condition (reason Deferred or Infeasible), if any. */
export function pendingResize(pod: Readonly<Pod>): PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === RESIZE_PENDING && c.status === 'True');
}

/** Whether the container's resizePolicy restarts it for a change of these resources. */
export function restartsOnResize(pod: Readonly<Pod>, change: ResourceChange): boolean {
  const policies = podContainer(pod, change.container)?.resizePolicy ?? [];
  const before = defaulted(change.from);
  return policies.some((p) => {
    const name = p['resourceName'];
    if (typeof name !== 'string' || p['restartPolicy'] !== 'RestartContainer') return false;
    return KINDS.some(
      (k) => !sameQuantity(quantities(before, k)[name], quantities(change.to, k)[name]),
    );
  });
}
