/**
 * What the pod admission webhook and `sidecarset inject` do with one pod: match, inject, diff.
 * Pure: the snapshot, the clock and the random source are passed in.
 */
import type { InjectOptions } from '../inject/inject.js';
import { injectPod } from '../inject/inject.js';
import type { RevisionLookup } from '../inject/revision.js';
import type { Pod } from '../api/k8s-types.js';
import type { NamespaceLabels } from '../matching/match.js';
import { podNamespace } from '../api/pod-ref.js';
import type { JsonPatchOperation } from './patch.js';
import { diffAsJsonPatch } from './patch.js';
import type { SidecarSetIndex } from '../matching/sidecarset-index.js';
import { matchingSidecarSets } from '../matching/sidecarset-index.js';

/** The read-only view of the cluster that injection needs. */
export interface InjectionSnapshot {
  sidecarSets: SidecarSetIndex;
  namespaces: NamespaceLabels;
  revisions: RevisionLookup;
}

export interface PodMutationRequest {
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT' | (string & {});
  pod: Readonly<Pod>;
  /** The request's namespace, used when the pod object carries none. */
  namespace?: string;
}

export type PodMutation =
  | { kind: 'skipped'; reason: string }
  | {
      kind: 'mutated';
      pod: Pod;
      patch: JsonPatchOperation[];
      injected: string[];
      warnings: string[];
    };

export function mutatePod(
  request: PodMutationRequest,
  snapshot: InjectionSnapshot,
  env: Pick<InjectOptions, 'now' | 'random' | 'jobSidecars'>,
): PodMutation {
  // UPDATE never re-injects (OpenKruise pkg/webhook/pod/mutating/sidecarset.go): sidecars are added only when a pod is created.
  if (request.operation !== 'CREATE') {
    return { kind: 'skipped', reason: `operation ${request.operation} is not injected` };
  }
  const { pod } = request;
  const inactive = inactiveReason(pod);
  if (inactive !== undefined) return { kind: 'skipped', reason: inactive };
  const namespace = podNamespace(pod, request.namespace);
  const matched = matchingSidecarSets(snapshot.sidecarSets, pod, namespace, snapshot.namespaces);
  if (matched.length === 0) return { kind: 'skipped', reason: 'no SidecarSet matches the pod' };
  const outcome = injectPod(pod, matched, { ...env, revisions: snapshot.revisions });
  return {
    kind: 'mutated',
    pod: outcome.pod,
    patch: diffAsJsonPatch(pod, outcome.pod),
    injected: outcome.injected,
    warnings: outcome.warnings,
  };
}

/** Pods that have finished or are being deleted are left alone (as OpenKruise's pod webhook skips them). */
export function inactiveReason(pod: Readonly<Pod>): string | undefined {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return `the pod has phase ${phase}`;
  if (pod.metadata.deletionTimestamp) return 'the pod is being deleted';
  return undefined;
}
