/**
 * Sidecar resources changed in place through the pods/resize subresource (ours; OpenKruise
 * cannot: docs/adr/0022-resources-and-native-sidecars-in-place.md). Only cpu and memory resize in
 * place; a resize may not remove a request or limit, nor change the pod's QoS class (the API
 * server refuses both), so such changes wait for the pod to be recreated.
 */
import {
  computeHashWithoutImageResources,
  computeSidecarSetHashWithoutImage,
} from '../api/hash.js';
import type { JsonObject } from '../encoding/json.js';
import { isPlainObject } from '../encoding/json.js';
import type { Container, Pod, PodCondition } from '../api/k8s-types.js';
import type { Quantity } from '../encoding/quantity.js';
import { compareQuantities, parseQuantity } from '../encoding/quantity.js';
import type { StoredRevision } from '../revisions/history.js';
import { toSidecarSetRevision } from '../revisions/history.js';
import type { SidecarSetContext } from './context.js';
import { containerStatus, podContainer } from '../api/pod-containers.js';

export interface ResourceChange {
  container: string;
  from: JsonObject;
  /** Requests defaulted from limits, as the API server stores them. */
  to: JsonObject;
}

const RESIZABLE = ['cpu', 'memory'] as const;
const KINDS = ['requests', 'limits'] as const;
type Kind = (typeof KINDS)[number];

/** The pod conditions the kubelet sets while a resize is not applied (KEP-1287). */
export const RESIZE_PENDING = 'PodResizePending';
export const RESIZE_IN_PROGRESS = 'PodResizeInProgress';

/**
 * The versions the SidecarSet's ControllerRevisions record, each as its hash without image → its
 * hash without image and resources: a pod that records one of them differs from the SidecarSet
 * only in images and resources when the second matches the SidecarSet's.
 */
export function resizableVersions(revisions: readonly StoredRevision[]): Map<string, string> {
  const versions = new Map<string, string>();
  for (const stored of revisions) {
    const spec = toSidecarSetRevision(stored)?.spec;
    if (spec === undefined) continue;
    versions.set(computeSidecarSetHashWithoutImage(spec), computeHashWithoutImageResources(spec));
  }
  return versions;
}

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

/** Requests default to limits where absent (SetDefaults_Pod). */
function defaulted(resources: JsonObject): JsonObject {
  const limits = quantities(resources, 'limits');
  const requests = { ...limits, ...quantities(resources, 'requests') };
  const out: JsonObject = { ...resources };
  if (Object.keys(limits).length > 0) out['limits'] = limits;
  if (Object.keys(requests).length > 0) out['requests'] = requests;
  return out;
}

function quantities(resources: JsonObject, kind: Kind): Record<string, string> {
  const list = resources[kind];
  const out: Record<string, string> = {};
  if (!isPlainObject(list)) return out;
  for (const [name, value] of Object.entries(list)) {
    if (typeof value === 'string' || typeof value === 'number') out[name] = String(value);
  }
  return out;
}

function sameResources(a: JsonObject, b: JsonObject): boolean {
  return KINDS.every((kind) => {
    const qa = quantities(a, kind);
    const qb = quantities(b, kind);
    const names = new Set([...Object.keys(qa), ...Object.keys(qb)]);
    return [...names].every((name) => sameQuantity(qa[name], qb[name]));
  });
}

function sameQuantity(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const qa = parsed(a);
  const qb = parsed(b);
  return qa !== undefined && qb !== undefined ? compareQuantities(qa, qb) === 0 : a === b;
}

function parsed(value: string): Quantity | undefined {
  try {
    return parseQuantity(value);
  } catch {
    return undefined;
  }
}

/** Kubernetes' GetPodQOS over containers and init containers, cpu and memory only. */
function qosClass(pod: Readonly<Pod>): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  let any = false;
  let guaranteed = true;
  for (const c of [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]) {
    const resources = defaulted(c.resources ?? {});
    const requests = quantities(resources, 'requests');
    const limits = quantities(resources, 'limits');
    for (const name of RESIZABLE) {
      if (!isZero(requests[name]) || !isZero(limits[name])) any = true;
      if (limits[name] === undefined || !sameQuantity(requests[name], limits[name])) {
        guaranteed = false;
      }
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

function isZero(value: string | undefined): boolean {
  if (value === undefined) return true;
  const q = parsed(value);
  return q !== undefined && q.mantissa === 0n;
}
