/**
 * Evictions whose replacement has not appeared yet (issue 37, point 6), as CloneSet's scale
 * expectations wait for the pods it created to show. An evicted pod counts against
 * maxUnavailable while it terminates (core/upgrade/plan.ts, Recreating), but a StatefulSet creates
 * its replacement only once the old pod is gone: in between, nothing would count, and the next
 * round would evict one more; so does a deleted pod whose containers have stopped (the kubelet
 * reports it Succeeded until it is removed). So each eviction counts from then until a new
 * pod of the same controller, one the cache did not hold at the eviction, is in the cache, or
 * REPLACEMENT_TIMEOUT_MS passes (a controller scaled down never replaces it).
 */
import type { Pod } from '../core/api/k8s-types.js';
import { isTerminating } from '../core/api/pod-status.js';
import { podController } from '../core/upgrade/recreation.js';

const REPLACEMENT_TIMEOUT_MS = 5 * 60_000;

export interface RecreationExpectations {
  /**
   * The SidecarSet's round evicted `pod` (as cached) at `now`, when the cache held `pods` (the
   * SidecarSet's injected pods): none of them is a replacement.
   */
  evicted(sidecarSet: string, pod: Readonly<Pod>, pods: readonly Readonly<Pod>[], now: Date): void;
  /**
   * How many of the SidecarSet's evictions are awaiting their replacement: the pod is no longer
   * terminating in `pods` (the SidecarSet's injected pods as cached: gone, or stopped) and no new
   * pod of its controller has appeared. Evictions that are replaced or timed out are forgotten.
   */
  awaiting(sidecarSet: string, pods: readonly Readonly<Pod>[], now: Date): number;
  forget(sidecarSet: string): void;
}

interface Eviction {
  uid: string;
  /** namespace/Kind/name of the pod's controller. */
  owner: string;
  /** The pods the cache held at the eviction: not replacements. */
  known: ReadonlySet<string>;
  evictedAtMs: number;
}

function ownerOf(pod: Readonly<Pod>): string | undefined {
  const controller = podController(pod);
  return controller === undefined ? undefined : `${pod.metadata.namespace ?? ''}/${controller}`;
}

export function createRecreationExpectations(): RecreationExpectations {
  const bySidecarSet = new Map<string, Eviction[]>();
  return {
    evicted(sidecarSet, pod, pods, now) {
      const owner = ownerOf(pod);
      if (owner === undefined) return;
      const eviction = {
        uid: pod.metadata.uid ?? '',
        owner,
        known: new Set(pods.map((p) => p.metadata.uid ?? '')),
        evictedAtMs: now.getTime(),
      };
      bySidecarSet.set(sidecarSet, [...(bySidecarSet.get(sidecarSet) ?? []), eviction]);
    },
    awaiting(sidecarSet, pods, now) {
      const evictions = bySidecarSet.get(sidecarSet);
      if (evictions === undefined) return 0;
      // Terminating pods the plan counts already (Recreating); one whose containers have stopped
      // (phase Succeeded while it is deleted) it does not.
      const counted = new Set(pods.filter(isTerminating).map((p) => p.metadata.uid ?? ''));
      // Each new pod of the controller replaces one eviction, the earliest first.
      const used = new Set<string>();
      const replaced = (e: Eviction): boolean => {
        const replacement = pods.find((p) => {
          const uid = p.metadata.uid ?? '';
          return !e.known.has(uid) && !used.has(uid) && ownerOf(p) === e.owner;
        });
        if (replacement !== undefined) used.add(replacement.metadata.uid ?? '');
        return replacement !== undefined;
      };
      const left = evictions.filter(
        (e) => now.getTime() - e.evictedAtMs < REPLACEMENT_TIMEOUT_MS && !replaced(e),
      );
      if (left.length === 0) bySidecarSet.delete(sidecarSet);
      else bySidecarSet.set(sidecarSet, left);
      return left.filter((e) => !counted.has(e.uid)).length;
    },
    forget(sidecarSet) {
      bySidecarSet.delete(sidecarSet);
    },
  };
}
