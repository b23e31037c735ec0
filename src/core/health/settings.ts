/**
 * The health gate's settings, read from the SidecarSet's own annotations (never from new spec
 * fields: OpenKruise manifests stay valid and unchanged). Names and defaults:
 * docs/adr/0014-health-gated-rollouts.md.
 */
import type { SidecarSet } from '../sidecarset-types.js';

export const HEALTH_GATE = 'sidecarset.dev/health-gate';
export const PROGRESS_DEADLINE_SECONDS = 'sidecarset.dev/progress-deadline-seconds';
export const MAX_SIDECAR_RESTARTS = 'sidecarset.dev/max-sidecar-restarts';
export const UNHEALTHY_PODS_TO_PAUSE = 'sidecarset.dev/unhealthy-pods-to-pause';
/** Set by `sidecarset rollout resume` (RFC 3339): failures of pods upgraded before it no longer count. */
export const RESUMED_AT = 'sidecarset.dev/resumed-at';

export const HEALTH_DEFAULTS = {
  progressDeadlineSeconds: 600,
  maxSidecarRestarts: 3,
  unhealthyPodsToPause: '1',
} as const;

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
  /** Annotations that could not be read, each replaced by its default. */
  problems: string[];
}

const COUNT = /^\d{1,9}$/;
const COUNT_OR_PERCENT = /^(\d{1,9})(%?)$/;

export function healthSettings(sidecarSet: SidecarSet): HealthSettings {
  const annotations = sidecarSet.metadata.annotations ?? {};
  const problems: string[] = [];
  const read = <T>(key: string, fallback: T, parse: (raw: string) => T | undefined): T => {
    const raw = annotations[key];
    if (raw === undefined) return fallback;
    const value = parse(raw.trim());
    if (value !== undefined) return value;
    problems.push(`${key}: ${JSON.stringify(raw)} is not valid; using ${String(fallback)}`);
    return fallback;
  };
  const gate = read(HEALTH_GATE, 'on', (raw) => (raw === 'on' || raw === 'off' ? raw : undefined));
  const deadline = read(
    PROGRESS_DEADLINE_SECONDS,
    HEALTH_DEFAULTS.progressDeadlineSeconds,
    (raw) => (COUNT.test(raw) && Number(raw) > 0 ? Number(raw) : undefined),
  );
  const restarts = read(MAX_SIDECAR_RESTARTS, HEALTH_DEFAULTS.maxSidecarRestarts, (raw) =>
    COUNT.test(raw) ? Number(raw) : undefined,
  );
  const toPause = read<string>(
    UNHEALTHY_PODS_TO_PAUSE,
    HEALTH_DEFAULTS.unhealthyPodsToPause,
    (raw) => {
      const match = COUNT_OR_PERCENT.exec(raw);
      if (match === null) return undefined;
      const n = Number(match[1]);
      return n > 0 && (match[2] === '' || n <= 100) ? raw : undefined;
    },
  );
  const resumedAt = read<Date | undefined>(RESUMED_AT, undefined, (raw) => {
    const time = Date.parse(raw);
    return /^\d{4}-\d\d-\d\dT/.test(raw) && !Number.isNaN(time) ? new Date(time) : undefined;
  });
  return {
    enabled: gate === 'on',
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
