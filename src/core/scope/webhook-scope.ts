/**
 * The pod webhook's scope: which pod creations the API server needs to send us at all, computed
 * from the SidecarSets (docs/adr/0012-scoped-pod-webhook.md). A pod outside the scope is one that
 * no SidecarSet can match, so skipping the webhook for it changes nothing; the scope may be wider
 * than the SidecarSets (that only costs a call), never narrower.
 *
 * The scope has three parts, as the webhook configuration has: CEL `matchConditions` (clauses on
 * the request's namespace and the pod's labels: CEL sees no namespace labels), and requirements
 * added to the webhook's `namespaceSelector` and `objectSelector` (those every SidecarSet shares).
 * It comes in levels from narrowest to widest, because the API server bounds an expression's size:
 * the caller renders the first that fits (src/core/scope/cel.ts) and falls back to the next one
 * when the API server still refuses it.
 */
import { NAMESPACE_NAME_LABEL } from '../api/annotations.js';
import { compareStrings } from '../encoding/json.js';
import type { LabelSelector, LabelSelectorRequirement } from '../api/k8s-types.js';
import type { Labels } from '../matching/selector.js';
import { isEmptySelector, selectorMatchesAll } from '../matching/selector.js';
import type { SidecarSet } from '../api/sidecarset-types.js';

/** A label requirement in one form: matchLabels entries as `In` of one value, values sorted, unique. */
export interface ScopeRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

/** Pods one or more SidecarSets can match: in one of `namespaces` (any when undefined), with labels meeting every requirement. */
export interface ScopeClause {
  namespaces?: readonly string[];
  labels: readonly ScopeRequirement[];
}

/**
 * - `selectors`: each SidecarSet's namespace and whole pod selector;
 * - `label-keys`: each SidecarSet's namespace and one label its selector requires;
 * - `namespaces`: only the namespaces (when every SidecarSet names its namespaces);
 * - `everything`: no matchCondition; only the selectors' shared requirements narrow the scope.
 */
export type ScopePrecision = 'selectors' | 'label-keys' | 'namespaces' | 'everything';

export interface WebhookScope {
  precision: ScopePrecision;
  /** A pod is in scope when some clause admits it; undefined: no matchCondition at all. */
  clauses?: readonly ScopeClause[];
  /** Requirements on the namespace's labels, for the webhook's namespaceSelector. */
  namespaceSelector: readonly ScopeRequirement[];
  /** Requirements on the pod's labels, for the webhook's objectSelector. */
  objectSelector: readonly ScopeRequirement[];
}

/** What the scope learns from one SidecarSet that can match pods. */
interface SidecarSetReach {
  clause: ScopeClause;
  namespaceRequirements: readonly ScopeRequirement[];
}

/**
 * The scopes of these SidecarSets from narrowest to widest; the last one is `everything`, and
 * each admits every pod the one before it admits.
 */
export function webhookScopeLevels(sidecarSets: readonly SidecarSet[]): WebhookScope[] {
  const reaches = sidecarSets.flatMap((ss) => {
    const reach = reachOf(ss);
    return reach === undefined ? [] : [reach];
  });
  const clauses = reaches.map((r) => r.clause);
  const shared = {
    namespaceSelector: sharedNamespaceRequirements(reaches),
    objectSelector: sharedRequirements(clauses.map((c) => c.labels)),
  };
  const levels: WebhookScope[] = [
    { precision: 'selectors', clauses: uniqueClauses(clauses), ...shared },
    { precision: 'label-keys', clauses: labelKeyClauses(clauses), ...shared },
  ];
  const names = namespaceUnion(clauses);
  if (names !== undefined) {
    const namespaces = names.length === 0 ? [] : [{ namespaces: names, labels: [] }];
    levels.push({ precision: 'namespaces', clauses: namespaces, ...shared });
  }
  levels.push({ precision: 'everything', ...shared });
  return levels;
}

/**
 * Whether the API server sends us the creation of a pod with these labels in a namespace with
 * these labels and name, under this scope (the installer's own selectors aside).
 */
export function podInWebhookScope(
  scope: WebhookScope,
  podLabels: Labels,
  namespace: string,
  namespaceLabels: Labels,
): boolean {
  if (!selectorMatchesAll(asSelector(scope.namespaceSelector), namespaceLabels)) return false;
  if (!selectorMatchesAll(asSelector(scope.objectSelector), podLabels)) return false;
  if (scope.clauses === undefined) return true;
  return scope.clauses.some((clause) => clauseAdmits(clause, podLabels, namespace));
}

export function clauseAdmits(clause: ScopeClause, podLabels: Labels, namespace: string): boolean {
  if (clause.namespaces !== undefined && !clause.namespaces.includes(namespace)) return false;
  return selectorMatchesAll(asSelector(clause.labels), podLabels);
}

function asSelector(requirements: readonly ScopeRequirement[]): LabelSelector {
  return { matchExpressions: requirements.map((r) => ({ ...r })) };
}

