/**
 * One reconcile of one SidecarSet (OpenKruise Processor.UpdateSidecarSet, pkg/controller/sidecarset/sidecarset_processor.go): cache snapshot → planUpgrade → writes.
 * Glue only: every decision is made by the pure planner; this decides nothing but the order and
 * safety of the writes.
 */
import pLimit from 'p-limit';
import type { Logger } from 'pino';

import { SIDECARSET_HASH } from '../core/api/annotations.js';
import type { Pod } from '../core/api/k8s-types.js';
import { withHashes } from '../core/api/hash.js';
import { V1BETA1 } from '../core/api/sidecarset-types.js';
import type {
  SidecarSet,
  SidecarSetCondition,
  SidecarSetStatus,
} from '../core/api/sidecarset-types.js';
import type { StoredRevision } from '../core/revisions/history.js';
import { ROLLOUT_PAUSED } from '../core/api/sidecarset-types.js';
import { nextRolloutPausedConditions } from '../core/status/rollout-paused-condition.js';
import { healthSettings } from '../core/api/health-gate-annotations.js';
import type { SidecarSetContext } from '../core/upgrade/context.js';
import { sidecarSetContext } from '../core/upgrade/context.js';
import { planUpgrade } from '../core/upgrade/plan.js';
import { recordedHash } from '../core/pod-annotations/pod-hash-annotation.js';
import { nextStatusConditions } from '../core/status/status-conditions.js';
import { nextUpdateFailureConditions } from '../core/status/update-failure-condition.js';
import {
  nextRevisionFailureConditions,
  revisionFailureMessage,
  revisionHistoryFailure,
} from '../core/status/revision-failure-condition.js';
import { isStateConsistent, isUpdated } from '../core/upgrade/pod-state.js';
import { podKey, podRef } from '../core/api/pod-ref.js';
import { isTerminating } from '../core/api/pod-status.js';
import { selectsForUpgrade } from '../core/matching/upgrade-selection.js';
import type { UpgradePlan } from '../core/upgrade/types.js';
import { nextUpgradableCondition } from '../core/status/upgradable-condition.js';
import { resizableVersions } from '../core/revisions/history.js';
import type { PodWriteDeps } from './pod-writes.js';
import {
  PlanRaceError,
  PodUpdateError,
  evictPod,
  flipPod,
  podEvent,
  upgradePod,
} from './pod-writes.js';
import {
  gateCondition,
  gateStatus,
  gatesToOpen,
  hasReadinessGate,
  isGateClosedBy,
  sidecarsReady,
} from '../core/upgrade/readiness-gate.js';
import type { RegisteredRevision } from './revisions.js';
import type { ControllerView, ObjectReference, RoundObserver } from './ports.js';
import { ConflictError } from './ports.js';

export interface ReconcileDeps extends PodWriteDeps {
  view: ControllerView;
  logger: Logger;
  /** Not-upgradable counts last reported per SidecarSet, so that events do not repeat. */
  reported: Map<string, number>;
  /** Told what each round found and wrote (metrics). */
  observer?: RoundObserver;
  /** The SidecarSet's ControllerRevisions: pods on their versions may be resized in place. */
  revisions?: (sidecarSet: string) => readonly StoredRevision[];
  /** Registers the latest ControllerRevision (sidecarset_processor.go registerLatestRevision); without it the status keeps what it has. */
  registerRevision?: (ss: SidecarSet, pods: readonly Pod[]) => Promise<RegisteredRevision>;
}

export interface ReconcileResult {
  requeueAfterMs?: number;
}

/** Our own writes not yet in the cache: look again soon (OpenKruise waits 1 s too). */
const EXPECTATION_RECHECK_MS = 1000;
/** Past a progress deadline before judging again (timestamps are whole seconds). */
const DEADLINE_MARGIN_MS = 1000;
/** After a PodDisruptionBudget refused an eviction: try again (kubectl drain waits 5 s). */
const EVICTION_RETRY_MS = 5000;

