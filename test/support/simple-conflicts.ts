/**
 * The cross-SidecarSet conflict check as it was before issue 15: the SidecarSet compared with
 * every other one. Kept as the reference that the indexed validateCrossSidecarSetConflicts in
 * src/core/validation/sidecarset-conflicts.ts is property-tested against.
 */
import { SIDECARSET_BASE, SIDECARSET_CANARY } from '../../src/core/api/annotations.js';
import type { SidecarSet } from '../../src/core/api/sidecarset-types.js';
import type { FieldError } from '../../src/core/validation/field-error.js';
import {
  conflictsWithOverlapping,
  sidecarSetsOverlap,
} from '../../src/core/validation/sidecarset-conflicts.js';

export function simpleCrossSidecarSetConflicts(
  ss: Readonly<SidecarSet>,
  all: readonly Readonly<SidecarSet>[],
): FieldError[] {
  const name = ss.metadata.name ?? '';
  const a = ss.metadata.annotations ?? {};
  const base =
    a[SIDECARSET_CANARY] === 'true' && (a[SIDECARSET_BASE] ?? '') !== ''
      ? a[SIDECARSET_BASE]
      : undefined;
  return conflictsWithOverlapping(
    ss,
    all.filter(
      (o) => o.metadata.name !== name && o.metadata.name !== base && sidecarSetsOverlap(ss, o),
    ),
  );
}
