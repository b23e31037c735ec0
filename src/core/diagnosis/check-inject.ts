/**
 * `sidecarset check-inject`: for one pod and every SidecarSet, whether the SidecarSet injected it
 * (or would inject a pod like it now) and why not, like `istioctl x check-inject`. Pure: the pod,
 * the SidecarSets and the pod's namespace labels in, one verdict per SidecarSet out.
 *
 * The checks are the webhook's own rules, in its order: the namespace and selector of matching
 * (match.ts), injectionStrategy.paused, a canary that replaces its base (inject.ts), and the
 * conflicts the validating webhook looks for between SidecarSets that select a common pod
 * (validation/sidecarset-conflicts.ts), here between those that select this pod. OpenKruise
 * injects only at creation (pkg/webhook/pod/mutating/sidecarset.go), so a pod created before the
 * SidecarSet is not missing anything; one created after it that matches but does not carry it
 * is a missed pod (issue 11).
 */
import { SIDECARSET_BASE, SIDECARSET_CANARY, SIDECARSET_HASH } from '../api/annotations.js';
import type { LabelSelector, Pod } from '../api/k8s-types.js';
import { selectorMatchesAll } from '../matching/selector.js';
import type { NamespaceLabels } from '../matching/match.js';
import {
  matchNamespace,
  matchSelector,
  matchSidecarSet,
  minimalNamespaceLabels,
} from '../matching/match.js';
import { podNamespace } from '../api/pod-ref.js';
import { webhookScopes } from '../scope/cel.js';
import type { ScopePrecision, WebhookScope } from '../scope/webhook-scope.js';
import { podInWebhookScope } from '../scope/webhook-scope.js';
import { compareStrings } from '../encoding/json.js';
import { injectedNames } from '../pod-annotations/injected-list.js';
import { createdSince } from '../matching/missed-pods.js';
import { recordedHash } from '../pod-annotations/pod-hash-annotation.js';
import { withHashes } from '../api/hash.js';
import type { SidecarSet } from '../api/sidecarset-types.js';
import { conflictsWithOverlapping } from '../validation/sidecarset-conflicts.js';

type CheckName =
  | 'namespace'
  | 'selector'
  | 'injectionStrategy'
  | 'canary'
  | 'conflicts'
  | 'creation'
  | 'upgrade'
  | 'webhook';

interface Check {
  name: CheckName;
  /** False when this check is why the SidecarSet does not (or should not) inject the pod. */
  ok: boolean;
  message: string;
}

type InjectionState =
  /** The pod carries the SidecarSet's sidecars. */
  | 'Injected'
  /** The SidecarSet injects pods like this one; the pod has no creation time to compare. */
  | 'WouldInject'
  /** It matches and existed before the pod, yet the pod lacks it: webhook down or skipped. */
  | 'Missed'
  /** It matches now, but the pod is older than the SidecarSet: injected only at creation. */
  | 'CreatedBefore'
  /** It does not inject this pod: a check failed. */
  | 'NotInjected';

export interface InjectionVerdict {
  sidecarSet: string;
  state: InjectionState;
  /** The pod's kruise.io/sidecarset-injected-list names it. */
  injected: boolean;
  /** The SidecarSet as it is now would inject a new pod like this one. */
  injects: boolean;
  /** One line for people: the verdict's first reason. */
  reason: string;
  checks: Check[];
}

/** Whether the API server sends the pod's creation to the webhook at all (issue 11: a scoped webhook). */
interface WebhookScopeCheck {
  inScope: boolean;
  /** The scope's level as the leader writes it for these SidecarSets (docs/adr/0012-scoped-pod-webhook.md). */
  precision: ScopePrecision;
  message: string;
}

export interface PodCheck {
  pod: string;
  webhookScope: WebhookScopeCheck;
  /** SidecarSets the pod's injected list names that do not exist (any more). */
  unknownInjected: string[];
  verdicts: InjectionVerdict[];
}

/** The pod webhook's own selectors as installed (manifests/: not kube-system, ...), if known. */
export interface WebhookSelectors {
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
}

export function checkInjection(
  pod: Readonly<Pod>,
  sidecarSets: readonly SidecarSet[],
  namespaces: NamespaceLabels,
  webhook: WebhookSelectors = {},
): PodCheck {
  const namespace = podNamespace(pod);
  const sorted = [...sidecarSets].sort((a, b) =>
    compareStrings(a.metadata.name ?? '', b.metadata.name ?? ''),
  );
  const matches = new Map(
    sorted.map((ss) => [ss, matchSidecarSet(ss, pod, namespace, namespaces)] as const),
  );
  const matching = sorted.filter((ss) => matches.get(ss)?.matched === true);
  const injectedList = new Set(injectedNames(pod));
  const known = new Set(sorted.map((ss) => ss.metadata.name ?? ''));
  const unseen = unseenBecause(pod, namespace, namespaces, webhook);
  return {
    pod: `${namespace}/${pod.metadata.name ?? ''}`,
    webhookScope:
      unseen === undefined
        ? scopeCheck(pod, sidecarSets, namespace, namespaces)
        : { inScope: false, precision: 'everything', message: unseen },
    unknownInjected: [...injectedList].filter((n) => !known.has(n)).sort(compareStrings),
    verdicts: sorted.map((ss) =>
      verdictFor(ss, { pod, namespace, namespaces, matching, injectedList, unseen }),
    ),
  };
}

