/**
 * A webhook scope as the pod webhook's CEL `matchConditions`
 * (https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#matching-requests-matchconditions).
 *
 * The expression must never fail: a failing condition is treated by the API server as the
 * failurePolicy says, and with `Ignore` that skips the webhook for a pod that may need it. So it
 * reads only `request.namespace` (always set for a pod) and the pod's labels behind `has()` and
 * `in` guards.
 */
import { compareStrings } from '../encoding/json.js';
import type { SidecarSet } from '../api/sidecarset-types.js';
import type { ScopeClause, ScopeRequirement, WebhookScope } from './webhook-scope.js';
import { webhookScopeLevels } from './webhook-scope.js';

export interface MatchCondition {
  name: string;
  expression: string;
}

/** The name of our condition; other matchConditions on the webhook are the installer's. */
export const SCOPE_CONDITION_NAME = 'sidecarset.kruise.io/scope';

/**
 * The API server's limit on one expression: it refuses a longer one with "expression code point
 * size exceeds limit: …, limit 100000" (kube-apiserver 1.37). Cost is no limit for our shapes.
 */
export const MAX_EXPRESSION_CODE_POINTS = 100_000;

const LABELS = 'object.metadata.labels';

/** The matchConditions of a scope: none for `everything`, else one. */
export function scopeMatchConditions(scope: WebhookScope): MatchCondition[] {
  if (scope.clauses === undefined) return [];
  return [{ name: SCOPE_CONDITION_NAME, expression: scopeExpression(scope.clauses) }];
}

/**
 * The narrowest scope of these SidecarSets whose expression fits `maxCodePoints`, and the wider
 * ones after it (to fall back to if the API server refuses it anyway).
 */
export function fittingScopeLevels(
  levels: readonly WebhookScope[],
  maxCodePoints: number = MAX_EXPRESSION_CODE_POINTS,
): WebhookScope[] {
  const first = levels.findIndex((scope) =>
    scopeMatchConditions(scope).every((c) => codePoints(c.expression) <= maxCodePoints),
  );
  return levels.slice(first);
}

/** The scopes of these SidecarSets to try in turn: the narrowest that fits, then wider ones. */
export function webhookScopes(sidecarSets: readonly SidecarSet[]): WebhookScope[] {
  return fittingScopeLevels(webhookScopeLevels(sidecarSets));
}

/**
 * `has(labels) ? (clauses on the labels) : (clauses met by a pod without labels)`, clauses of the
 * same namespaces grouped under one namespace test.
 */
export function scopeExpression(clauses: readonly ScopeClause[]): string {
  const withLabels = groupedByNamespaces(clauses, (labels) => labels.map(requirementExpression));
  // Without labels, an `In` or `Exists` fails and a `NotIn` or `DoesNotExist` holds.
  const unlabelled = clauses.filter((c) =>
    c.labels.every((r) => r.operator === 'NotIn' || r.operator === 'DoesNotExist'),
  );
  const withoutLabels = groupedByNamespaces(unlabelled, () => []);
  if (withLabels.text === withoutLabels.text) return withLabels.text;
  return `has(${LABELS}) ? ${withLabels.text} : ${withoutLabels.text}`;
}

/** A CEL expression and its operator, to parenthesize only where precedence needs it. */
interface Expr {
  text: string;
  op: 'atom' | 'and' | 'or';
}

const TRUE: Expr = { text: 'true', op: 'atom' };
const FALSE: Expr = { text: 'false', op: 'atom' };
const atom = (text: string): Expr => ({ text, op: 'atom' });

function and(terms: readonly Expr[]): Expr {
  const kept = terms.filter((t) => t.text !== 'true');
  if (kept.some((t) => t.text === 'false')) return FALSE;
  if (kept.length <= 1) return kept[0] ?? TRUE;
  return {
    text: kept.map((t) => (t.op === 'or' ? `(${t.text})` : t.text)).join(' && '),
    op: 'and',
  };
}

function or(terms: readonly Expr[]): Expr {
  const kept = [
    ...new Map(terms.filter((t) => t.text !== 'false').map((t) => [t.text, t])).values(),
  ];
  if (kept.some((t) => t.text === 'true')) return TRUE;
  if (kept.length <= 1) return kept[0] ?? FALSE;
  return {
    text: kept.map((t) => (t.op === 'and' ? `(${t.text})` : t.text)).join(' || '),
    op: 'or',
  };
}

function groupedByNamespaces(
  clauses: readonly ScopeClause[],
  terms: (labels: readonly ScopeRequirement[]) => Expr[],
): Expr {
  const groups = new Map<string, { namespaces?: readonly string[]; alternatives: Expr[] }>();
  for (const clause of clauses) {
    const key = JSON.stringify(clause.namespaces ?? null);
    const group = groups.get(key) ?? { ...pick(clause), alternatives: [] };
    groups.set(key, group);
    group.alternatives.push(and(terms(clause.labels)));
  }
  return or(
    [...groups.keys()].sort(compareStrings).map((key) => {
      const group = groups.get(key) as { namespaces?: readonly string[]; alternatives: Expr[] };
      const ns = group.namespaces === undefined ? TRUE : namespaceExpression(group.namespaces);
      return and([ns, or(group.alternatives)]);
    }),
  );
}

function pick(clause: ScopeClause): { namespaces?: readonly string[] } {
  return clause.namespaces === undefined ? {} : { namespaces: clause.namespaces };
}

function namespaceExpression(namespaces: readonly string[]): Expr {
  return atom(
    namespaces.length === 1
      ? `request.namespace == ${quote(namespaces[0] ?? '')}`
      : `request.namespace in ${list(namespaces)}`,
  );
}

function requirementExpression(req: ScopeRequirement): Expr {
  const has = `${quote(req.key)} in ${LABELS}`;
  const value = `${LABELS}[${quote(req.key)}]`;
  const values = req.values ?? [];
  const equals =
    values.length === 1 ? `${value} == ${quote(values[0] ?? '')}` : `${value} in ${list(values)}`;
  switch (req.operator) {
    case 'In':
      return values.length === 0 ? FALSE : { text: `${has} && ${equals}`, op: 'and' };
    case 'NotIn':
      return values.length === 0 ? TRUE : atom(`!(${has} && ${equals})`);
    case 'Exists':
      return atom(has);
    case 'DoesNotExist':
      return atom(`!(${has})`);
  }
}

/** A CEL string literal: JSON's escapes (\" \\ \n \uXXXX …) are all CEL escapes too. */
function quote(value: string): string {
  return JSON.stringify(value);
}

function list(values: readonly string[]): string {
  return `[${values.map(quote).join(', ')}]`;
}

function codePoints(value: string): number {
  return Array.from(value).length;
}