/** undefined for a SidecarSet that matches no pod: paused, an empty selector, disjoint namespaces. */
function reachOf(ss: SidecarSet): SidecarSetReach | undefined {
  const spec = ss.spec;
  if (spec.injectionStrategy?.paused === true) return undefined;
  if (spec.selector === undefined || isEmptySelector(spec.selector)) return undefined;
  const namespaceRequirements = normalize(spec.namespaceSelector ?? {});
  let namespaces = spec.namespace ? [spec.namespace] : undefined;
  for (const req of namespaceRequirements ?? []) {
    if (req.key !== NAMESPACE_NAME_LABEL || req.operator !== 'In') continue;
    const allowed = req.values ?? [];
    namespaces = namespaces === undefined ? allowed : namespaces.filter((n) => allowed.includes(n));
  }
  if (namespaces?.length === 0) return undefined;
  // A selector with an operator we cannot read is admitted on any labels: wider, never narrower.
  const labels = normalize(spec.selector) ?? [];
  return {
    clause: namespaces === undefined ? { labels } : { namespaces, labels },
    namespaceRequirements: namespaceRequirements ?? [],
  };
}

const OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);

/** The selector's requirements, sorted; undefined when one has an operator we do not know. */
function normalize(selector: LabelSelector): ScopeRequirement[] | undefined {
  const out: ScopeRequirement[] = Object.entries(selector.matchLabels ?? {}).map(
    ([key, value]) => ({ key, operator: 'In', values: [value] }),
  );
  for (const req of selector.matchExpressions ?? []) {
    if (!OPERATORS.has(req.operator)) return undefined;
    out.push(normalizeRequirement(req));
  }
  return uniqueBy(out, requirementKey).sort((a, b) =>
    compareStrings(requirementKey(a), requirementKey(b)),
  );
}

function normalizeRequirement(req: LabelSelectorRequirement): ScopeRequirement {
  const operator = req.operator as ScopeRequirement['operator'];
  if (operator === 'Exists' || operator === 'DoesNotExist') return { key: req.key, operator };
  return { key: req.key, operator, values: sortedUnique(req.values ?? []) };
}

function requirementKey(req: ScopeRequirement): string {
  return JSON.stringify([req.key, req.operator, req.values ?? []]);
}

function clauseKey(clause: ScopeClause): string {
  return JSON.stringify([clause.namespaces ?? null, clause.labels.map(requirementKey)]);
}

/** The requirements every list holds; none when there is no list. */
function sharedRequirements(lists: readonly (readonly ScopeRequirement[])[]): ScopeRequirement[] {
  const [first, ...rest] = lists;
  if (first === undefined) return [];
  const others = rest.map((list) => new Set(list.map(requirementKey)));
  return first.filter((req) => others.every((keys) => keys.has(requirementKey(req))));
}

/**
 * The namespaceSelector requirements every SidecarSet implies: those all their namespaceSelectors
 * share, and the names of their namespaces when every one names them.
 */
function sharedNamespaceRequirements(reaches: readonly SidecarSetReach[]): ScopeRequirement[] {
  const shared = sharedRequirements(reaches.map((r) => r.namespaceRequirements)).filter(
    (req) => req.key !== NAMESPACE_NAME_LABEL,
  );
  const names = namespaceUnion(reaches.map((r) => r.clause));
  if (names !== undefined && names.length > 0) {
    shared.push({ key: NAMESPACE_NAME_LABEL, operator: 'In', values: names });
  }
  return shared;
}

/** Every namespace some clause admits; undefined when one admits any namespace. */
function namespaceUnion(clauses: readonly ScopeClause[]): string[] | undefined {
  const names: string[] = [];
  for (const clause of clauses) {
    if (clause.namespaces === undefined) return undefined;
    names.push(...clause.namespaces);
  }
  return sortedUnique(names);
}

/**
 * Each clause with only one requirement its pods must meet (an `In`, else an `Exists`, else none),
 * and clauses of the same namespaces on the same key's `In` merged into one.
 */
function labelKeyClauses(clauses: readonly ScopeClause[]): ScopeClause[] {
  const merged = new Map<string, ScopeClause>();
  for (const clause of clauses) {
    const kept =
      clause.labels.find((r) => r.operator === 'In') ??
      clause.labels.find((r) => r.operator === 'Exists');
    const spot = JSON.stringify([clause.namespaces ?? null, kept?.key ?? null, kept?.operator]);
    const before = merged.get(spot)?.labels[0];
    const values =
      kept?.operator === 'In'
        ? sortedUnique([...(before?.values ?? []), ...(kept.values ?? [])])
        : undefined;
    const labels = kept === undefined ? [] : [values ? { ...kept, values } : kept];
    merged.set(spot, { ...(clause.namespaces ? { namespaces: clause.namespaces } : {}), labels });
  }
  return uniqueClauses([...merged.values()]);
}

function uniqueClauses(clauses: readonly ScopeClause[]): ScopeClause[] {
  return uniqueBy(clauses, clauseKey).sort((a, b) => compareStrings(clauseKey(a), clauseKey(b)));
}

function uniqueBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Map<string, T>();
  for (const item of items) if (!seen.has(key(item))) seen.set(key(item), item);
  return [...seen.values()];
}

function sortedUnique(values: readonly string[]): string[] {
  return [...new Set(values)].sort(compareStrings);
}
