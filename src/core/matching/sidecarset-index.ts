/**
 * An index of SidecarSets so that a pod is compared only with SidecarSets that could select it,
 * not with every SidecarSet in the cluster (OpenKruise's kruise#1546).
 *
 * Each SidecarSet is filed under one label pair its selector requires (a matchLabels entry, or
 * every value of an `In` expression). A pod's candidates are the SidecarSets filed under its own
 * label pairs plus the few whose selector requires no particular pair. The full match still runs
 * on every candidate, so the index only ever removes SidecarSets that could not match.
 */
import { compareStrings } from '../encoding/json.js';
import type { Pod } from '../api/k8s-types.js';
import type { MatchResult, NamespaceLabels } from './match.js';
import { matchSidecarSet } from './match.js';
import type { SidecarSet } from '../api/sidecarset-types.js';

export interface SidecarSetIndex {
  /** All SidecarSets, sorted by name. */
  readonly all: readonly SidecarSet[];
  readonly byName: ReadonlyMap<string, SidecarSet>;
  readonly byLabelPair: ReadonlyMap<string, readonly SidecarSet[]>;
  readonly unindexed: readonly SidecarSet[];
}

const pairKey = (key: string, value: string): string => `${key}\u0000${value}`;

export function buildSidecarSetIndex(sidecarSets: readonly SidecarSet[]): SidecarSetIndex {
  const all = [...sidecarSets].sort((a, b) =>
    compareStrings(a.metadata.name ?? '', b.metadata.name ?? ''),
  );
  const byLabelPair = new Map<string, SidecarSet[]>();
  const unindexed: SidecarSet[] = [];
  for (const ss of all) {
    const pairs = requiredPairs(ss);
    if (pairs === undefined) {
      unindexed.push(ss);
      continue;
    }
    // Each pair once (an `In` may repeat a value), so that no list holds a SidecarSet twice.
    for (const key of new Set(pairs)) {
      const list = byLabelPair.get(key);
      if (list === undefined) byLabelPair.set(key, [ss]);
      else list.push(ss);
    }
  }
  const byName = new Map(all.map((ss) => [ss.metadata.name ?? '', ss] as const));
  return { all, byName, byLabelPair, unindexed };
}

/** Label pairs of which a matching pod must carry at least one; undefined when there is none. */
function requiredPairs(ss: SidecarSet): string[] | undefined {
  const selector = ss.spec.selector;
  const firstLabel = Object.entries(selector?.matchLabels ?? {}).sort(([a], [b]) =>
    compareStrings(a, b),
  )[0];
  if (firstLabel !== undefined) return [pairKey(firstLabel[0], firstLabel[1])];
  const inExpr = (selector?.matchExpressions ?? []).find((e) => e.operator === 'In');
  if (inExpr !== undefined) return (inExpr.values ?? []).map((v) => pairKey(inExpr.key, v));
  return undefined;
}

/**
 * SidecarSets that might match a pod with these labels, sorted by name, each once.
 *
 * Every list in the index is sorted by name (filed in the order of `all`), so the lists the pod's
 * labels pick are merged rather than sorted. No SidecarSet is in two of them: the unindexed ones
 * are in no list, and an indexed one is filed under pairs of a single label key, of which the pod
 * carries one value.
 */
export function candidateSidecarSets(
  index: SidecarSetIndex,
  labels: Readonly<Record<string, string>>,
): SidecarSet[] {
  let found: readonly SidecarSet[] = index.unindexed;
  let merged = false;
  for (const key of Object.keys(labels)) {
    const list = index.byLabelPair.get(pairKey(key, labels[key] ?? ''));
    if (list === undefined) continue;
    merged = found.length > 0;
    found = merged ? mergeByName(found, list) : list;
  }
  // A list of the index itself is copied: the caller owns what it gets.
  return merged ? (found as SidecarSet[]) : [...found];
}

/** Two lists sorted by name, as one sorted list (on equal names, `a`'s first). */
function mergeByName(a: readonly SidecarSet[], b: readonly SidecarSet[]): SidecarSet[] {
  const out: SidecarSet[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as SidecarSet;
    const y = b[j] as SidecarSet;
    if (compareStrings(y.metadata.name ?? '', x.metadata.name ?? '') < 0) {
      out.push(y);
      j++;
    } else {
      out.push(x);
      i++;
    }
  }
  for (; i < a.length; i++) out.push(a[i] as SidecarSet);
  for (; j < b.length; j++) out.push(b[j] as SidecarSet);
  return out;
}

/** The SidecarSets that apply to a pod, in name order (OpenKruise leaves the order undefined). */
export function matchingSidecarSets(
  index: SidecarSetIndex,
  pod: Pick<Pod, 'metadata'>,
  namespace: string,
  namespaces: NamespaceLabels,
): SidecarSet[] {
  return candidateSidecarSets(index, pod.metadata.labels ?? {}).filter(
    (ss) => matchSidecarSet(ss, pod, namespace, namespaces).matched,
  );
}

/** Every SidecarSet with the outcome of matching it, for `--explain`. */
export function explainMatches(
  index: SidecarSetIndex,
  pod: Pick<Pod, 'metadata'>,
  namespace: string,
  namespaces: NamespaceLabels,
): { name: string; result: MatchResult }[] {
  return index.all.map((ss) => ({
    name: ss.metadata.name ?? '',
    result: matchSidecarSet(ss, pod, namespace, namespaces),
  }));
}
