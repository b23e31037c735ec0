/**
 * Kubernetes resource requirements as the API server reads them: requests defaulted from limits,
 * quantities compared by value ("1" and "1000m" are the same cpu), and a pod's QoS class.
 */
import type { JsonObject } from '../encoding/json.js';
import { isPlainObject } from '../encoding/json.js';
import type { Quantity } from '../encoding/quantity.js';
import { compareQuantities, parseQuantity } from '../encoding/quantity.js';
import type { Pod } from './k8s-types.js';

/** The resources that resize in place, and the only ones the QoS class counts. */
export const RESIZABLE = ['cpu', 'memory'] as const;
export const KINDS = ['requests', 'limits'] as const;
type Kind = (typeof KINDS)[number];

/** Requests default to limits where absent (SetDefaults_Pod). */
export function defaulted(resources: JsonObject): JsonObject {
  const limits = quantities(resources, 'limits');
  const requests = { ...limits, ...quantities(resources, 'requests') };
  const out: JsonObject = { ...resources };
  if (Object.keys(limits).length > 0) out['limits'] = limits;
  if (Object.keys(requests).length > 0) out['requests'] = requests;
  return out;
}

export function quantities(resources: JsonObject, kind: Kind): Record<string, string> {
  const list = resources[kind];
  const out: Record<string, string> = {};
  if (!isPlainObject(list)) return out;
  for (const [name, value] of Object.entries(list)) {
    if (typeof value === 'string' || typeof value === 'number') out[name] = String(value);
  }
  return out;
}

export function sameResources(a: JsonObject, b: JsonObject): boolean {
  return KINDS.every((kind) => {
    const qa = quantities(a, kind);
    const qb = quantities(b, kind);
    const names = new Set([...Object.keys(qa), ...Object.keys(qb)]);
    return [...names].every((name) => sameQuantity(qa[name], qb[name]));
  });
}

export function sameQuantity(a: string | undefined, b: string | undefined): boolean {
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
export function qosClass(pod: Readonly<Pod>): 'Guaranteed' | 'Burstable' | 'BestEffort' {
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
