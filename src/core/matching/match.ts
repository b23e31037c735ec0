/** Whether one SidecarSet applies to one pod (OpenKruise PodMatchedSidecarSet, pkg/control/sidecarcontrol/util.go), with the reason if not. */
import { NAMESPACE_NAME_LABEL } from '../api/annotations.js';
import type { Pod } from '../api/k8s-types.js';
import type { Labels } from './selector.js';
import { isEmptySelector, selectorMatches, selectorMatchesAll } from './selector.js';
import type { SidecarSet } from '../api/sidecarset-types.js';

/** Namespace name → that Namespace object's labels; undefined when the namespace does not exist. */
export interface NamespaceLabels {
  get(name: string): Labels | undefined;
}

/** Every namespace exists, with only the label the API server always sets (Kubernetes ≥ 1.21). */
export const ANY_NAMESPACE: NamespaceLabels = {
  get: (name) => minimalNamespaceLabels(name),
};

export type MatchResult = { matched: true } | { matched: false; reason: string };

const MATCHED: MatchResult = { matched: true };

export function matchSidecarSet(
  sidecarSet: SidecarSet,
  pod: Pick<Pod, 'metadata'>,
  namespace: string,
  namespaces: NamespaceLabels,
): MatchResult {
  if (sidecarSet.spec.injectionStrategy?.paused === true) {
    return { matched: false, reason: 'injectionStrategy.paused is true' };
  }
  const inNamespace = matchNamespace(sidecarSet, namespace, namespaces);
  return inNamespace.matched ? matchSelector(sidecarSet, pod) : inNamespace;
}

/** The namespace rules alone: spec.namespace, then namespaceSelector. */
export function matchNamespace(
  sidecarSet: SidecarSet,
  namespace: string,
  namespaces: NamespaceLabels,
): MatchResult {
  const spec = sidecarSet.spec;
  if (spec.namespace && spec.namespace !== namespace) {
    return {
      matched: false,
      reason: `spec.namespace is ${spec.namespace}, the pod is in ${namespace}`,
    };
  }
  if (spec.namespaceSelector !== undefined) {
    const nsLabels = namespaces.get(namespace);
    if (nsLabels === undefined) {
      return { matched: false, reason: `namespace ${namespace} is not known` };
    }
    if (!selectorMatchesAll(spec.namespaceSelector, nsLabels)) {
      return {
        matched: false,
        reason: `namespaceSelector does not match the labels of namespace ${namespace}`,
      };
    }
  }
  return MATCHED;
}

/** spec.selector alone: an empty selector matches no pod. */
export function matchSelector(sidecarSet: SidecarSet, pod: Pick<Pod, 'metadata'>): MatchResult {
  const selector = sidecarSet.spec.selector;
  if (selector === undefined || isEmptySelector(selector)) {
    return { matched: false, reason: 'spec.selector is empty, which matches no pod' };
  }
  if (!selectorMatches(selector, pod.metadata.labels ?? {})) {
    return { matched: false, reason: "spec.selector does not match the pod's labels" };
  }
  return MATCHED;
}

/** A namespace's labels as the API server guarantees them at least (since Kubernetes 1.21). */
export function minimalNamespaceLabels(name: string): Labels {
  return { [NAMESPACE_NAME_LABEL]: name };
}