export async function reconcileSidecarSet(
  name: string,
  deps: ReconcileDeps,
  signal: AbortSignal,
): Promise<ReconcileResult> {
  // A round whose leadership ended (signal aborted) writes and reports nothing more: the next
  // leader owns the SidecarSet's status, pods and metrics. Checked before each step that writes.
  signal.throwIfAborted();
  const found = deps.view.sidecarSet(name);
  if (found === undefined) {
    // Nothing will finish what the SidecarSet started: its pods go back into their Services.
    const closed = deps.view.podsInjectedBy(name).filter((pod) => isGateClosedBy(name, pod));
    await openGates(closed, 'SidecarSetDeleted', `SidecarSet ${name} was deleted`, deps);
    deps.expectations.forget(name);
    deps.recreations.forget(name);
    deps.inFlight.delete(name);
    deps.podWrites.delete(name);
    deps.reported.delete(name);
    deps.observer?.status?.(name, undefined);
    deps.observer?.rolloutPaused?.(name, undefined);
    return {};
  }
  const stored = withHashes(found);
  const log = deps.logger.child({ sidecarSet: name });
  const injected = deps.view.podsInjectedBy(name);
  const pods = injected.filter((pod) => selectsForUpgrade(stored, pod, deps.view.namespaces));
  const revision = await registerRevision(stored, pods, deps, log);
  signal.throwIfAborted();
  // From here on the SidecarSet carries its latest revision, which upgraded pods record.
  const ss: SidecarSet =
    revision === undefined || 'failure' in revision
      ? stored
      : { ...stored, status: { ...stored.status, ...revision.registered } };
  const ctx = sidecarSetContext(ss);
  observe(name, ctx, pods, deps);
  await initializeReadinessGates(pods, deps);
  const finished = `SidecarSet ${name}: no sidecar is being restarted`;
  await openGates(gatesToOpen(ctx, injected), 'InPlaceUpdateFinished', finished, deps);
  signal.throwIfAborted();
  const cachedPod = podLookup(pods);
  await finishUpgrades(name, ctx, cachedPod, deps);
  signal.throwIfAborted();

  const now = deps.now();
  const podResize = await deps.writer.canResizePods();
  const versions = resizableVersions(deps.revisions?.(name) ?? []);
  const awaitingReplacement = deps.recreations.awaiting(name, injected, now);
  const plan = planUpgrade(ss, pods, { now, podResize, versions, awaitingReplacement });
  // Upgraded pods still within their progress deadline are judged again when it passes, even if
  // nothing about them changes by then.
  const done = (result: ReconcileResult = {}): ReconcileResult => {
    const times = [plan.health?.recheckAt, plan.availableAt].flatMap((t) => (t ? [t] : []));
    if (times.length === 0) return result;
    const recheck = new Date(Math.min(...times.map((t) => t.getTime())));
    const ms = Math.max(recheck.getTime() - now.getTime(), 0) + DEADLINE_MARGIN_MS;
    return { requeueAfterMs: Math.min(result.requeueAfterMs ?? ms, ms) };
  };
  const problems = healthSettings(ss).problems;
  if (problems.length > 0) log.warn({ problems }, 'health gate annotations not understood');
  try {
    await writeStatus(stored, plan, deps, revision);
  } catch (err) {
    // The SidecarSet changed since the cache gave it: plan again once the cache has the change.
    if (err instanceof ConflictError) return done({ requeueAfterMs: EXPECTATION_RECHECK_MS });
    throw err;
  }
  signal.throwIfAborted();
  deps.observer?.status?.(name, plan.status);
  deps.observer?.rolloutPaused?.(name, plan.stopped === 'UnhealthyPods');

  const pending = deps.expectations.pending(name, ctx.hash);
  if (pending.length > 0) {
    log.debug({ pending: pending.length }, 'waiting for the cache to show our writes');
    return done({ requeueAfterMs: EXPECTATION_RECHECK_MS });
  }
  if (plan.stopped !== undefined) return done();
  if (plan.flip.length > 0) {
    log.info({ pods: plan.flip.map((f) => podKey(f.pod)) }, 'hot upgrades finished: flipping');
    const flipped = await settleAll(plan.flip.map((f) => flipPod(ss, ctx, f, deps, signal)));
    deps.observer?.podsWritten?.('flip', flipped);
    return done();
  }

  await reportNotUpgradable(ss, plan, cachedPod, deps);
  signal.throwIfAborted();
  return done(await startUpgrades(ss, ctx, plan, { cachedPod, deps, log }, signal));
}

/**
 * This round's upgrades and evictions, all at once (each waits for its token). Resolves with a
 * retry when a PodDisruptionBudget refused an eviction: nothing else may change meanwhile.
 */
