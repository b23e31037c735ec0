/** An InjectionSnapshot of the given SidecarSets, with the namespace `default` and no revisions. */
import { minimalNamespaceLabels } from '../../src/core/matching/match.js';
import type { InjectionSnapshot } from '../../src/core/mutation/pod-mutation.js';
import { buildSidecarSetIndex } from '../../src/core/matching/sidecarset-index.js';
import type { SidecarSet } from '../../src/core/api/sidecarset-types.js';

export function snapshotOf(sets: SidecarSet[]): InjectionSnapshot {
  return {
    sidecarSets: buildSidecarSetIndex(sets),
    namespaces: new Map([['default', minimalNamespaceLabels('default')]]),
    revisions: () => [],
  };
}
