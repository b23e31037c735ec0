/**
 * Sidecar resources changed in place through the pods/resize subresource (ours; OpenKruise
 * cannot: docs/adr/0022-resources-and-native-sidecars-in-place.md). Only cpu and memory resize in
 * place; a resize may not remove a request or limit, nor change the pod's QoS class (the API
 * server refuses both), so such changes wait for the pod to be recreated.
 */
import type { JsonObject } from '../encoding/json.js';
import { isPlainObject } from '../encoding/json.js';
import type { Container, Pod, PodCondition } from '../api/k8s-types.js';
import {
  KINDS,
  RESIZABLE,
  defaulted,
  qosClass,
  quantities,
  sameQuantity,
  sameResources,
} from '../api/resource-requirements.js';
import type { SidecarSetContext } from './context.js';
import { containerStatus, podContainer } from '../api/pod-containers.js';

export interface ResourceChange {
  container: string;
  from: JsonObject;
  /** Requests defaulted from limits, as the API server stores them. */
  to: JsonObject;
}

/** The pod conditions the kubelet sets while a resize is not applied (KEP-1287). */
export const RESIZE_PENDING = 'PodResizePending';
export const RESIZE_IN_PROGRESS = 'PodResizeInProgress';

/** The cold sidecars whose resources differ from the SidecarSet's. */
export function resourceChanges(ctx: SidecarSetContext, pod: Readonly<Pod>): ResourceChange[] {
  const changes: ResourceChange[] = [];
  for (const [name, target] of ctx.resources) {
    const container = podContainer(pod, name);
    if (container === undefined) continue;
    const from = container.resources ?? {};
    const to = defaulted(target);
    if (!sameResources(defaulted(from), to)) changes.push({ container: name, from, to });
  }
  return changes;
}

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
