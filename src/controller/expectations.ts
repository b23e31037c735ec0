/**
 * "Our writes not yet seen in the cache" (OpenKruise's ResourceVersionExpectations, pkg/controller/sidecarset/sidecarset_processor.go). After upgrading a pod to hash H
 * the controller must not plan again until its pod cache shows H on that pod; otherwise a stale
 * cache would show the pod as old and available, and the budget would be spent twice.
 */
export interface UpgradeExpectations {
  /** Records that the pod was written with this SidecarSet hash. */
  expect(sidecarSet: string, hash: string, podKey: string): void;
  /** The cache shows the pod with this recorded hash (or undefined when it has none). */
  observe(sidecarSet: string, podKey: string, recordedHash: string | undefined): void;
  /** The pod is gone: nothing more to wait for. */
  podDeleted(podKey: string): void;
  /** Pods written with `hash` that the cache does not yet show with it. */
  pending(sidecarSet: string, hash: string): string[];
  forget(sidecarSet: string): void;
}

export function createUpgradeExpectations(): UpgradeExpectations {
  const bySidecarSet = new Map<string, { hash: string; pods: Set<string> }>();
  return {
    expect(sidecarSet, hash, podKey) {
      const current = bySidecarSet.get(sidecarSet);
      // A new hash replaces the whole record set: the old writes no longer matter.
      if (current === undefined || current.hash !== hash) {
        bySidecarSet.set(sidecarSet, { hash, pods: new Set([podKey]) });
      } else current.pods.add(podKey);
    },
    observe(sidecarSet, podKey, recordedHash) {
      const current = bySidecarSet.get(sidecarSet);
      if (current !== undefined && recordedHash === current.hash) current.pods.delete(podKey);
    },
    podDeleted(podKey) {
      for (const entry of bySidecarSet.values()) entry.pods.delete(podKey);
    },
    pending(sidecarSet, hash) {
      const current = bySidecarSet.get(sidecarSet);
      return current === undefined || current.hash !== hash ? [] : [...current.pods];
    },
    forget(sidecarSet) {
      bySidecarSet.delete(sidecarSet);
    },
  };
}
