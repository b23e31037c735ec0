/** LabelSelector evaluation with OpenKruise's rule that an empty selector matches nothing. */
import { SidecarSetError } from '../errors.js';
import type { LabelSelector, LabelSelectorRequirement } from '../api/k8s-types.js';

export type Labels = Readonly<Record<string, string>>;

/** The label's value, as a Go map lookup reads it: never a property of Object.prototype. */
export function labelValue(labels: Labels, key: string): string | undefined {
  const value: unknown = labels[key];
  return typeof value === 'string' ? value : undefined;
}

/** True when the selector has neither matchLabels nor matchExpressions entries. */
export function isEmptySelector(selector: LabelSelector): boolean {
  return (
    Object.keys(selector.matchLabels ?? {}).length === 0 &&
    (selector.matchExpressions ?? []).length === 0
  );
}

/**
 * Standard label-selector semantics (matchLabels AND every expression), except that `{}` matches
 * nothing, as in OpenKruise's pod matcher. A nil selector also matches nothing. An unknown
 * operator is an error: OpenKruise rejects the pod rather than guess.
 */
export function selectorMatches(selector: LabelSelector | undefined, labels: Labels): boolean {
  if (selector === undefined || isEmptySelector(selector)) return false;
  return everyRequirementHolds(selector, labels);
}

/** The usual Kubernetes semantics, in which an empty selector matches everything. */
export function selectorMatchesAll(selector: LabelSelector, labels: Labels): boolean {
  return everyRequirementHolds(selector, labels);
}

/**
 * ValidatedLabelSelectorAsSelector, then Matches, as OpenKruise reads the upgrade strategy's
 * selectors (the canary selector, weightPriority): the usual semantics, except that a selector
 * that does not validate (an unknown operator, In without values, Exists with values) matches
 * nothing instead of failing.
 */
export function validSelectorMatches(selector: LabelSelector, labels: Labels): boolean {
  const valid = (selector.matchExpressions ?? []).every((req) => {
    const withValues = (req.values ?? []).length > 0;
    switch (req.operator) {
      case 'In':
      case 'NotIn':
        return withValues;
      case 'Exists':
      case 'DoesNotExist':
        return !withValues;
      default:
        return false;
    }
  });
  return valid && everyRequirementHolds(selector, labels);
}

function everyRequirementHolds(selector: LabelSelector, labels: Labels): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labelValue(labels, key) !== value) return false;
  }
  return (selector.matchExpressions ?? []).every((req) => requirementHolds(req, labels));
}

function requirementHolds(req: LabelSelectorRequirement, labels: Labels): boolean {
  const value = labelValue(labels, req.key);
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    default:
      throw unsupportedOperator(req);
  }
}

function unsupportedOperator(req: LabelSelectorRequirement): SidecarSetError {
  return new SidecarSetError(
    'SI_ERR_INVALID_SELECTOR',
    `label selector operator "${req.operator}" is not supported (key "${req.key}")`,
  );
}

/**
 * The selector in the API's string form (`app=web,tier in (a,b),!canary`), for a list request's
 * labelSelector: the server then sends only the pods the selector can match. Undefined for an
 * empty selector, which OpenKruise's matcher takes as matching nothing and the API as everything.
 */
export function selectorString(selector: LabelSelector | undefined): string | undefined {
  if (selector === undefined || isEmptySelector(selector)) return undefined;
  const parts = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const req of selector.matchExpressions ?? []) {
    const values = `(${(req.values ?? []).join(',')})`;
    switch (req.operator) {
      case 'In':
        parts.push(`${req.key} in ${values}`);
        break;
      case 'NotIn':
        parts.push(`${req.key} notin ${values}`);
        break;
      case 'Exists':
        parts.push(req.key);
        break;
      case 'DoesNotExist':
        parts.push(`!${req.key}`);
        break;
      default:
        throw unsupportedOperator(req);
    }
  }
  return parts.join(',');
}
