/**
 * The health gate of a rollout (docs/adr/0014-health-gated-rollouts.md): whether it must pause
 * because too many upgraded pods failed, or because the status records such a pause that still
 * holds: until the spec changes, a user resumes, or the gate is turned off. Pure, so a new leader
 * keeps the pause the old one found.
 */
import type { Pod } from '../api/k8s-types.js';
import { compareByName, podNamespace } from '../api/pod-ref.js';
import type { SidecarSetContext } from './context.js';
import type { Failure } from './health-judge.js';
import { judgePod } from './health-judge.js';
import type { HealthSettings } from '../api/health-gate-annotations.js';
import { healthSettings } from '../api/health-gate-annotations.js';
import type { SidecarSet } from '../api/sidecarset-types.js';
import { ROLLOUT_PAUSED, ROLLOUT_PAUSED_REASONS } from '../api/sidecarset-types.js';

interface FailedPod {
  namespace: string;
  name: string;
  failure: Failure;
  message: string;
  upgradedAt: Date;
  /** Upgraded after the last resume: it counts toward the threshold. */
  counts: boolean;
}

export interface RolloutHealth {
  /** Upgraded pods judged (current version, still active). */
  judged: number;
  healthy: number;
  progressing: number;
  /** In namespace/name order. */
  failed: FailedPod[];
  /** Failed pods that pause the rollout. */
  threshold: number;
  /** Failed pods that count reach the threshold. */
  pause: boolean;
  /** For people: the pods that failed and why (empty when nothing failed). */
  message: string;
  /** The first progress deadline of a pod still progressing: judge again then. */
  recheckAt?: Date;
}

/** Pods named in a message before "… and N more". */
const NAMED_PODS = 5;

export function rolloutHealth(
  ctx: SidecarSetContext,
  pods: readonly Readonly<Pod>[],
  matched: number,
  settings: HealthSettings,
  now: Date,
): RolloutHealth {
  const health: RolloutHealth = {
    judged: 0,
    healthy: 0,
    progressing: 0,
    failed: [],
    threshold: pauseThreshold(settings.unhealthyPodsToPause, matched),
    pause: false,
    message: '',
  };
  if (!settings.enabled) return health;
  const resumedAt = settings.resumedAt?.getTime();
  for (const pod of pods) {
    const judged = judgePod(ctx, pod, settings, now);
    if (judged === undefined) continue;
    health.judged++;
    if (judged.state === 'Failed') {
      health.failed.push({
        namespace: podNamespace(pod),
        name: pod.metadata.name ?? '',
        failure: judged.failure,
        message: judged.message,
        upgradedAt: judged.upgradedAt,
        counts: resumedAt === undefined || judged.upgradedAt.getTime() >= resumedAt,
      });
    } else if (judged.state === 'Healthy') health.healthy++;
    else {
      health.progressing++;
      const deadline = judged.upgradedAt.getTime() + settings.progressDeadlineSeconds * 1000;
      health.recheckAt = new Date(Math.min(deadline, health.recheckAt?.getTime() ?? Infinity));
    }
  }
  health.failed.sort(compareByName);
  const counted = health.failed.filter((f) => f.counts);
  health.pause = counted.length >= health.threshold;
  health.message = describe(counted, health.threshold);
  return health;
}

function describe(counted: readonly FailedPod[], threshold: number): string {
  if (counted.length === 0) return '';
  const named = counted
    .slice(0, NAMED_PODS)
    .map((f) => `${f.namespace}/${f.name} (${f.message})`)
    .join(', ');
  const more = counted.length > NAMED_PODS ? ` and ${counted.length - NAMED_PODS} more` : '';
  return `${counted.length} upgraded pod(s) failed (pause at ${threshold}): ${named}${more}`;
}

/** The number of failed pods that pauses a rollout of `matched` pods: at least 1. */
export function pauseThreshold(value: string, matched: number): number {
  const percent = value.endsWith('%');
  const n = Number(percent ? value.slice(0, -1) : value);
  return Math.max(1, percent ? Math.ceil((n * matched) / 100) : n);
}

/** The gate as the planner asks it: the upgraded pods' health, or the pause the status holds. */
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
