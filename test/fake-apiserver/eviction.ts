/**
 * pods/eviction, as kubernetes pkg/registry/core/pod/storage/eviction.go serves it: a pod that has
 * already caused its disruption (Pending, Succeeded, Failed, being deleted) is deleted at once;
 * otherwise the one PodDisruptionBudget selecting it must allow a disruption, which the eviction
 * spends (disruptionsAllowed - 1, the pod in disruptedPods) before the pod is deleted.
 */
import { ApiError, badRequest, notFound } from './errors.js';
import { clone, getPath, isJsonObject } from './json.js';
import type { JsonObject, JsonValue } from './json.js';
import { kubeTime } from './kubelet-status.js';
import { PODDISRUPTIONBUDGETS, PODS } from './resources.js';
import { parseLabelSelector } from './selectors.js';
import type { ObjectStore } from './store.js';
import type { KubeObject } from './types.js';

export interface EvictionReply {
  readonly status: number;
  readonly body: JsonObject;
}

interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

const VIOLATES_BUDGET = "Cannot evict pod as it would violate the pod's disruption budget.";
const MORE_THAN_ONE_BUDGET =
  'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.';

function statusBody(code: number, status: 'Success' | 'Failure', message?: string): JsonObject {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status,
    ...(message === undefined ? {} : { message }),
    code,
  };
}

/** errors.NewTooManyRequests with a DisruptionBudget cause (policy/v1 DisruptionBudgetCause). */
function tooManyRequests(cause: string, retryAfterSeconds: number): ApiError {
  return new ApiError(429, 'TooManyRequests', VIOLATES_BUDGET, {
    causes: [{ reason: 'DisruptionBudget', message: cause }],
    ...(retryAfterSeconds > 0 ? { retryAfterSeconds } : {}),
  });
}

function forbidden(pdb: string, why: string): ApiError {
  return new ApiError(
    403,
    'Forbidden',
    `poddisruptionbudget.policy "${pdb}" is forbidden: ${why}`,
    {
      name: pdb,
      group: 'policy',
      kind: 'poddisruptionbudget',
    },
  );
}

function numberAt(obj: JsonValue, path: string): number {
  const value = getPath(obj, path.split('.'));
  return typeof value === 'number' ? value : 0;
}

/** metav1.LabelSelectorAsSelector as a selector string; undefined when it is empty or invalid. */
function selectorString(selector: JsonValue | undefined): string | undefined {
  if (!isJsonObject(selector)) return undefined;
  const parts: string[] = [];
  const matchLabels = isJsonObject(selector['matchLabels']) ? selector['matchLabels'] : {};
  for (const [key, value] of Object.entries(matchLabels)) {
    if (typeof value !== 'string') return undefined;
    parts.push(`${key}=${value}`);
  }
  const expressions = Array.isArray(selector['matchExpressions'])
    ? selector['matchExpressions']
    : [];
  for (const e of expressions) {
    if (!isJsonObject(e) || typeof e['key'] !== 'string') return undefined;
    const values = Array.isArray(e['values']) ? e['values'].map(String) : [];
    const set = `(${values.join(',')})`;
    const requirement = {
      In: `${e['key']} in ${set}`,
      NotIn: `${e['key']} notin ${set}`,
      Exists: e['key'],
      DoesNotExist: `!${e['key']}`,
    }[typeof e['operator'] === 'string' ? e['operator'] : ''];
    if (requirement === undefined) return undefined;
    parts.push(requirement);
  }
  return parts.length === 0 ? undefined : parts.join(',');
}

/** The pod's namespace's budgets whose selector matches it; an empty selector matches nothing. */
function budgetsOf(store: ObjectStore, pod: KubeObject): KubeObject[] {
  const namespace = pod.metadata.namespace ?? '';
  return store.list(PODDISRUPTIONBUDGETS, { namespace }).items.filter((pdb) => {
    const selector = selectorString(getPath(pdb, ['spec', 'selector']));
    if (selector === undefined) return false;
    try {
      return parseLabelSelector(selector)(pod);
    } catch {
      return false; // an invalid selector matches no pod
    }
  });
}

function isReady(pod: KubeObject): boolean {
  const conditions = getPath(pod, ['status', 'conditions']);
  return (
    Array.isArray(conditions) &&
    conditions.some((c) => isJsonObject(c) && c['type'] === 'Ready' && c['status'] === 'True')
  );
}

function isTerminal(pod: KubeObject): boolean {
  const phase = getPath(pod, ['status', 'phase']);
  return phase === 'Succeeded' || phase === 'Failed';
}

/** canIgnorePDB: the pod has caused its disruption already. */
function canIgnoreBudget(pod: KubeObject): boolean {
  return (
    isTerminal(pod) ||
    getPath(pod, ['status', 'phase']) === 'Pending' ||
    pod.metadata['deletionTimestamp'] !== undefined
  );
}

