/** SidecarSet status from the matched pods (calculateStatus in sidecarset_processor.go). */
import type { SidecarSet } from '../sidecarset-types.js';
import type { UpgradeStatus } from './types.js';

/** The four pod counts of the status. */
export interface StatusCounts {
  matchedPods: number;
  updatedPods: number;
  readyPods: number;
  updatedReadyPods: number;
}

/** `counts`: of the matched pods; updated, and ready as state-consistent and ready. */
export function computeStatus(sidecarSet: SidecarSet, counts: StatusCounts): UpgradeStatus {
  const status: UpgradeStatus = { ...counts };
  const generation = sidecarSet.metadata.generation;
  if (generation !== undefined) status.observedGeneration = generation;
  // Revisions are the controller's business (src/controller/revisions.ts); the planner reports what it was given.
  const previous = sidecarSet.status;
  if (previous?.latestRevision !== undefined) status.latestRevision = previous.latestRevision;
  if (previous?.collisionCount !== undefined) status.collisionCount = previous.collisionCount;
  return status;
}
