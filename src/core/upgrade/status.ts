/** SidecarSet status from the matched pods (reference upgrade §6). */
import type { SidecarSet } from '../sidecarset-types.js';
import type { UpgradeStatus } from './types.js';

export interface PodCounts {
  updated: boolean;
  /** State-consistent (all sidecar containers) and ready (§3.6). */
  consistentAndReady: boolean;
}

export function computeStatus(sidecarSet: SidecarSet, pods: readonly PodCounts[]): UpgradeStatus {
  let updatedPods = 0;
  let readyPods = 0;
  let updatedReadyPods = 0;
  for (const p of pods) {
    if (p.updated) updatedPods++;
    if (p.consistentAndReady) readyPods++;
    if (p.updated && p.consistentAndReady) updatedReadyPods++;
  }
  const status: UpgradeStatus = {
    matchedPods: pods.length,
    updatedPods,
    readyPods,
    updatedReadyPods,
  };
  const generation = sidecarSet.metadata.generation;
  if (generation !== undefined) status.observedGeneration = generation;
  // Revisions are the controller's business (§7.1); the planner reports what it was given.
  const previous = sidecarSet.status;
  if (previous?.latestRevision !== undefined) status.latestRevision = previous.latestRevision;
  if (previous?.collisionCount !== undefined) status.collisionCount = previous.collisionCount;
  return status;
}
