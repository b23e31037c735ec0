/** appsvalidation.ValidatePositiveIntOrPercent, private to validation. */
import type { FieldError } from './field-error.js';
import { invalid } from './field-error.js';
import { regexError } from './names-and-selectors.js';

const PERCENT_RE = /^[0-9]+%$/;

export function validatePositiveIntOrPercent(value: unknown, path: string): FieldError[] {
  if (typeof value === 'string') {
    return PERCENT_RE.test(value)
      ? []
      : [
          invalid(
            path,
            value,
            regexError(
              "a valid percent string must be a numeric string followed by an ending '%'",
              '[0-9]+%',
              '1%',
              '93%',
            ),
          ),
        ];
  }
  if (typeof value === 'number' && Number.isInteger(value)) {
    return value < 0 ? [invalid(path, value, 'must be greater than or equal to 0')] : [];
  }
  return [invalid(path, value, "must be an integer or percentage (e.g '5%')")];
}

/** True unless the value is absent or the integer 0 (intStrIsSet upstream). */
export function isIntOrPercentSet(value: unknown): boolean {
  return value !== undefined && value !== 0;
}
