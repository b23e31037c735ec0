/** Cached pods grouped by the SidecarSets that injected them (kruise.io/sidecarset-injected-list). */
import { injectedNames } from '../core/pod-annotations/injected-list.js';
import type { Pod } from '../core/api/k8s-types.js';

export interface PodIndex {
  /** Replaces (or adds) a pod; returns the SidecarSets it was or is listed under. */
  upsert(key: string, pod: Pod, previous?: Pod): string[];
  remove(key: string, pod: Pod): string[];
  podsOf(sidecarSet: string): Pod[];
  /** The SidecarSets cached pods are listed under, whether or not they still exist. */
  sidecarSets(): string[];
  size(): number;
}

export function createPodIndex(): PodIndex {
  const bySidecarSet = new Map<string, Map<string, Pod>>();
  let count = 0;
  const drop = (key: string, names: readonly string[]): void => {
    for (const name of names) {
      const pods = bySidecarSet.get(name);
      pods?.delete(key);
      if (pods?.size === 0) bySidecarSet.delete(name);
    }
  };
  return {
    upsert(key, pod, previous) {
      const before = previous === undefined ? [] : injectedNames(previous);
      if (previous === undefined) count++;
      drop(key, before);
      const after = injectedNames(pod);
      for (const name of after) {
        const pods = bySidecarSet.get(name) ?? new Map<string, Pod>();
        bySidecarSet.set(name, pods.set(key, pod));
      }
      return [...new Set([...before, ...after])];
    },
    remove(key, pod) {
      count--;
      const names = injectedNames(pod);
      drop(key, names);
      return names;
    },
    podsOf: (sidecarSet) => [...(bySidecarSet.get(sidecarSet)?.values() ?? [])],
    sidecarSets: () => [...bySidecarSet.keys()],
    size: () => count,
  };
}
