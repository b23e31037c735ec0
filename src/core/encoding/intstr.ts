/**
 * Int-or-percent values scaled against a pod count, with OpenKruise's exact rounding
 * (OpenKruise pkg/util/tools.go: CalculatePartitionReplicas, GetScaledValueFromIntOrPercent). Invalid strings scale to 0 rather than throw, as the
 * controller does: validation is the place that rejects them.
 */
/** The Kubernetes IntOrString (src/core/api/k8s-types.ts), as JSON gives it. */
type IntOrString = number | string;

/** Go's strconv.ParseFloat for plain decimal input; anything else (hex, inf, nan) is rejected. */
const DECIMAL_FLOAT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
/** Go's strconv.Atoi. */
const DECIMAL_INT = /^[+-]?\d+$/;

function clamp(value: number, low: number, high: number): number {
  return Math.min(Math.max(value, low), high);
}

/**
 * CalculatePartitionReplicas: how many of `matched` pods stay on the old version. A percentage
 * rounds up, but below "100%" it always leaves at least one pod to upgrade when matched > 1.
 */
export function scalePartition(partition: IntOrString | undefined, matched: number): number {
  if (partition === undefined) return 0;
  if (typeof partition === 'number') return clamp(Math.trunc(partition), 0, matched);
  if (!partition.endsWith('%')) return 0;
  const digits = partition.slice(0, -1);
  if (!DECIMAL_FLOAT.test(digits)) return 0;
  let value = Math.ceil((Number(digits) * matched) / 100);
  if (matched > 1 && value === matched && partition !== '100%') value = matched - 1;
  return clamp(value, 0, matched);
}

/**
 * intstr.GetValueFromIntOrPercent(value, matched, roundUp=true): every "%" is dropped and the rest
 * read as an integer percentage (so "3" means 3%). Missing means 1. The result may be negative,
 * which admits no ready pod, like 0.
 */
export function scaleMaxUnavailable(value: IntOrString | undefined, matched: number): number {
  if (value === undefined) return 1;
  if (typeof value === 'number') return Math.trunc(value);
  const digits = value.replaceAll('%', '');
  if (!DECIMAL_INT.test(digits)) return 0;
  const percent = Number.parseInt(digits, 10);
  // Atoi fails on int64 overflow and the controller then uses 0.
  if (!Number.isSafeInteger(percent)) return 0;
  return Math.ceil((percent * matched) / 100);
}
