/**
 * An index of SidecarSets so that a pod is compared only with SidecarSets that could select it,
 * not with every SidecarSet in the cluster (OpenKruise's kruise#1546).
 *
 * Each SidecarSet is filed under one label pair its selector requires (a matchLabels entry, or
 * every value of an `In` expression). A pod's candidates are the SidecarSets filed under its own
 * label pairs plus the few whose selector requires no particular pair. The full match still runs
 * on every candidate, so the index only ever removes SidecarSets that could not match.
 */
import { compareStrings } from './json.js';
import type { Pod } from './k8s-types.js';
import type { MatchResult, NamespaceLabels } from './match.js';
import { matchSidecarSet } from './match.js';
import type { SidecarSet } from './sidecarset-types.js';

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
    for (const key of pairs) {
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

/** SidecarSets that might match a pod with these labels, sorted by name, each once. */
export function candidateSidecarSets(
  index: SidecarSetIndex,
  labels: Readonly<Record<string, string>>,
): SidecarSet[] {
  const found = new Set<SidecarSet>(index.unindexed);
  for (const [key, value] of Object.entries(labels)) {
    for (const ss of index.byLabelPair.get(pairKey(key, value)) ?? []) found.add(ss);
  }
  return [...found].sort((a, b) => compareStrings(a.metadata.name ?? '', b.metadata.name ?? ''));
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
