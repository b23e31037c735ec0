/**
 * The health gate of one SidecarSet's rollout, as the planner asks it: the upgraded pods' health
 * (rollout-health.ts) and the pause already recorded in the status. A pause holds, even once the
 * failed pods recover, until the spec changes (a new generation: a fix or an undo), a user resumes
 * (sidecarset.dev/resumed-at later than the pause), or the gate is turned off. It lives in the
 * status, not in memory, so a new leader keeps it.
 */
import type { Pod } from '../api/k8s-types.js';
import type { SidecarSet } from '../api/sidecarset-types.js';
import type { SidecarSetContext } from './context.js';
import type { RolloutHealth } from './rollout-health.js';
import { rolloutHealth } from './rollout-health.js';
import { ROLLOUT_PAUSED, ROLLOUT_PAUSED_REASONS } from '../api/sidecarset-types.js';
import { healthSettings } from '../api/health-gate-annotations.js';

export function rolloutGate(
  sidecarSet: SidecarSet,
  ctx: SidecarSetContext,
  upgraded: readonly Readonly<Pod>[],
  matched: number,
  now: Date,
): RolloutHealth {
  const settings = healthSettings(sidecarSet);
  const health = rolloutHealth(ctx, upgraded, matched, settings, now);
  if (!settings.enabled || health.pause) return health;
  const held = heldPause(sidecarSet, settings.resumedAt);
  return held === undefined ? health : { ...health, pause: true, message: held };
}

/** The message of a pause the status records that still holds, if any. */
function heldPause(sidecarSet: SidecarSet, resumedAt: Date | undefined): string | undefined {
  const condition = sidecarSet.status?.conditions?.find((c) => c.type === ROLLOUT_PAUSED);
  if (condition?.status !== 'True' || condition.reason !== ROLLOUT_PAUSED_REASONS.unhealthy) {
    return undefined;
  }
  if (condition.observedGeneration !== sidecarSet.metadata.generation) return undefined;
  const since = Date.parse(condition.lastTransitionTime ?? '');
  if (resumedAt !== undefined && !(resumedAt.getTime() < since)) return undefined;
  return condition.message ?? '';
}
