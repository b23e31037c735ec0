/**
 * Kubernetes resource quantities as plain numbers, precise enough for validation (sign checks,
 * request ≤ limit, expression checks). Not for arithmetic whose result is written back.
 */
import { SidecarSetError } from '../errors.js';
import { parseQuantity } from './quantity.js';

/** The quantity's value in base units, or undefined when the string is not a quantity. */
export function parseQuantityValue(text: string): number | undefined {
  try {
    const q = parseQuantity(text);
    return Number(q.mantissa) * 10 ** q.scale;
  } catch (err) {
    if (err instanceof SidecarSetError) return undefined;
    throw err;
  }
}

/** A resource list value (string or number, as YAML gives it) as a number. */
export function quantityOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  return typeof value === 'string' ? parseQuantityValue(value) : undefined;
}