async function startUpgrades(
  ss: SidecarSet,
  ctx: SidecarSetContext,
  plan: UpgradePlan,
  {
    cachedPod,
    deps,
    log,
  }: { cachedPod: (key: string) => Pod | undefined; deps: ReconcileDeps; log: Logger },
  signal: AbortSignal,
): Promise<ReconcileResult> {
  if (plan.upgrade.length === 0 && plan.recreate.length === 0) return {};
  log.info(
    {
      pods: plan.upgrade.map((u) => podKey(u.pod)),
      recreate: plan.recreate.map((r) => podKey(r.pod)),
      budget: plan.budget,
    },
    'upgrading sidecars',
  );
  const upgrades = Promise.allSettled(
    plan.upgrade.map((u) =>
      upgradePod(ss, ctx, { planned: u, cachedPod: cachedPod(podKey(u.pod)) }, deps, signal),
    ),
  );
  const evictions = Promise.allSettled(
    plan.recreate.map((r) =>
      evictPod(ss, ctx, { planned: r, cachedPod: cachedPod(podKey(r.pod)) }, deps, signal),
    ),
  );
  const results = await upgrades;
  const evictionResults = await evictions;
  const upgraded = succeeded(results);
  const evicted = succeeded(evictionResults);
  deps.observer?.podsWritten?.('upgrade', upgraded);
  deps.observer?.podsWritten?.('evict', evicted);
  if (upgraded > 0) {
    await deps.writer.event(
      sidecarSetRef(ss),
      'Normal',
      'UpgradeStarted',
      `upgrading the sidecars of ${upgraded} pod(s) in place to ${shortHash(ctx.hash)}`,
    );
  }
  if (evicted > 0) {
    await deps.writer.event(
      sidecarSetRef(ss),
      'Normal',
      'RecreateStarted',
      `evicted ${evicted} pod(s) so that their controllers recreate them with ${shortHash(ctx.hash)}`,
    );
  }
  const failures = [...results, ...evictionResults].flatMap((r) =>
    r.status === 'rejected' ? [r.reason as Error] : [],
  );
  const first = failures.find((err) => !(err instanceof PlanRaceError));
  if (first !== undefined) {
    if (!signal.aborted) await recordWriteFailure(ss, first, deps);
    throw first;
  }
  if (plan.upgrade.length > 0) deps.podWrites.set(ctx.name, { failed: false });
  // A pod changed under the plan: plan again once the cache has the change.
  if (failures.length > 0) return { requeueAfterMs: EXPECTATION_RECHECK_MS };
  // Evictions a PodDisruptionBudget refused: try again soon, even if nothing changes meanwhile.
  return evicted < evictionResults.length ? { requeueAfterMs: EVICTION_RETRY_MS } : {};
}

/**
 * A pod write failed: the next status says so (PodUpdateFailure) and an event tells why; the
 * round then fails, and the queue backs off before the next.
 */
async function recordWriteFailure(
  ss: SidecarSet,
  err: unknown,
  deps: ReconcileDeps,
): Promise<void> {
  if (!(err instanceof PodUpdateError)) return;
  const name = ss.metadata.name ?? '';
  deps.podWrites.set(name, { failed: true, message: err.message });
  await deps.writer.event(sidecarSetRef(ss), 'Warning', 'PodUpdateFailed', err.message);
}

/** How many writes resolved true (the pod was written). */
function succeeded(results: readonly PromiseSettledResult<boolean>[]): number {
  return results.filter((r) => r.status === 'fulfilled' && r.value).length;
}

/**
 * What recording the latest ControllerRevision came to: undefined when not tried (no
 * registerRevision), else the revision, or why it failed (the RevisionHistoryFailure condition).
 */
type RevisionOutcome = { registered: RegisteredRevision } | { failure: string } | undefined;

/**
 * The latest ControllerRevision. Unlike OpenKruise, a failed registration does not stop the round:
 * upgrades do not depend on the revision history; the status says what it costs.
 */
async function registerRevision(
  ss: SidecarSet,
  pods: readonly Pod[],
  deps: ReconcileDeps,
  log: Logger,
): Promise<RevisionOutcome> {
  if (deps.registerRevision === undefined) return undefined;
  try {
    return { registered: await deps.registerRevision(ss, pods) };
  } catch (err) {
    log.warn({ err }, 'could not register the latest ControllerRevision');
    return { failure: revisionFailureMessage(err) };
  }
}

