/**
 * A status condition that is there only while something fails (PodUpdateFailure,
 * RevisionHistoryFailure), as a Deployment's ReplicaFailure: True with the failure in its message,
 * removed once it works again. Its lastTransitionTime is when the failure began.
 */
import type { SidecarSetCondition } from '../api/sidecarset-types.js';
import { formatTimestamp } from '../pod-annotations/pod-hash-annotation.js';

/**
 * The conditions with `type` as it should be now: True with `failure` as its message, or removed
 * when `failure` is undefined. Undefined when they need no change.
 */
export function nextFailureConditions(
  conditions: readonly SidecarSetCondition[] | undefined,
  { type, reason }: { type: string; reason: string },
  failure: string | undefined,
  now: Date,
): SidecarSetCondition[] | undefined {
  const previous = conditions?.find((c) => c.type === type);
  const others = (conditions ?? []).filter((c) => c.type !== type);
  if (failure === undefined) return previous === undefined ? undefined : others;
  if (previous?.message === failure) return undefined;
  const condition: SidecarSetCondition = {
    type,
    status: 'True',
    reason,
    message: failure,
    lastTransitionTime: previous?.lastTransitionTime ?? formatTimestamp(now),
  };
  return [...others, condition];
}

/** The condition's message when it is True: what fails. */
export function failureOf(
  conditions: readonly SidecarSetCondition[] | undefined,
  type: string,
): string | undefined {
  const condition = conditions?.find((c) => c.type === type);
  return condition?.status === 'True' ? (condition.message ?? '') : undefined;
}
