/**
 * Whether a round's plan still holds when one of its writes finally gets its turn. Writes wait
 * for tokens (--qps/--burst), so a large wave's last writes start seconds after the plan; the
 * SidecarSet may have been paused, its partition raised, its selector narrowed, or it may be
 * gone. Every one of those changes the spec, so the generation tells (status writes do not change
 * it); a new round plans from the new spec.
 */
import type { SidecarSet } from '../api/sidecarset-types.js';

/** Why the plan made from `planned` no longer holds given `current`; undefined when it does. */
export function planOutdated(
  planned: SidecarSet,
  current: SidecarSet | undefined,
): string | undefined {
  if (current === undefined || current.metadata.uid !== planned.metadata.uid) {
    return 'the SidecarSet was deleted';
  }
  if (typeof current.metadata.deletionTimestamp === 'string')
    return 'the SidecarSet is being deleted';
  if (current.metadata.generation !== planned.metadata.generation) {
    return `the SidecarSet's spec changed (generation ${String(current.metadata.generation)})`;
  }
  return undefined;
}