/** checkAndDecrement: spends one disruption of the budget, or says why it cannot. */
function spendDisruption(
  store: ObjectStore,
  pdb: KubeObject,
  podName: string,
  dryRun: boolean,
): void {
  const name = pdb.metadata.name ?? '';
  const status = isJsonObject(pdb['status']) ? pdb['status'] : {};
  if (numberAt(status, 'observedGeneration') < (pdb.metadata.generation ?? 0)) {
    throw tooManyRequests(
      `The disruption budget ${name} is still being processed by the server.`,
      10,
    );
  }
  const allowed = numberAt(status, 'disruptionsAllowed');
  if (allowed < 0) throw forbidden(name, 'pdb disruptions allowed is negative');
  if (allowed === 0) {
    const desired = numberAt(status, 'desiredHealthy');
    const current = numberAt(status, 'currentHealthy');
    throw tooManyRequests(
      `The disruption budget ${name} needs ${desired} healthy pods and has ${current} currently`,
      0,
    );
  }
  if (dryRun) return;
  const disrupted = isJsonObject(status['disruptedPods']) ? status['disruptedPods'] : {};
  const next = clone(pdb);
  next['status'] = {
    ...status,
    disruptionsAllowed: allowed - 1,
    disruptedPods: { ...disrupted, [podName]: kubeTime(new Date()) },
  };
  store.update(PODDISRUPTIONBUDGETS, pdb.metadata.namespace ?? '', name, next, {
    subresource: 'status',
  });
}

/**
 * The pod's DELETE (pkg/registry/core/pod/strategy.go CheckGracefulDelete): a pod on a node that
 * has not finished is deleted gracefully, marked with deletionTimestamp for its kubelet to
 * remove; any other pod goes at once.
 */
function deletePod(
  store: ObjectStore,
  pod: KubeObject,
  preconditions: Preconditions,
  dryRun: boolean,
): void {
  const namespace = pod.metadata.namespace ?? '';
  const name = pod.metadata.name ?? '';
  const graceful = typeof getPath(pod, ['spec', 'nodeName']) === 'string' && !isTerminal(pod);
  // A dry-run delete checks the preconditions (409) and writes nothing.
  store.delete(PODS, namespace, name, { preconditions, dryRun: true });
  if (dryRun) return;
  if (!graceful) {
    store.delete(PODS, namespace, name);
    return;
  }
  if (pod.metadata['deletionTimestamp'] !== undefined) return;
  const grace = getPath(pod, ['spec', 'terminationGracePeriodSeconds']);
  store.mutate(PODS, namespace, name, (p) => {
    p.metadata['deletionTimestamp'] = kubeTime(new Date());
    p.metadata['deletionGracePeriodSeconds'] = typeof grace === 'number' ? grace : 30;
  });
}

function readPreconditions(eviction: JsonObject): { pre: Preconditions; dryRun: boolean } {
  const options = isJsonObject(eviction['deleteOptions']) ? eviction['deleteOptions'] : {};
  const given = isJsonObject(options['preconditions']) ? options['preconditions'] : {};
  const pre: Preconditions = {};
  if (typeof given['uid'] === 'string') pre.uid = given['uid'];
  if (typeof given['resourceVersion'] === 'string') pre.resourceVersion = given['resourceVersion'];
  const dryRun = Array.isArray(options['dryRun']) && options['dryRun'].includes('All');
  return { pre, dryRun };
}

/** POST .../namespaces/NS/pods/NAME/eviction with a policy/v1 Eviction body. */
export function evictPod(
  store: ObjectStore,
  namespace: string,
  name: string,
  body: JsonValue,
  queryDryRun: boolean,
): EvictionReply {
  if (!isJsonObject(body)) throw badRequest('not a Eviction object');
  if (getPath(body, ['metadata', 'name']) !== name) {
    throw badRequest('name in URL does not match name in Eviction object');
  }
  const { pre, dryRun: bodyDryRun } = readPreconditions(body);
  const dryRun = queryDryRun || bodyDryRun;
  const pod = store.get(PODS, namespace, name);
  if (pod === undefined) throw notFound(PODS, name);
  const success: EvictionReply = { status: 201, body: statusBody(201, 'Success') };
  if (canIgnoreBudget(pod)) {
    deletePod(store, pod, pre, dryRun);
    return success;
  }
  const budgets = budgetsOf(store, pod);
  if (budgets.length > 1) {
    return { status: 500, body: statusBody(500, 'Failure', MORE_THAN_ONE_BUDGET) };
  }
  const [pdb] = budgets;
  if (pdb !== undefined) {
    const status = isJsonObject(pdb['status']) ? pdb['status'] : {};
    const desired = numberAt(status, 'desiredHealthy');
    // An unready pod does not count towards healthy: while the budget has enough healthy pods,
    // it goes without spending a disruption, guarded by its resourceVersion.
    if (!isReady(pod) && numberAt(status, 'currentHealthy') >= desired && desired > 0) {
      pre.resourceVersion ??= pod.metadata.resourceVersion ?? '';
    } else {
      spendDisruption(store, pdb, name, dryRun);
    }
  }
  // As in eviction.go, the uid precondition is checked by the delete, after the budget is spent.
  deletePod(store, pod, pre, dryRun);
  return success;
}
