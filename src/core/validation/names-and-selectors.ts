/**
 * Kubernetes' name and label-selector validation (apimachinery v0.32, the version OpenKruise
 * builds against), returning field errors with the upstream messages.
 */
import type { LabelSelector, LabelSelectorRequirement } from '../api/k8s-types.js';
import type { FieldError } from './field-error.js';
import { childPath, forbidden, indexPath, invalid, required } from './field-error.js';

const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QUALIFIED_NAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_RE = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);
const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);

const LABEL_VALUE_MAX_LENGTH = 63;
const DNS1123_LABEL_MAX_LENGTH = 63;
const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;

/** validation.RegexError */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  // Go appends "'x', " per example and " or " between them, hence the double space.
  const eg = examples.map((e) => `'${e}', `).join(' or ');
  return `${msg} (e.g. ${eg}regex used for validation is '${fmt}')`;
}

export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** Length in bytes of the UTF-8 encoding, as Go's len() counts. */
export function byteLength(s: string): number {
  let n = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  }
  return n;
}

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH)
    errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!DNS1123_LABEL_RE.test(value)) {
    errs.push(
      DNS1123_SUBDOMAIN_RE.test(value)
        ? 'must not contain dots'
        : regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, 'my-name', '123-abc'),
    );
  }
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) {
    errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  }
  if (!DNS1123_SUBDOMAIN_RE.test(value)) {
    errs.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  }
  return errs;
}

/** A label key / annotation key: an optional DNS-subdomain prefix and '/', then a name ≤ 63. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix === '') errs.push('prefix part must be non-empty');
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name === '') errs.push('name part must be non-empty');
  else if (byteLength(name) > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!QUALIFIED_NAME_RE.test(name)) {
    errs.push(
      `name part ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`,
    );
  }
  return errs;
}

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenError(LABEL_VALUE_MAX_LENGTH));
  if (!LABEL_VALUE_RE.test(value)) {
    errs.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  }
  return errs;
}

/** Label keys and values; every error sits at `path` itself (ValidateLabels). Keys sorted. */
export function validateLabels(
  labels: Readonly<Record<string, string>> | undefined,
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of Object.keys(labels ?? {}).sort()) {
    for (const msg of isQualifiedName(key)) errs.push(invalid(path, key, msg));
    const value = labels?.[key] ?? '';
    for (const msg of isValidLabelValue(value)) errs.push(invalid(path, value, msg));
  }
  return errs;
}

function validateLabelSelectorRequirement(
  req: Readonly<LabelSelectorRequirement>,
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) {
        errs.push(
          required(
            childPath(path, 'values'),
            "must be specified when `operator` is 'In' or 'NotIn'",
          ),
        );
      }
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) {
        errs.push(
          forbidden(
            childPath(path, 'values'),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
          ),
        );
      }
      break;
    default:
      errs.push(
        invalid(childPath(path, 'operator'), req.operator, 'not a valid selector operator'),
      );
  }
  for (const msg of isQualifiedName(req.key))
    errs.push(invalid(childPath(path, 'key'), req.key, msg));
  values.forEach((v, i) => {
    for (const msg of isValidLabelValue(v)) {
      errs.push(invalid(indexPath(childPath(path, 'values'), i), v, msg));
    }
  });
  return errs;
}

/** metav1validation.ValidateLabelSelector; an absent selector is valid. */
export function validateLabelSelector(
  selector: Readonly<LabelSelector> | undefined,
  path: string,
): FieldError[] {
  if (selector === undefined) return [];
  const errs = validateLabels(selector.matchLabels, childPath(path, 'matchLabels'));
  (selector.matchExpressions ?? []).forEach((req, i) => {
    errs.push(
      ...validateLabelSelectorRequirement(req, indexPath(childPath(path, 'matchExpressions'), i)),
    );
  });
  return errs;
}

/** True when the selector is absent or has neither matchLabels nor matchExpressions. */
export function isSelectorEmpty(selector: Readonly<LabelSelector> | undefined): boolean {
  if (selector === undefined) return true;
  return (
    Object.keys(selector.matchLabels ?? {}).length === 0 &&
    (selector.matchExpressions ?? []).length === 0
  );
}
