/** Which pods a SidecarSet's rollout looks at: those its selector and namespace rules match. */
import type { Pod } from '../api/k8s-types.js';
import type { NamespaceLabels } from './match.js';
import { matchSidecarSet } from './match.js';
import { podNamespace } from '../api/pod-ref.js';
import type { SidecarSet } from '../api/sidecarset-types.js';

/**
 * Selector and namespace rules as at injection, except that an injection pause does not stop
 * upgrades of pods already injected (getMatchingPods), so it is ignored here.
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
