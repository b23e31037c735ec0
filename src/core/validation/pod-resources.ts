/** Container resources: quantities non-negative, each request at most its limit. */
import type { JsonObject } from '../encoding/json.js';
import type { FieldError } from './field-error.js';
import { childPath, indexPath, invalid } from './field-error.js';
import { isPlainObject } from '../encoding/json.js';
import { quantityOf } from '../encoding/quantity-value.js';

export function validateResources(
  resources: Readonly<JsonObject> | undefined,
  p: string,
): FieldError[] {
  if (resources === undefined) return [];
  const limits = isPlainObject(resources['limits']) ? resources['limits'] : {};
  const requests = isPlainObject(resources['requests']) ? resources['requests'] : {};
  const errs: FieldError[] = [];
  for (const [kind, list] of [
    ['limits', limits],
    ['requests', requests],
  ] as const) {
    for (const [name, raw] of Object.entries(list)) {
      const q = quantityOf(raw);
      if (q !== undefined && q < 0) {
        errs.push(
          invalid(
            indexPath(childPath(p, kind), name),
            quantityText(raw),
            'must be greater than or equal to 0',
          ),
        );
      }
    }
  }
  for (const [name, raw] of Object.entries(requests)) {
    const req = quantityOf(raw);
    const lim = quantityOf(limits[name]);
    if (req !== undefined && lim !== undefined && req > lim) {
      errs.push(
        invalid(
          indexPath(childPath(p, 'requests'), name),
          quantityText(raw),
          `must be less than or equal to ${name} limit of ${quantityText(limits[name])}`,
        ),
      );
    }
  }
  return errs;
}

function quantityText(v: unknown): string {
  return typeof v === 'number' ? String(v) : typeof v === 'string' ? v : '';
}
