/**
 * `sidecarset rollout history` and `rollout undo` as pure functions over a SidecarSet and its
 * stored ControllerRevisions, in the manner of `kubectl rollout history|undo` for a DaemonSet.
 *
 * A revision records only what OpenKruise copies into it (copySidecarSetSpecRevision,
 * pkg/control/sidecarcontrol/history_control.go): containers, initContainers, volumes,
 * imagePullSecrets and patchPodMetadata. Undo writes exactly those fields back and keeps the rest
 * of the spec (selector, updateStrategy, ...), as OpenKruise's GetHistorySidecarSet does when it
 * injects a pinned revision. The controller then recognises the old revision's data and renumbers
 * that revision as the newest (planRevisions in history.ts), as the Deployment controller does.
 */
import { SIDECARSET_CUSTOM_VERSION_LABEL } from '../api/annotations.js';
import { defaultSidecarSet } from '../api/defaults.js';
import { cloneJson } from '../encoding/json.js';
import type { SidecarSet, SidecarSetRevision, SidecarSetSpec } from '../api/sidecarset-types.js';
import type { StoredRevision } from './history.js';
import { revisionData, sortRevisions, toSidecarSetRevision } from './history.js';

/** kubectl's annotation for why a change was made, copied from the SidecarSet into each revision. */
export const CHANGE_CAUSE_ANNOTATION = 'kubernetes.io/change-cause';

const RECORDED_FIELDS = [
  'containers',
  'initContainers',
  'volumes',
  'imagePullSecrets',
  'patchPodMetadata',
] as const satisfies readonly (keyof SidecarSetRevision['spec'])[];

export interface HistoryEntry {
  revision: number;
  name: string;
  /** Its data is what the SidecarSet's spec holds now. */
  current: boolean;
  /** `name=image` of each container then each init container, as recorded. */
  images: string[];
  changeCause?: string;
  customVersion?: string;
}

/** The SidecarSet's revisions, oldest first; the one equal to its spec now is marked current. */
export function revisionHistory(
  ss: Readonly<SidecarSet>,
  stored: readonly StoredRevision[],
): HistoryEntry[] {
  const data = currentData(ss);
  return sortRevisions(stored).map((r) => {
    const entry: HistoryEntry = {
      revision: r.revision,
      name: r.name,
      current: r.data === data,
      images: imagesOf(toSidecarSetRevision(r)),
    };
    const cause = r.annotations[CHANGE_CAUSE_ANNOTATION];
    if (cause !== undefined) entry.changeCause = cause;
    const custom = r.labels[SIDECARSET_CUSTOM_VERSION_LABEL];
    if (custom !== undefined) entry.customVersion = custom;
    return entry;
  });
}

/** The data the controller records for the spec now: of the defaulted SidecarSet, as it reads it. */
function currentData(ss: Readonly<SidecarSet>): string {
  return revisionData(defaultSidecarSet(ss));
}

function imagesOf(revision: SidecarSetRevision | undefined): string[] {
  const spec = revision?.spec ?? {};
  return [...(spec.containers ?? []), ...(spec.initContainers ?? [])].map(
    (c) => `${c.name}=${c.image ?? ''}`,
  );
}

export type RollbackPlan =
  /** Write `sidecarSet` (the spec with the revision's fields) back. */
  | { kind: 'rollback'; revision: number; name: string; sidecarSet: SidecarSet }
  /** The spec already holds that revision: nothing to write. */
  | { kind: 'unchanged'; revision: number; name: string }
  | { kind: 'error'; message: string };

/**
 * The rollback to `toRevision`, or when it is undefined (or 0, as kubectl takes it) to the
 * revision before the current one: the newest revision whose data differs from the spec now.
 */
export function planRollback(
  ss: Readonly<SidecarSet>,
  stored: readonly StoredRevision[],
  toRevision?: number,
): RollbackPlan {
  const name = ss.metadata.name ?? '';
  const sorted = sortRevisions(stored);
  if (sorted.length === 0) {
    return { kind: 'error', message: `SidecarSet ${name} has no revision history` };
  }
  const data = currentData(ss);
  let target: StoredRevision | undefined;
  if (toRevision === undefined || toRevision === 0) {
    target = sorted.filter((r) => r.data !== data).at(-1);
    if (target === undefined) {
      return {
        kind: 'error',
        message: `SidecarSet ${name} has no revision before the current one`,
      };
    }
  } else {
    target = sorted.find((r) => r.revision === toRevision);
    if (target === undefined) {
      const known = sorted.map((r) => r.revision).join(', ');
      return {
        kind: 'error',
        message: `SidecarSet ${name} has no revision ${toRevision} (revisions: ${known})`,
      };
    }
  }
  if (target.data === data) {
    return { kind: 'unchanged', revision: target.revision, name: target.name };
  }
  const recorded = toSidecarSetRevision(target);
  if (recorded === undefined) {
    return {
      kind: 'error',
      message: `ControllerRevision ${target.name} does not hold a SidecarSet spec`,
    };
  }
  return {
    kind: 'rollback',
    revision: target.revision,
    name: target.name,
    sidecarSet: applyRevision(ss, recorded),
  };
}

/** The SidecarSet with the revision's recorded fields; a field the revision lacks is removed. */
export function applyRevision(
  ss: Readonly<SidecarSet>,
  revision: Readonly<SidecarSetRevision>,
): SidecarSet {
  const spec: SidecarSetSpec = cloneJson(ss.spec);
  const target = spec as Record<string, unknown>;
  const source = revision.spec as Readonly<Record<string, unknown>>;
  for (const field of RECORDED_FIELDS) {
    const value = source[field];
    if (Array.isArray(value) && value.length > 0) target[field] = cloneJson(value);
    else delete target[field];
  }
  return { ...cloneJson(ss), spec };
}
