/**
 * The readiness gate `InPlaceUpdateReady` (docs/rollouts.md): a pod that declares it leaves its
 * Services while the controller restarts a sidecar in place. The gate's state lives on the pod
 * alone, never in the controller's memory, so that a restart, a new leader, a deleted SidecarSet
 * or a new revision never leaves a pod out of traffic: each round opens, from the pod as it is,
 * every gate its SidecarSet closed whose sidecars no longer change (as OpenKruise's in-place
 * `Refresh` does, pkg/util/inplaceupdate/inplace_update.go).
 *
 * The condition says who closed it: reason `StartInPlaceUpdate` (OpenKruise's) and a message that
 * names the SidecarSet, because a CloneSet's in-place update closes the same gate with the same
 * reason, and a pod may carry sidecars of several SidecarSets.
 */
import type { Pod, PodCondition } from '../api/k8s-types.js';
import { containerStatus } from '../api/pod-containers.js';
import type { SidecarSetContext } from './context.js';
import { isStateConsistent, isUpdated } from './pod-state.js';
import { podController } from './recreation.js';

export const READINESS_GATE = 'InPlaceUpdateReady';
const CLOSED = 'StartInPlaceUpdate';
const CLOSED_BY = /^SidecarSet (\S+): /;

/** The pod declares the gate in spec.readinessGates. */
export function hasReadinessGate(pod: Readonly<Pod>): boolean {
  return (pod.spec.readinessGates ?? []).some((g) => g['conditionType'] === READINESS_GATE);
}

/**
 * The condition as the controller writes it. Always with a message: the write is a strategic
 * merge by type, so a message left out would keep the previous one.
 */
export function gateCondition(
  status: 'True' | 'False',
  reason: string,
  message: string,
  now: Date,
): PodCondition {
  return { type: READINESS_GATE, status, reason, message, lastTransitionTime: now.toISOString() };
}

/** The gate closed by SidecarSet `name` before it restarts a sidecar in place. */
export function closedGate(name: string, now: Date): PodCondition {
  return gateCondition('False', CLOSED, `SidecarSet ${name}: upgrading sidecars in place`, now);
}

export function gateStatus(pod: Readonly<Pod>): string | undefined {
  return gateOf(pod)?.status;
}

/**
 * This SidecarSet closed the pod's gate: its name is in the message. A gate closed without a
 * message was closed by a controller of version 0.1, which did not name itself; it is taken as
 * this SidecarSet's unless a CloneSet manages the pod (OpenKruise's CloneSet closes it so too).
 */
export function isGateClosedBy(name: string, pod: Readonly<Pod>): boolean {
  const gate = gateOf(pod);
  if (gate?.status !== 'False' || gate.reason !== CLOSED) return false;
  const message = gate.message ?? '';
  if (message === '') return !(podController(pod) ?? '').startsWith('CloneSet/');
  return CLOSED_BY.exec(message)?.[1] === name;
}

/**
 * The pods whose gate this SidecarSet closed and may open now: nothing it wrote is still changing
 * (the kubelet runs what the spec says), and, on a pod that records the current version, its new
 * sidecars are ready. A pod whose write failed, or that a newer version overtook, opens as soon as
 * its sidecars are consistent: nothing is going to restart them.
 */
export function gatesToOpen(ctx: SidecarSetContext, pods: readonly Readonly<Pod>[]): Pod[] {
  return pods.filter(
    (pod) =>
      isGateClosedBy(ctx.name, pod) &&
      isStateConsistent(ctx, pod) &&
      (!isUpdated(ctx, pod) || sidecarsReady(ctx, pod)),
  );
}

/** Every sidecar container of the SidecarSet reports ready. */
export function sidecarsReady(ctx: SidecarSetContext, pod: Readonly<Pod>): boolean {
  return ctx.containerNames.every((n) => containerStatus(pod, n)?.ready === true);
}

function gateOf(pod: Readonly<Pod>): PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === READINESS_GATE);
}
