/**
 * The SidecarSet status condition PodUpdateFailure: the API server refused the controller's last
 * pod update (an admission policy, RBAC, a webhook on pod UPDATE), as a Deployment's
 * ReplicaFailure says that its ReplicaSet cannot create pods. True while writes fail; removed once
 * a round's writes go through or nothing is left to write. It survives a restart or a new leader,
 * which keeps it until its own writes say otherwise.
 */
import type { SidecarSetCondition } from '../api/sidecarset-types.js';
import { failureOf, nextFailureConditions } from './failure-condition.js';

const CONDITION = { type: 'PodUpdateFailure', reason: 'FailedUpdate' };

/** What the controller's pod writes for a SidecarSet came to, as far as this process knows. */
export type PodWriteOutcome =
  /** The last round that wrote to pods: every write went through. */
  | { failed: false }
  /** The last round that wrote to pods: this one failed, and why. */
  | { failed: true; message: string };

/**
 * The conditions with PodUpdateFailure as it should be now, or undefined when they need no
 * change. `outcome` undefined: this process has not written to the pods since it started.
 */
export function nextUpdateFailureConditions(
  conditions: readonly SidecarSetCondition[] | undefined,
  { outcome, complete }: { outcome: PodWriteOutcome | undefined; complete: boolean },
  now: Date,
): SidecarSetCondition[] | undefined {
  if (complete || outcome?.failed === false) {
    return nextFailureConditions(conditions, CONDITION, undefined, now);
  }
  if (outcome === undefined) return undefined;
  return nextFailureConditions(conditions, CONDITION, outcome.message, now);
}

/** The condition's message when it is True: why pod updates fail. */
export function podUpdateFailure(
  conditions: readonly SidecarSetCondition[] | undefined,
): string | undefined {
  return failureOf(conditions, CONDITION.type);
}
