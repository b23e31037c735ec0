/**
 * The SidecarSet status condition RevisionHistoryFailure: the controller cannot record the
 * SidecarSet's ControllerRevisions (their namespace, --leader-election-namespace, does not exist,
 * or RBAC forbids it). Without them a pod on an older version cannot be resized in place to the
 * current one, so a resources-only change is not upgradable, and `rollout undo` finds no history.
 * True while registering fails; removed once it succeeds.
 */
import type { SidecarSetCondition } from '../api/sidecarset-types.js';
import { failureOf, nextFailureConditions } from './failure-condition.js';

const CONDITION = { type: 'RevisionHistoryFailure', reason: 'CannotRecordRevision' };

/** The condition's message for a failure to record the latest ControllerRevision. */
export function revisionFailureMessage(err: unknown): string {
  const why = err instanceof Error ? err.message : String(err);
  return (
    `cannot record the ControllerRevision: ${why}; until it can, a change of resources alone ` +
    'is not applied in place, and rollout undo has no history to go back to'
  );
}

/**
 * The conditions with RevisionHistoryFailure as it should be now (`failure`: its message, or
 * undefined when the revision was recorded), or undefined when they need no change.
 */
export function nextRevisionFailureConditions(
  conditions: readonly SidecarSetCondition[] | undefined,
  failure: string | undefined,
  now: Date,
): SidecarSetCondition[] | undefined {
  return nextFailureConditions(conditions, CONDITION, failure, now);
}

/** The condition's message when it is True: why revisions cannot be recorded. */
export function revisionHistoryFailure(
  conditions: readonly SidecarSetCondition[] | undefined,
): string | undefined {
  return failureOf(conditions, CONDITION.type);
}
