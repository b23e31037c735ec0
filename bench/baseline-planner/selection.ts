/** Which pods a SidecarSet's rollout looks at: those its selector and namespace rules match. */
import type { Pod } from '../../src/core/k8s-types.js';
import type { NamespaceLabels } from '../../src/core/match.js';
import { matchSidecarSet, podNamespace } from '../../src/core/match.js';
import type { SidecarSet } from '../../src/core/sidecarset-types.js';

/**
 * Selector and namespace rules as at injection, except that an injection pause does not stop
 * upgrades of pods already injected (reference upgrade §2.3), so it is ignored here.
 */
export function selectsForUpgrade(
  ss: SidecarSet,
  pod: Readonly<Pod>,
  namespaces: NamespaceLabels,
): boolean {
  const { injectionStrategy, ...spec } = ss.spec;
  const forMatching =
    injectionStrategy?.paused === true
      ? { ...ss, spec: { ...spec, injectionStrategy: { ...injectionStrategy, paused: false } } }
      : ss;
  return matchSidecarSet(forMatching, pod, podNamespace(pod), namespaces).matched;
}