/** Clears expectations the cache now meets, and pods that are gone. */
function observe(
  name: string,
  ctx: SidecarSetContext,
  pods: readonly Pod[],
  deps: ReconcileDeps,
): void {
  const seen = new Set<string>();
  for (const pod of pods) {
    const key = podKey(podRef(pod));
    if (isTerminating(pod)) continue; // evicted: nothing more to wait for
    seen.add(key);
    deps.expectations.observe(
      name,
      key,
      recordedHash(pod.metadata.annotations?.[SIDECARSET_HASH], ctx.name),
    );
  }
  for (const key of deps.expectations.pending(name, ctx.hash)) {
    if (!seen.has(key)) deps.expectations.podDeleted(key);
  }
}

/**
 * The round's cached pods by namespace/name key, indexed on first use (several steps look pods
 * up; a round that needs none builds nothing).
 */
function podLookup(pods: readonly Pod[]): (key: string) => Pod | undefined {
  let byKey: Map<string, Pod> | undefined;
  return (key) => {
    byKey ??= new Map(pods.map((p) => [podKey(podRef(p)), p] as const));
    return byKey.get(key);
  };
}

/**
 * Upgrades this process started that the kubelet has now applied: the pod is told (its gate
 * opens from its state, in openGates). Pods are finished a few at a time rather than one after
 * another (a large wave would otherwise delay the next plan by one round trip per pod).
 */
async function finishUpgrades(
  name: string,
  ctx: SidecarSetContext,
  cachedPod: (key: string) => Pod | undefined,
  deps: ReconcileDeps,
): Promise<void> {
  const inFlight = deps.inFlight.get(name);
  if (inFlight === undefined) return;
  const done: { key: string; pod: Pod }[] = [];
  for (const [key, hash] of inFlight) {
    const pod = cachedPod(key);
    if (pod === undefined || hash !== ctx.hash) {
      inFlight.delete(key);
      continue;
    }
    // Not isReady(): a pod behind the InPlaceUpdateReady gate is not Ready until we open it.
    if (isUpdated(ctx, pod) && isStateConsistent(ctx, pod) && sidecarsReady(ctx, pod)) {
      done.push({ key, pod });
    }
  }
  const limit = pLimit(FINISH_CONCURRENCY);
  const finish = async ({ key, pod }: { key: string; pod: Pod }): Promise<void> => {
    inFlight.delete(key);
    await podEvent(
      deps,
      pod,
      'SidecarUpgraded',
      `SidecarSet ${name}: sidecars upgraded in place and ready`,
    );
  };
  await settleAll(done.map((item) => limit(() => finish(item))));
}

/** How many finished pods are written to at once. */
const FINISH_CONCURRENCY = 8;

/**
 * A pod that declares the InPlaceUpdateReady readiness gate is not Ready until the condition
 * exists; no upgrade is under way for it, so the condition starts True.
 */
async function initializeReadinessGates(pods: readonly Pod[], deps: ReconcileDeps): Promise<void> {
  const missing = pods.filter((pod) => hasReadinessGate(pod) && gateStatus(pod) === undefined);
  await openGates(missing, 'Initialized', 'no in-place update under way', deps);
}

/** Sets each pod's InPlaceUpdateReady condition True, a few pods at a time. */
async function openGates(
  pods: readonly Pod[],
  reason: string,
  message: string,
  deps: ReconcileDeps,
): Promise<void> {
  const limit = pLimit(FINISH_CONCURRENCY);
  const open = async (pod: Pod): Promise<void> => {
    const ref = podRef(pod);
    const condition = gateCondition('True', reason, message, deps.now());
    await deps.writer.setPodConditions(ref.namespace, ref.name, [condition]);
  };
  await settleAll(pods.map((pod) => limit(() => open(pod))));
}

/**
 * The status, with the RolloutPaused condition (src/core/status/rollout-paused-condition.ts) and
 * Ready, Reconciling and Stalled (src/core/status/status-conditions.ts): written when it changed. When
 * failed pods have just paused the rollout, a Warning event says so.
 */