interface Inputs {
  pod: Readonly<Pod>;
  namespace: string;
  namespaces: NamespaceLabels;
  /** The SidecarSets that match the pod now. */
  matching: readonly SidecarSet[];
  injectedList: ReadonlySet<string>;
  /** Why the installed webhook never sees the pod, if it does not. */
  unseen: string | undefined;
}

/** Why the webhook's installed selectors leave the pod out, or undefined when they do not. */
function unseenBecause(
  pod: Readonly<Pod>,
  namespace: string,
  namespaces: NamespaceLabels,
  webhook: WebhookSelectors,
): string | undefined {
  const nsLabels = namespaces.get(namespace) ?? minimalNamespaceLabels(namespace);
  if (
    webhook.namespaceSelector !== undefined &&
    !selectorMatchesAll(webhook.namespaceSelector, nsLabels)
  ) {
    return `the pod webhook's namespaceSelector leaves namespace ${namespace} out: it never sees the pod`;
  }
  if (
    webhook.objectSelector !== undefined &&
    !selectorMatchesAll(webhook.objectSelector, pod.metadata.labels ?? {})
  ) {
    return "the pod webhook's objectSelector leaves the pod out: it never sees the pod";
  }
  return undefined;
}

/**
 * The scope the pod webhook gets from these SidecarSets: never narrower than what they match, so
 * a pod outside it is one no SidecarSet can match, and the webhook is not even called for it.
 */
function scopeCheck(
  pod: Readonly<Pod>,
  sidecarSets: readonly SidecarSet[],
  namespace: string,
  namespaces: NamespaceLabels,
): WebhookScopeCheck {
  // The levels always end with `everything`: there is a first one.
  const scope = webhookScopes(sidecarSets)[0] as WebhookScope;
  const labels = namespaces.get(namespace) ?? minimalNamespaceLabels(namespace);
  const inScope = podInWebhookScope(scope, pod.metadata.labels ?? {}, namespace, labels);
  return {
    inScope,
    precision: scope.precision,
    message: inScope
      ? `a scoped pod webhook is called for pods like this one (scope: ${scope.precision})`
      : `a scoped pod webhook is not called for pods like this one: no SidecarSet can match it (scope: ${scope.precision})`,
  };
}

function verdictFor(ss: SidecarSet, inputs: Inputs): InjectionVerdict {
  const name = ss.metadata.name ?? '';
  const injected = inputs.injectedList.has(name);
  const checks: Check[] = [
    namespaceCheck(ss, inputs),
    selectorCheck(ss, inputs),
    injectionStrategyCheck(ss),
    canaryCheck(ss, inputs),
    conflictsCheck(ss, inputs, injected),
  ];
  if (inputs.unseen !== undefined && !injected) {
    checks.push({ name: 'webhook', ok: false, message: inputs.unseen });
  }
  const creation = creationCheck(ss, inputs.pod, injected);
  if (creation !== undefined) checks.push(creation);
  if (injected) checks.push(upgradeCheck(ss, inputs.pod));
  const failed = checks.find((c) => !c.ok);
  const injects = checks.every((c) => c.ok || c.name === 'creation' || c.name === 'upgrade');
  const state = stateOf(injected, injects, creation);
  return {
    sidecarSet: name,
    state,
    injected,
    injects,
    reason: reasonOf(state, failed, checks),
    checks,
  };
}

function stateOf(injected: boolean, injects: boolean, creation: Check | undefined): InjectionState {
  if (injected) return 'Injected';
  if (!injects) return 'NotInjected';
  if (creation === undefined) return 'WouldInject';
  return creation.ok ? 'Missed' : 'CreatedBefore';
}

function reasonOf(state: InjectionState, failed: Check | undefined, checks: Check[]): string {
  switch (state) {
    case 'Injected': {
      const upgrade = checks.find((c) => c.name === 'upgrade');
      const notes = checks.filter((c) => !c.ok && c.name !== 'upgrade').map((c) => c.message);
      return ['injected', upgrade?.message ?? '', ...notes].filter((s) => s !== '').join('; ');
    }
    case 'WouldInject':
      return 'a pod created like this one now gets its sidecars';
    case 'Missed':
      return (
        'it matches and existed when the pod was created, but the pod lacks its sidecars: ' +
        'the webhook was down or not called for the pod (failurePolicy Ignore); recreate the pod'
      );
    case 'CreatedBefore':
      return failed?.message ?? '';
    case 'NotInjected':
      return failed?.message ?? '';
  }
}

