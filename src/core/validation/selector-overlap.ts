/**
 * Whether two label selectors can match a common label set, as OpenKruise's
 * util.IsSelectorOverlapping decides it (OpenKruise pkg/util/selector.go): they overlap unless one is "disjoint"
 * from the other. This is a heuristic, not a satisfiability check (`a=h` and `a NotIn [i]`
 * overlap; `a In [x]` and `a NotIn [y]` overlap).
 */
import type { LabelSelector } from '../api/k8s-types.js';

export function isSelectorOverlapping(
  a: Readonly<LabelSelector>,
  b: Readonly<LabelSelector>,
): boolean {
  return !(isDisjoint(a, b) || isDisjoint(b, a));
}

/** Values a selector allows per key; `all` marks a key required by Exists. */
export interface KeyValues {
  all: boolean;
  values: Set<string>;
}

export function allowedValues(selector: Readonly<LabelSelector>): Map<string, KeyValues> {
  const map = new Map<string, KeyValues>();
  const entry = (key: string): KeyValues => {
    let e = map.get(key);
    if (e === undefined) {
      e = { all: false, values: new Set() };
      map.set(key, e);
    }
    return e;
  };
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    map.set(key, { all: false, values: new Set([value]) });
  }
  for (const req of selector.matchExpressions ?? []) {
    if (req.operator === 'In') {
      for (const v of req.values ?? []) entry(req.key).values.add(v);
    } else if (req.operator === 'Exists') {
      // Upstream replaces the key's values with its "ALL" marker.
      map.set(req.key, { all: true, values: new Set() });
    }
  }
  return map;
}

function isDisjoint(a: Readonly<LabelSelector>, b: Readonly<LabelSelector>): boolean {
  const allowed = allowedValues(a);
  for (const [key, value] of Object.entries(b.matchLabels ?? {})) {
    const e = allowed.get(key);
    if (e !== undefined && !e.all && !e.values.has(value)) return true;
  }
  for (const req of b.matchExpressions ?? []) {
    const e = allowed.get(req.key);
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
        if (e !== undefined && !e.all && !values.some((v) => e.values.has(v))) return true;
        break;
      case 'NotIn':
        if (e !== undefined && !e.all && [...e.values].every((v) => values.includes(v))) {
          return true;
        }
        break;
      case 'Exists':
        if (e === undefined) return true;
        break;
      case 'DoesNotExist':
        if (e !== undefined) return true;
        break;
      default:
        break;
    }
  }
  return false;
}
