/**
 * registerLatestRevision (OpenKruise pkg/controller/sidecarset/sidecarset_processor.go): the pure plan of one round, then
 * its writes. Returns what the status records: status.latestRevision and collisionCount.
 */
import type { Logger } from 'pino';

import { SIDECARSET_CUSTOM_VERSION_LABEL } from '../core/api/annotations.js';
import type { Pod } from '../core/api/k8s-types.js';
import type { StoredRevision } from '../core/revisions/history.js';
import { newRevision, planRevisions } from '../core/revisions/history.js';
import type { SidecarSet } from '../core/api/sidecarset-types.js';
import type { RevisionWriter } from '../k8s/revisions.js';

export interface RegisteredRevision {
  latestRevision: string;
  collisionCount: number;
}

/** Name collisions the API reports beyond those the cache shows; more is a bug, not bad luck. */
const MAX_COLLISIONS = 10;

export async function registerLatestRevision(
  ss: SidecarSet,
  pods: readonly Pod[],
  existing: readonly StoredRevision[],
  writer: RevisionWriter,
  log: Logger,
): Promise<RegisteredRevision> {
  const plan = planRevisions(ss, existing, pods);
  let latestRevision = plan.latestRevision;
  let collisionCount = plan.collisionCount;
  if (plan.create !== undefined) {
    let candidate = plan.create;
    for (let tries = 0; ; tries++) {
      const outcome = await writer.create(candidate, ss);
      if (outcome.kind === 'created' || outcome.sameData) break;
      if (tries >= MAX_COLLISIONS) {
        throw new Error(`ControllerRevision ${candidate.name}: too many hash collisions`);
      }
      collisionCount++;
      candidate = newRevision(ss, candidate.revision, collisionCount, candidate.data);
    }
    latestRevision = candidate.name;
    log.info({ revision: candidate.name, number: candidate.revision }, 'registered a revision');
  }
  if (plan.renumber !== undefined) {
    await writer.renumber(plan.renumber.name, plan.renumber.revision);
    log.info(
      { revision: plan.renumber.name, number: plan.renumber.revision },
      'rolled back to an earlier revision',
    );
  }
  if (plan.customVersion !== undefined) {
    await writer.setLabel(
      latestRevision,
      SIDECARSET_CUSTOM_VERSION_LABEL,
      plan.customVersion.value,
    );
  }
  try {
    for (const name of plan.delete) await writer.delete(name);
  } catch (err) {
    // OpenKruise logs a failed truncation and carries on.
    log.error({ err }, 'failed to truncate the revision history');
  }
  if (plan.overLimit > 0) {
    log.warn(
      { inUse: plan.overLimit, limit: ss.spec.revisionHistoryLimit },
      'revisions in use keep the history over its limit',
    );
  }
  return { latestRevision, collisionCount };
}

/** A RevisionWriter for --dry-run: logs what it would write. */
export function dryRunRevisionWriter(
  log: (msg: string, fields: Record<string, unknown>) => void,
): RevisionWriter {
  return {
    create: (revision) => {
      log('dry run: would create a ControllerRevision', { name: revision.name });
      return Promise.resolve({ kind: 'created' });
    },
    renumber: (name, revision) => {
      log('dry run: would renumber a ControllerRevision', { name, revision });
      return Promise.resolve();
    },
    setLabel: (name, key, value) => {
      log('dry run: would label a ControllerRevision', { name, key, value });
      return Promise.resolve();
    },
    delete: (name) => {
      log('dry run: would delete a ControllerRevision', { name });
      return Promise.resolve();
    },
  };
}