function namespaceCheck(ss: SidecarSet, { namespace, namespaces }: Inputs): Check {
  const result = matchNamespace(ss, namespace, namespaces);
  if (!result.matched) return { name: 'namespace', ok: false, message: result.reason };
  const message =
    ss.spec.namespace !== undefined && ss.spec.namespace !== ''
      ? `spec.namespace is ${namespace}`
      : ss.spec.namespaceSelector !== undefined
        ? `namespaceSelector matches namespace ${namespace}`
        : 'any namespace';
  return { name: 'namespace', ok: true, message };
}

function selectorCheck(ss: SidecarSet, { pod }: Inputs): Check {
  const result = matchSelector(ss, pod);
  return result.matched
    ? { name: 'selector', ok: true, message: "spec.selector matches the pod's labels" }
    : { name: 'selector', ok: false, message: result.reason };
}

function injectionStrategyCheck(ss: SidecarSet): Check {
  const strategy = ss.spec.injectionStrategy;
  if (strategy?.paused === true) {
    return {
      name: 'injectionStrategy',
      ok: false,
      message: 'injectionStrategy.paused is true: new pods are not injected',
    };
  }
  const pin = strategy?.revision;
  const pinned = pin?.revisionName ?? pin?.customVersion;
  return {
    name: 'injectionStrategy',
    ok: true,
    message:
      pinned === undefined
        ? 'injects the current spec'
        : `injects revision ${pinned} (injectionStrategy.revision, policy ${pin?.policy ?? 'Always'})`,
  };
}

/** A canary SidecarSet that also matches the pod replaces this one, its base (inject.ts). */
function canaryCheck(ss: SidecarSet, { matching }: Inputs): Check {
  const name = ss.metadata.name ?? '';
  const canary = matching.find(
    (o) =>
      o.metadata.annotations?.[SIDECARSET_CANARY] === 'true' &&
      o.metadata.annotations[SIDECARSET_BASE] === name,
  );
  return canary === undefined
    ? { name: 'canary', ok: true, message: 'no canary SidecarSet replaces it' }
    : {
        name: 'canary',
        ok: false,
        message: `canary SidecarSet ${canary.metadata.name ?? ''} matches the pod too and replaces it`,
      };
}

/**
 * Conflicts with the other SidecarSets that match the pod (the validating webhook refuses them,
 * but SidecarSets created while it was down or by another webhook can hold them), and, for a pod
 * not injected yet, app containers that a sidecar of the same name would replace.
 */
function conflictsCheck(ss: SidecarSet, { matching, pod }: Inputs, injected: boolean): Check {
  const name = ss.metadata.name ?? '';
  const base = ss.metadata.annotations?.[SIDECARSET_BASE];
  const others = matching.filter((o) => o.metadata.name !== name && o.metadata.name !== base);
  const problems = conflictsWithOverlapping(ss, others).map((e) => e.detail);
  if (!injected) {
    const own = new Set(
      [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].map((c) => c.name),
    );
    for (const c of [...(ss.spec.containers ?? []), ...(ss.spec.initContainers ?? [])]) {
      if (own.has(c.name))
        problems.push(`the pod's own container ${c.name} would be replaced by the sidecar`);
    }
  }
  return problems.length === 0
    ? { name: 'conflicts', ok: true, message: 'no conflict with the pod or other SidecarSets' }
    : { name: 'conflicts', ok: false, message: problems.join('; ') };
}

/** Whether the SidecarSet existed when the pod was created; undefined when a time is missing. */
function creationCheck(ss: SidecarSet, pod: Readonly<Pod>, injected: boolean): Check | undefined {
  if (injected) return undefined;
  const since = createdSince(pod, ss);
  if (since === undefined) return undefined;
  return since
    ? { name: 'creation', ok: true, message: 'the SidecarSet existed when the pod was created' }
    : {
        name: 'creation',
        ok: false,
        message:
          'the pod was created before the SidecarSet; sidecars are injected only when a pod is created',
      };
}

/** For an injected pod: whether it runs the SidecarSet's current version, and what upgrades it. */
function upgradeCheck(ss: SidecarSet, pod: Readonly<Pod>): Check {
  const hash = withHashes(ss).metadata.annotations?.[SIDECARSET_HASH] ?? '';
  const recorded = recordedHash(
    pod.metadata.annotations?.[SIDECARSET_HASH],
    ss.metadata.name ?? '',
  );
  if (recorded === hash) return { name: 'upgrade', ok: true, message: 'sidecars up to date' };
  const strategy = ss.spec.updateStrategy;
  const why =
    strategy?.type === 'NotUpdate'
      ? 'updateStrategy.type is NotUpdate'
      : strategy?.paused === true
        ? 'updateStrategy.paused is true'
        : `the controller upgrades it in place (sidecarset rollout status ${ss.metadata.name ?? ''})`;
  return { name: 'upgrade', ok: false, message: `sidecars outdated: ${why}` };
}
