/**
 * Missed pods: pods a SidecarSet should have been injected into at creation but were not — created
 * while the webhook was down (failurePolicy Ignore), or skipped by a scope that had not yet caught
 * up with a new SidecarSet (docs/adr/0012-scoped-pod-webhook.md). OpenKruise injects only at
 * creation, so a pod created before the SidecarSet is not missed.
 *
 * What the pod looked like at creation is not kept anywhere, so this judges by what is known now:
 * the pod's current labels and namespace, the SidecarSet's current spec (paused, namespace,
 * selectors), and the creation times of both (to the second, as the API server keeps them: a pod
 * created in the same second as the SidecarSet counts as after it). A pod the webhook is not
 * configured to see at all (the installer's namespaceSelector and objectSelector, such as the
 * opt-out label) is not missed either.
 */
import { injectedNames } from '../pod-annotations/injected-list.js';
import type { LabelSelector, Pod } from '../api/k8s-types.js';
import type { NamespaceLabels } from './match.js';
import { matchSidecarSet } from './match.js';
import { podNamespace } from '../api/pod-ref.js';
import { selectorMatchesAll } from './selector.js';
import type { SidecarSet } from '../api/sidecarset-types.js';

/** The pod webhook's own selectors, less any scope: which pods it is configured to see. */
export interface WebhookSelectors {
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
}

export function isMissedBy(
  ss: SidecarSet,
  pod: Pick<Pod, 'metadata'>,
  namespaces: NamespaceLabels,
  webhook: WebhookSelectors = {},
): boolean {
  const name = ss.metadata.name ?? '';
  if (injectedNames(pod).includes(name)) return false;
  if (createdSince(pod, ss) !== true) return false;
  const namespace = podNamespace(pod);
  try {
    return (
      webhookSees(pod, namespace, namespaces, webhook) &&
      matchSidecarSet(ss, pod, namespace, namespaces).matched
    );
  } catch {
    // A selector with an unknown operator: the webhook cannot inject by it either.
    return false;
  }
}

/**
 * Whether the pod was created when the SidecarSet existed (the same second counts: the API server
 * keeps creation times to the second); undefined when either time is missing or unreadable.
 */
export function createdSince(pod: Pick<Pod, 'metadata'>, ss: SidecarSet): boolean | undefined {
  const podCreated = timeOf(pod.metadata.creationTimestamp);
  const ssCreated = timeOf(ss.metadata.creationTimestamp);
  if (podCreated === undefined || ssCreated === undefined) return undefined;
  return podCreated >= ssCreated;
}

/** A time as the API server writes it, or as @kubernetes/client-node hands it over (a Date). */
function timeOf(value: unknown): number | undefined {
  if (value instanceof Date) return value.getTime();
  if (typeof value !== 'string' || value === '') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

function webhookSees(
  pod: Pick<Pod, 'metadata'>,
  namespace: string,
  namespaces: NamespaceLabels,
  webhook: WebhookSelectors,
): boolean {
  const nsLabels = namespaces.get(namespace);
  if (webhook.namespaceSelector !== undefined) {
    if (nsLabels === undefined || !selectorMatchesAll(webhook.namespaceSelector, nsLabels)) {
      return false;
    }
  }
  return (
    webhook.objectSelector === undefined ||
    selectorMatchesAll(webhook.objectSelector, pod.metadata.labels ?? {})
  );
}
