/**
 * Kubernetes resource quantities as plain numbers, precise enough for validation (sign checks,
 * request ≤ limit, expression checks). Not for arithmetic whose result is written back.
 */
const QUANTITY_RE =
  /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/;

const SUFFIX: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** The quantity's value in base units, or undefined when the string is not a quantity. */
export function parseQuantityValue(text: string): number | undefined {
  const m = QUANTITY_RE.exec(text);
  if (m === null) return undefined;
  const base = Number(m[1]);
  if (m[2] !== undefined) return Number(`${m[1] ?? ''}${m[2]}`);
  return m[3] === undefined ? base : base * (SUFFIX[m[3]] ?? 1);
}

/** A resource list value (string or number, as YAML gives it) as a number. */
export function quantityOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  return typeof value === 'string' ? parseQuantityValue(value) : undefined;
}
