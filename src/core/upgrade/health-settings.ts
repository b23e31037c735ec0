/**
 * The health gate's settings, read tolerantly from the SidecarSet's annotations
 * (src/core/api/health-gate-annotations.ts): a value that does not parse falls back to the
 * default, and the problem is reported.
 */
import type { TuningAnnotation } from '../api/health-gate-annotations.js';
import {
  HEALTH_DEFAULTS,
  HEALTH_GATE_ANNOTATION,
  MAX_SIDECAR_RESTARTS_ANNOTATION,
  PROGRESS_DEADLINE_ANNOTATION,
  RESUMED_AT_ANNOTATION,
  UNHEALTHY_PODS_TO_PAUSE_ANNOTATION,
} from '../api/health-gate-annotations.js';
import type { SidecarSet } from '../api/sidecarset-types.js';

export interface HealthSettings {
  enabled: boolean;
  /** How long an upgraded pod has to become healthy. */
  progressDeadlineSeconds: number;
  /** Restarts of a sidecar since its upgrade that are tolerated; one more is a crash loop. */
  maxSidecarRestarts: number;
  /** Failed pods that pause the rollout: a count, or a percentage of matched pods ("10%"). */
  unhealthyPodsToPause: string;
  /** Only pods upgraded at or after this time count (the last resume). */
  resumedAt?: Date;
  /**
   * Annotations that could not be read, each replaced by its default. The webhook refuses such
   * values; they remain on SidecarSets stored before it did, or written while it was down.
   */
  problems: string[];
}

export function healthSettings(sidecarSet: SidecarSet): HealthSettings {
  const annotations = sidecarSet.metadata.annotations ?? {};
  const problems: string[] = [];
  const read = <T>(annotation: TuningAnnotation<T>, fallback: T, shown = String(fallback)): T => {
    const raw = annotations[annotation.key];
    if (raw === undefined) return fallback;
    const value = annotation.parse(raw);
    if (value !== undefined) return value;
    problems.push(
      `${annotation.key}: ${JSON.stringify(raw)} is not valid (must be ${annotation.accepts}); using ${shown}`,
    );
    return fallback;
  };
  const { progressDeadlineSeconds, maxSidecarRestarts, unhealthyPodsToPause } = HEALTH_DEFAULTS;
  const enabled = read(HEALTH_GATE_ANNOTATION, true, 'on');
  const deadline = read(PROGRESS_DEADLINE_ANNOTATION, progressDeadlineSeconds);
  const restarts = read(MAX_SIDECAR_RESTARTS_ANNOTATION, maxSidecarRestarts);
  const toPause = read<string>(UNHEALTHY_PODS_TO_PAUSE_ANNOTATION, unhealthyPodsToPause);
  const resumedAt = read<Date | undefined>(RESUMED_AT_ANNOTATION, undefined, 'none');
  return {
    enabled,
    progressDeadlineSeconds: deadline,
    maxSidecarRestarts: restarts,
    unhealthyPodsToPause: toPause,
    ...(resumedAt === undefined ? {} : { resumedAt }),
    problems,
  };
}

/** The number of failed pods that pauses a rollout of `matched` pods: at least 1. */
export function pauseThreshold(value: string, matched: number): number {
  const percent = value.endsWith('%');
  const n = Number(percent ? value.slice(0, -1) : value);
  return Math.max(1, percent ? Math.ceil((n * matched) / 100) : n);
}
