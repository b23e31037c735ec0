/**
 * The health gate's tuning annotations on a SidecarSet (never new spec fields: OpenKruise
 * manifests stay valid and unchanged). Names, defaults and accepted values:
 * docs/adr/0014-health-gated-rollouts.md. Each annotation is parsed here only: the controller
 * reads it tolerantly (healthSettings below: a bad value falls back to the default and is
 * reported), the validating webhook and `sidecarset validate` refuse a bad value
 * (src/core/validation/health-annotations.ts).
 */
import type { SidecarSet } from './sidecarset-types.js';

const HEALTH_GATE = 'sidecarset.dev/health-gate';
const PROGRESS_DEADLINE_SECONDS = 'sidecarset.dev/progress-deadline-seconds';
const MAX_SIDECAR_RESTARTS = 'sidecarset.dev/max-sidecar-restarts';
const UNHEALTHY_PODS_TO_PAUSE = 'sidecarset.dev/unhealthy-pods-to-pause';
/** Set by `sidecarset rollout resume` (RFC 3339): failures of pods upgraded before it no longer count. */
export const RESUMED_AT = 'sidecarset.dev/resumed-at';

const HEALTH_DEFAULTS = {
  progressDeadlineSeconds: 600,
  maxSidecarRestarts: 3,
  unhealthyPodsToPause: '1',
} as const;

/**
 * A week: a longer deadline would also overflow the controller's timer for the recheck
 * (setTimeout takes at most 2^31-1 ms, about 24.8 days, and fires at once beyond).
 */
const MAX_PROGRESS_DEADLINE_SECONDS = 7 * 24 * 60 * 60;
/** restartCount and replica counts are int32 in the Kubernetes API. */
const INT32_MAX = 2_147_483_647;

/** One tuning annotation: its key, what it accepts (for errors and warnings) and its parser. */
export interface TuningAnnotation<T> {
  readonly key: string;
  /** What is accepted, to follow "must be": `an integer from 1 to 604800`. */
  readonly accepts: string;
  /** The whole set of accepted values, when it is small (a Kubernetes "Unsupported value"). */
  readonly values?: readonly string[];
  /** The value, or undefined when `raw` is not accepted. */
  parse(raw: string): T | undefined;
}

function integer(raw: string, min: number, max: number): number | undefined {
  if (!/^\d+$/.test(raw)) return undefined;
  const n = Number(raw);
  return n >= min && n <= max ? n : undefined;
}

const GATE_VALUES = ['on', 'off'] as const;

const HEALTH_GATE_ANNOTATION: TuningAnnotation<boolean> = {
  key: HEALTH_GATE,
  accepts: '"on" or "off"',
  values: GATE_VALUES,
  parse: (raw) => (raw === 'on' ? true : raw === 'off' ? false : undefined),
};

const PROGRESS_DEADLINE_ANNOTATION: TuningAnnotation<number> = {
  key: PROGRESS_DEADLINE_SECONDS,
  accepts: `an integer number of seconds from 1 to ${MAX_PROGRESS_DEADLINE_SECONDS} (7 days)`,
  parse: (raw) => integer(raw, 1, MAX_PROGRESS_DEADLINE_SECONDS),
};

const MAX_SIDECAR_RESTARTS_ANNOTATION: TuningAnnotation<number> = {
  key: MAX_SIDECAR_RESTARTS,
  accepts: `an integer from 0 to ${INT32_MAX}`,
  parse: (raw) => integer(raw, 0, INT32_MAX),
};

const UNHEALTHY_PODS_TO_PAUSE_ANNOTATION: TuningAnnotation<string> = {
  key: UNHEALTHY_PODS_TO_PAUSE,
  accepts: `a number of pods from 1 to ${INT32_MAX}, or a percentage of matched pods from 1% to 100%`,
  parse: (raw) => {
    const percent = raw.endsWith('%');
    const n = integer(percent ? raw.slice(0, -1) : raw, 1, percent ? 100 : INT32_MAX);
    return n === undefined ? undefined : raw;
  },
};

/** RFC 3339 with seconds and an offset, as metav1.Time and `sidecarset rollout resume` write it. */
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

const RESUMED_AT_ANNOTATION: TuningAnnotation<Date> = {
  key: RESUMED_AT,
  accepts: 'an RFC 3339 time such as "2026-07-02T10:05:00Z"',
  parse: (raw) => {
    const time = Date.parse(raw);
    return RFC3339.test(raw) && !Number.isNaN(time) ? new Date(time) : undefined;
  },
};

/** Every tuning annotation of the health gate. */
export const HEALTH_ANNOTATIONS: readonly TuningAnnotation<unknown>[] = [
  HEALTH_GATE_ANNOTATION,
  PROGRESS_DEADLINE_ANNOTATION,
  MAX_SIDECAR_RESTARTS_ANNOTATION,
  UNHEALTHY_PODS_TO_PAUSE_ANNOTATION,
  RESUMED_AT_ANNOTATION,
];

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
