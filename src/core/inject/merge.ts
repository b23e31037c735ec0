/** Merging built sidecars, volumes and pull secrets into the pod (OpenKruise pkg/webhook/pod/mutating/sidecarset.go). */
import { cloneJson } from '../encoding/json.js';
import type { Container, LocalObjectReference, Volume } from '../api/k8s-types.js';

export interface BuiltContainer {
  container: Container;
  /** BeforeAppContainer puts it in front of the pod's list; anything else after it. */
  before: boolean;
}

/**
 * A pod container with an injected container's name is replaced wholesale, where it stands.
 * Others go in front of (Before) or behind (After) the pod's list, in the order given.
 */
export function mergeContainers(
  podContainers: readonly Container[],
  injected: readonly BuiltContainer[],
): Container[] {
  const middle = [...podContainers];
  const before: Container[] = [];
  const after: Container[] = [];
  for (const { container, before: isBefore } of injected) {
    const at = middle.findIndex((c) => c.name === container.name);
    if (at >= 0) middle[at] = container;
    else if (isBefore) before.push(container);
    else after.push(container);
  }
  return [...before, ...middle, ...after];
}

/**
 * `base`, then each of `extra` whose key is not taken yet (by `base` or by `alsoTaken`): the first
 * one with a key wins. The added items are copies.
 */
export function appendUnique<T>(
  base: readonly T[],
  extra: readonly T[],
  keyOf: (item: T) => string,
  alsoTaken: Iterable<string> = [],
): T[] {
  const out = [...base];
  const taken = new Set([...base.map(keyOf), ...alsoTaken]);
  for (const item of extra) {
    const key = keyOf(item);
    if (taken.has(key)) continue;
    taken.add(key);
    out.push(cloneJson(item));
  }
  return out;
}

/** The pod's volumes, then each collected volume whose name is new: the pod's own volume wins. */
export function mergeVolumes(
  podVolumes: readonly Volume[],
  collected: readonly Volume[],
): Volume[] {
  return appendUnique(podVolumes, collected, (v) => v.name);
}

/** The pod's secrets without duplicate names (its own included), then the SidecarSets' new ones. */
export function mergeImagePullSecrets(
  podSecrets: readonly LocalObjectReference[],
  sidecarSecrets: readonly LocalObjectReference[],
): LocalObjectReference[] {
  const out: LocalObjectReference[] = [];
  const names = new Set<string | undefined>();
  for (const s of [...podSecrets, ...sidecarSecrets]) {
    if (names.has(s.name)) continue;
    names.add(s.name);
    out.push({ ...s });
  }
  return out;
}
