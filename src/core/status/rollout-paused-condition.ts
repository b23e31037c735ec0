/**
 * The SidecarSet status condition RolloutPaused, and what a reader (`sidecarset rollout status`)
 * makes of a SidecarSet: whether its rollout is paused, by whom and why.
 */
import type { SidecarSet, SidecarSetCondition } from '../api/sidecarset-types.js';
import { ROLLOUT_PAUSED, ROLLOUT_PAUSED_REASONS } from '../api/sidecarset-types.js';
import { formatTimestamp } from '../pod-annotations/pod-hash-annotation.js';
import type { RolloutHealth } from '../upgrade/rollout-health.js';

export interface PauseInput {
  health: RolloutHealth | undefined;
  /** spec.updateStrategy.paused. */
  userPaused: boolean;
  /** metadata.generation: a pause holds for this spec only (core/upgrade/rollout-health.ts). */
  generation: number | undefined;
}

/**
 * The conditions with RolloutPaused as it should be now, or undefined when they need no change. A
 * SidecarSet that was never paused gets no condition at all.
 */
export function nextRolloutPausedConditions(
  conditions: readonly SidecarSetCondition[] | undefined,
  input: PauseInput,
  now: Date,
): SidecarSetCondition[] | undefined {
  const previous = conditions?.find((c) => c.type === ROLLOUT_PAUSED);
  const next = nextCondition(previous, input);
  if (next === undefined) return undefined;
  if (
    previous !== undefined &&
    previous.status === next.status &&
    previous.reason === next.reason &&
    previous.message === next.message &&
    previous.observedGeneration === input.generation
  ) {
    return undefined;
  }
  const changed: SidecarSetCondition = {
    type: ROLLOUT_PAUSED,
    ...next,
    ...(input.generation === undefined ? {} : { observedGeneration: input.generation }),
    lastTransitionTime:
      previous?.status === next.status && previous.lastTransitionTime !== undefined
        ? previous.lastTransitionTime
        : formatTimestamp(now),
  };
  return [...(conditions ?? []).filter((c) => c.type !== ROLLOUT_PAUSED), changed];
}

function nextCondition(
  previous: SidecarSetCondition | undefined,
  { health, userPaused }: PauseInput,
): Pick<SidecarSetCondition, 'status' | 'reason' | 'message'> | undefined {
  if (health?.pause === true) {
    return { status: 'True', reason: ROLLOUT_PAUSED_REASONS.unhealthy, message: health.message };
  }
  if (userPaused) {
    return {
      status: 'True',
      reason: ROLLOUT_PAUSED_REASONS.user,
      message: 'updateStrategy.paused is true',
    };
  }
  if (previous === undefined || previous.status !== 'True') return undefined;
  return {
    status: 'False',
    reason: ROLLOUT_PAUSED_REASONS.resumed,
    message:
      previous.reason === ROLLOUT_PAUSED_REASONS.unhealthy
        ? 'failed pods no longer pause the rollout (resumed, a new revision, or the health gate is off)'
        : 'updateStrategy.paused is false',
  };
}

export type RolloutPause =
  | { paused: false }
  | { paused: true; by: 'user'; message: string }
  | { paused: true; by: 'health'; reason: string; message: string; since?: string };

/**
 * Whether a SidecarSet's rollout is paused and why, from the object alone: a user's pause
 * (spec.updateStrategy.paused), or the controller's (condition RolloutPaused, reason
 * UnhealthyPods). Both may hold; the automatic pause is reported first, since resuming must lift it.
 */
export function rolloutPause(sidecarSet: SidecarSet): RolloutPause {
  const condition = sidecarSet.status?.conditions?.find((c) => c.type === ROLLOUT_PAUSED);
  if (condition?.status === 'True' && condition.reason === ROLLOUT_PAUSED_REASONS.unhealthy) {
    const since = condition.lastTransitionTime;
    return {
      paused: true,
      by: 'health',
      reason: condition.reason,
      message: condition.message ?? '',
      ...(typeof since === 'string' ? { since } : {}),
    };
  }
  if (sidecarSet.spec.updateStrategy?.paused === true) {
    return { paused: true, by: 'user', message: 'updateStrategy.paused is true' };
  }
  return { paused: false };
}