async function writeStatus(
  ss: SidecarSet,
  plan: UpgradePlan,
  deps: ReconcileDeps,
  revision: RevisionOutcome,
): Promise<void> {
  const current = ss.status ?? {};
  const next: SidecarSetStatus = {
    ...current,
    ...(revision !== undefined && 'registered' in revision ? revision.registered : {}),
    matchedPods: plan.status.matchedPods,
    updatedPods: plan.status.updatedPods,
    readyPods: plan.status.readyPods,
    updatedReadyPods: plan.status.updatedReadyPods,
    observedGeneration: ss.metadata.generation ?? current.observedGeneration ?? 0,
  };
  const conditions = nextConditions(ss, plan, deps, revision);
  if (conditions !== undefined) next.conditions = conditions;
  const same =
    conditions === undefined &&
    (Object.keys(next) as (keyof SidecarSetStatus)[]).every((k) => next[k] === current[k]);
  if (same) return;
  await deps.writer.writeSidecarSetStatus(
    ss.metadata.name ?? '',
    next,
    ss.metadata.resourceVersion,
  );
  const before = current.conditions?.find((c) => c.type === ROLLOUT_PAUSED);
  const after = conditions?.find((c) => c.type === ROLLOUT_PAUSED);
  if (
    after?.reason === 'UnhealthyPods' &&
    after.status === 'True' &&
    before?.reason !== after.reason
  ) {
    await deps.writer.event(sidecarSetRef(ss), 'Warning', 'RolloutPaused', after.message ?? '');
  }
  const failure = revisionHistoryFailure(conditions);
  if (failure !== undefined && failure !== revisionHistoryFailure(current.conditions)) {
    await deps.writer.event(sidecarSetRef(ss), 'Warning', 'RevisionRecordFailed', failure);
  }
}

/**
 * The status conditions after this round (undefined: no change): RolloutPaused, the kstatus
 * Ready/Reconciling/Stalled, PodUpdateFailure and RevisionHistoryFailure, each from the last.
 */
function nextConditions(
  ss: SidecarSet,
  plan: UpgradePlan,
  deps: ReconcileDeps,
  revision: RevisionOutcome,
): SidecarSetCondition[] | undefined {
  const current = ss.status?.conditions;
  const now = deps.now();
  const health = plan.stopped === 'Complete' ? undefined : plan.health;
  const pausedBy = {
    health,
    userPaused: ss.spec.updateStrategy?.paused === true,
    generation: ss.metadata.generation,
  };
  const paused = nextRolloutPausedConditions(current, pausedBy, now);
  const kstatus = nextStatusConditions(paused ?? current, ss, plan, now) ?? paused;
  const writes = {
    outcome: deps.podWrites.get(ss.metadata.name ?? ''),
    complete: plan.stopped === 'Complete',
  };
  const updates = nextUpdateFailureConditions(kstatus ?? current, writes, now) ?? kstatus;
  if (revision === undefined) return updates;
  const failure = 'failure' in revision ? revision.failure : undefined;
  return nextRevisionFailureConditions(updates ?? current, failure, now) ?? updates;
}

/** The SidecarSetUpgradable=false condition on each such pod, and one event per change in count. */
async function reportNotUpgradable(
  ss: SidecarSet,
  plan: UpgradePlan,
  cachedPod: (key: string) => Pod | undefined,
  deps: ReconcileDeps,
): Promise<void> {
  const name = ss.metadata.name ?? '';
  for (const { pod: ref } of plan.notUpgradable) {
    const pod = cachedPod(podKey(ref));
    const condition = nextUpgradableCondition(pod?.status?.conditions, name, false, deps.now());
    if (condition !== undefined)
      await deps.writer.setPodConditions(ref.namespace, ref.name, [condition]);
  }
  const count = plan.notUpgradable.length;
  if (count > 0 && deps.reported.get(name) !== count) {
    // OpenKruise's message, then ours: why, with how many pods each.
    const why = new Map<string, number>();
    for (const { message } of plan.notUpgradable) why.set(message, (why.get(message) ?? 0) + 1);
    const reasons = [...why].map(([message, n]) => `${message} (${n})`).join('; ');
    await deps.writer.event(
      sidecarSetRef(ss),
      'Normal',
      'NotUpgradablePods',
      `SidecarSet in-place update detected ${count} not upgradable pod(s) in this round, will skip them. ${reasons}`,
    );
  }
  deps.reported.set(name, count);
}

/** Waits for every write; the first failure, if any, is thrown once all have settled. */
async function settleAll(writes: readonly Promise<unknown>[]): Promise<number> {
  const results = await Promise.allSettled(writes);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return results.filter((r) => r.status === 'fulfilled' && r.value === true).length;
}

function sidecarSetRef(ss: SidecarSet): ObjectReference {
  return {
    kind: 'SidecarSet',
    apiVersion: V1BETA1,
    name: ss.metadata.name ?? '',
    ...(ss.metadata.uid ? { uid: ss.metadata.uid } : {}),
  };
}

function shortHash(hash: string): string {
  return hash.slice(0, 10);
}
