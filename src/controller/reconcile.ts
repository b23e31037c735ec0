/**
 * One reconcile of one SidecarSet (OpenKruise Processor.UpdateSidecarSet, pkg/controller/sidecarset/sidecarset_processor.go): cache snapshot → planUpgrade → writes.
 * Glue only: every decision is made by the pure planner; this decides nothing but the order and
 * safety of the writes.
 */
import pLimit from 'p-limit';
import type { Logger } from 'pino';

import { SIDECARSET_HASH } from '../core/api/annotations.js';
import type { Pod } from '../core/api/k8s-types.js';
import type { NamespaceLabels } from '../core/matching/match.js';
import { withHashes } from '../core/api/hash.js';
import { V1BETA1 } from '../core/api/sidecarset-types.js';
import type { SidecarSet, SidecarSetStatus } from '../core/api/sidecarset-types.js';
import type { StoredRevision } from '../core/revisions/history.js';
import {
  ROLLOUT_PAUSED,
  nextRolloutPausedConditions,
} from '../core/upgrade/rollout-paused-condition.js';
import { healthSettings } from '../core/upgrade/health-settings.js';
import { buildPodFlip, buildPodUpgrade } from '../core/upgrade/change.js';
import type { SidecarSetContext } from '../core/upgrade/context.js';
import { sidecarSetContext } from '../core/upgrade/context.js';
import { planUpgrade } from '../core/upgrade/plan.js';
import { recordedHash } from '../core/pod-annotations/pod-hash-annotation.js';
import { nextStatusConditions } from '../core/status/status-conditions.js';
import { needsFlip } from '../core/upgrade/hot-slots.js';
import { containerStatus } from '../core/upgrade/pod-containers.js';
import {
  hasReadyCondition,
  isStateConsistent,
  isUpdated,
  podKey,
  podRef,
} from '../core/upgrade/pod-state.js';
import { selectsForUpgrade } from '../core/upgrade/selection.js';
import type {
  PodFlip,
  PodRef,
  PodUpgrade,
  UpgradePlan,
  UpgradeStatus,
} from '../core/upgrade/types.js';
import { nextUpgradableCondition } from '../core/upgrade/upgradable-condition.js';
import type { ResourceChange } from '../core/upgrade/resources.js';
import { resizableVersions, restartsOnResize } from '../core/upgrade/resources.js';
import { RESIZE_REFUSED, withRefusedResize } from '../core/upgrade/resize-refusal.js';
import type { UpgradeExpectations } from './expectations.js';
import type { RegisteredRevision } from './revisions.js';
import type { ClusterWriter, ObjectReference } from './writer.js';
import { ConflictError, ResizeRefusedError } from './writer.js';

/** What reconcile reads: the controller's caches, as plain values. */
export interface ControllerView {
  sidecarSet(name: string): SidecarSet | undefined;
  /** Cached (slim) pods whose kruise.io/sidecarset-injected-list names this SidecarSet. */
  podsInjectedBy(name: string): readonly Pod[];
  namespaces: NamespaceLabels;
}

export interface ReconcileDeps {
  view: ControllerView;
  writer: ClusterWriter;
  expectations: UpgradeExpectations;
  /** Pods upgraded by this process and not yet seen finished, per SidecarSet. */
  inFlight: Map<string, Map<string, string>>;
  /** Waits for a token before each pod upgrade or flip (--qps/--burst); other writes are not limited. */
  takeToken: (signal: AbortSignal) => Promise<void>;
  now: () => Date;
  logger: Logger;
  /** Not-upgradable counts last reported per SidecarSet, so that events do not repeat. */
  reported: Map<string, number>;
  /** Told what each round found and wrote (metrics). */
  observer?: RoundObserver;
  /** Whether upgraded pods get their own events (the SidecarSet always does). */
  podEvents: boolean;
  /** The SidecarSet's ControllerRevisions: pods on their versions may be resized in place. */
  revisions?: (sidecarSet: string) => readonly StoredRevision[];
  /** Registers the latest ControllerRevision (sidecarset_processor.go registerLatestRevision); without it the status keeps what it has. */
  registerRevision?: (ss: SidecarSet, pods: readonly Pod[]) => Promise<RegisteredRevision>;
}

/** What rounds tell the outside (the controller's metrics). */
export interface RoundObserver {
  /** The status a round computed for a SidecarSet; undefined once the SidecarSet is gone. */
  status?(sidecarSet: string, status: UpgradeStatus | undefined): void;
  /** Pods written in a round (in a dry run: that would have been): upgrades or hot-upgrade flips. */
  podsWritten?(kind: 'upgrade' | 'flip', count: number): void;
  /** Whether failed pods paused the SidecarSet's rollout; undefined once the SidecarSet is gone. */
  rolloutPaused?(sidecarSet: string, paused: boolean | undefined): void;
}

export interface ReconcileResult {
  requeueAfterMs?: number;
}

const READINESS_GATE = 'InPlaceUpdateReady';
const CONFLICT_RETRIES = 3;
/** Our own writes not yet in the cache: look again soon (OpenKruise waits 1 s too). */
const EXPECTATION_RECHECK_MS = 1000;
/** Past a progress deadline before judging again (timestamps are whole seconds). */
const DEADLINE_MARGIN_MS = 1000;

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
    deps.expectations.forget(name);
    deps.inFlight.delete(name);
    deps.reported.delete(name);
    deps.observer?.status?.(name, undefined);
    deps.observer?.rolloutPaused?.(name, undefined);
    return {};
  }
  const stored = withHashes(found);
  const log = deps.logger.child({ sidecarSet: name });
  const pods = deps.view
    .podsInjectedBy(name)
    .filter((pod) => selectsForUpgrade(stored, pod, deps.view.namespaces));
  const registered = await registerRevision(stored, pods, deps, log);
  signal.throwIfAborted();
  // From here on the SidecarSet carries its latest revision, which upgraded pods record.
  const ss: SidecarSet =
    registered === undefined ? stored : { ...stored, status: { ...stored.status, ...registered } };
  const ctx = sidecarSetContext(ss);
  observe(name, ctx, pods, deps);
  await openReadinessGates(pods, deps);
  signal.throwIfAborted();
  const cachedPod = podLookup(pods);
  await finishUpgrades(name, ctx, cachedPod, deps);
  signal.throwIfAborted();

  const now = deps.now();
  const podResize = await deps.writer.canResizePods();
  const versions = resizableVersions(deps.revisions?.(name) ?? []);
  const plan = planUpgrade(ss, pods, { now, podResize, versions });
  // Upgraded pods still within their progress deadline are judged again when it passes, even if
  // nothing about them changes by then.
  const done = (result: ReconcileResult = {}): ReconcileResult => {
    const recheck = plan.health?.recheckAt;
    if (recheck === undefined) return result;
    const ms = Math.max(recheck.getTime() - now.getTime(), 0) + DEADLINE_MARGIN_MS;
    return { requeueAfterMs: Math.min(result.requeueAfterMs ?? ms, ms) };
  };
  const problems = healthSettings(ss).problems;
  if (problems.length > 0) log.warn({ problems }, 'health gate annotations not understood');
  await writeStatus(stored, plan, deps, registered);
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
    const flipped = await settleAll(plan.flip.map((f) => flipPod(ctx, f, deps, signal)));
    deps.observer?.podsWritten?.('flip', flipped);
    return done();
  }

  await reportNotUpgradable(ss, plan, cachedPod, deps);
  signal.throwIfAborted();
  if (plan.upgrade.length === 0) return done();
  log.info(
    { pods: plan.upgrade.map((u) => podKey(u.pod)), budget: plan.budget },
    'upgrading sidecars in place',
  );
  const results = await Promise.allSettled(
    plan.upgrade.map((u) =>
      upgradePod(ss, ctx, { planned: u, cachedPod: cachedPod(podKey(u.pod)) }, deps, signal),
    ),
  );
  const failed = results.filter((r) => r.status === 'rejected');
  const upgraded = results.filter((r) => r.status === 'fulfilled' && r.value).length;
  deps.observer?.podsWritten?.('upgrade', upgraded);
  if (upgraded > 0) {
    await deps.writer.event(
      sidecarSetRef(ss),
      'Normal',
      'UpgradeStarted',
      `upgrading the sidecars of ${upgraded} pod(s) in place to ${shortHash(ctx.hash)}`,
    );
  }
  const first = failed[0];
  if (first !== undefined) throw first.reason;
  return done();
}

/**
 * The latest ControllerRevision, or undefined (status fields kept as found). Unlike OpenKruise, a
 * failed registration does not stop the round: upgrades do not depend on the revision history.
 */
async function registerRevision(
  ss: SidecarSet,
  pods: readonly Pod[],
  deps: ReconcileDeps,
  log: Logger,
): Promise<RegisteredRevision | undefined> {
  try {
    return await deps.registerRevision?.(ss, pods);
  } catch (err) {
    log.warn({ err }, 'could not register the latest ControllerRevision');
    return undefined;
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
 * Upgrades started earlier that the kubelet has now applied: open the pod's gate, tell the pod.
 * Pods are finished a few at a time rather than one after another (a large wave would otherwise
 * delay the next plan by one round trip per pod); a pod stays in flight until its gate is open,
 * so a failed write is tried again next round instead of leaving the pod out of traffic.
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
    const ref = podRef(pod);
    if (hasReadinessGate(pod)) {
      await deps.writer.setPodConditions(ref.namespace, ref.name, [
        gateCondition('True', 'InPlaceUpdateFinished', deps.now()),
      ]);
    }
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
async function openReadinessGates(pods: readonly Pod[], deps: ReconcileDeps): Promise<void> {
  for (const pod of pods) {
    if (!hasReadinessGate(pod)) continue;
    if (pod.status?.conditions?.some((c) => c.type === READINESS_GATE) === true) continue;
    const ref = podRef(pod);
    await deps.writer.setPodConditions(ref.namespace, ref.name, [
      gateCondition('True', 'Initialized', deps.now()),
    ]);
  }
}

/**
 * The status, with the RolloutPaused condition (src/core/upgrade/rollout-paused-condition.ts) and
 * Ready, Reconciling and Stalled (src/core/status-conditions.ts): written when it changed. When
 * failed pods have just paused the rollout, a Warning event says so.
 */
async function writeStatus(
  ss: SidecarSet,
  plan: UpgradePlan,
  deps: ReconcileDeps,
  registered: RegisteredRevision | undefined,
): Promise<void> {
  const current = ss.status ?? {};
  const next: SidecarSetStatus = {
    ...current,
    ...registered,
    matchedPods: plan.status.matchedPods,
    updatedPods: plan.status.updatedPods,
    readyPods: plan.status.readyPods,
    updatedReadyPods: plan.status.updatedReadyPods,
    observedGeneration: ss.metadata.generation ?? current.observedGeneration ?? 0,
  };
  const health = plan.stopped === 'Complete' ? undefined : plan.health;
  const pausedBy = {
    health,
    userPaused: ss.spec.updateStrategy?.paused === true,
    generation: ss.metadata.generation,
  };
  const paused = nextRolloutPausedConditions(current.conditions, pausedBy, deps.now());
  const conditions =
    nextStatusConditions(paused ?? current.conditions, ss, plan, deps.now()) ?? paused;
  if (conditions !== undefined) next.conditions = conditions;
  const same =
    conditions === undefined &&
    (Object.keys(next) as (keyof SidecarSetStatus)[]).every((k) => next[k] === current[k]);
  if (same) return;
  await deps.writer.writeSidecarSetStatus(ss.metadata.name ?? '', next);
  const before = current.conditions?.find((c) => c.type === ROLLOUT_PAUSED);
  const after = conditions?.find((c) => c.type === ROLLOUT_PAUSED);
  if (
    after?.reason === 'UnhealthyPods' &&
    after.status === 'True' &&
    before?.reason !== after.reason
  ) {
    await deps.writer.event(sidecarSetRef(ss), 'Warning', 'RolloutPaused', after.message ?? '');
  }
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

/**
 * Builds the change from the cached pod and writes it with the pod's resourceVersion, so that a
 * change the cache has not seen yet makes the write fail (409) instead of being overwritten; then,
 * and whenever the cache cannot be used, it re-reads the pod and builds the change from the fresh
 * object. The cache keeps only what planning needs, which is all the change needs unless the
 * SidecarSet has patchPodMetadata or a HotUpgrade container (their writes read annotations the
 * cache does not keep; src/k8s/slim-pod.ts). Resolves false when the pod no longer needs it.
 */
async function upgradePod(
  ss: SidecarSet,
  ctx: SidecarSetContext,
  { planned, cachedPod }: { planned: PodUpgrade; cachedPod: Pod | undefined },
  deps: ReconcileDeps,
  signal: AbortSignal,
): Promise<boolean> {
  const { namespace, name } = planned.pod;
  let gateClosed = false;
  // Whether the pod was Ready before we touched it (closing the gate makes it not Ready).
  let readyBefore: boolean | undefined;
  const fromCache = (ss.spec.patchPodMetadata ?? []).length === 0 && ctx.hot.length === 0;
  let cached = fromCache ? cachedPod : undefined;
  for (let attempt = 1; ; attempt++) {
    signal.throwIfAborted();
    await deps.takeToken(signal);
    const pod = cached ?? (await deps.writer.getPod(namespace, name));
    cached = undefined;
    if (!isPlannedPod(planned.pod, pod)) return false;
    if (isUpdated(ctx, pod)) return false;
    readyBefore ??= hasReadyCondition(pod);
    const change = buildPodUpgrade(
      ctx,
      pod,
      ss.spec.patchPodMetadata ?? [],
      deps.now(),
      readyBefore,
    );
    // Leadership may have been lost while we waited: a new leader must not meet our writes.
    signal.throwIfAborted();
    // A cold sidecar restarts in place: traffic first. A hot one starts in the idle slot while the
    // working slot serves, so the pod stays in its Services.
    const restartsInPlace =
      change.images.some((i) => ctx.images.has(i.container)) ||
      change.resources.some((r) => restartsOnResize(pod, r));
    if (restartsInPlace && hasReadinessGate(pod) && !gateClosed && gateStatus(pod) !== 'False') {
      // Close the gate, then read the pod again (the write changed its version).
      await deps.writer.setPodConditions(namespace, name, [
        gateCondition('False', 'StartInPlaceUpdate', deps.now()),
      ]);
      gateClosed = true;
      attempt--;
      continue;
    }
    try {
      // Resources first: a pod that records the new version has them (a resize again is a no-op).
      if (change.resources.length > 0) {
        await deps.writer.resizePod(namespace, name, resizePatch(pod, change.resources));
      }
      await deps.writer.patchPod(namespace, name, upgradePatch(pod, change));
    } catch (err) {
      if (err instanceof ConflictError && attempt < CONFLICT_RETRIES) continue;
      if (err instanceof ResizeRefusedError) return recordRefusedResize(ctx, pod, err, deps);
      throw err;
    }
    const key = podKey(planned.pod);
    deps.expectations.expect(ctx.name, ctx.hash, key);
    const inFlight = deps.inFlight.get(ctx.name) ?? new Map<string, string>();
    deps.inFlight.set(ctx.name, inFlight.set(key, ctx.hash));
    const upgradable = nextUpgradableCondition(pod.status?.conditions, ctx.name, true, deps.now());
    if (upgradable !== undefined) await deps.writer.setPodConditions(namespace, name, [upgradable]);
    const what = [
      ...change.images.map((i) => `${i.container} ${i.from} → ${i.to}`),
      ...change.resources.map((r) => `${r.container} resources ${JSON.stringify(r.to)}`),
    ].join(', ');
    await podEvent(
      deps,
      pod,
      'SidecarUpgradeStarted',
      `SidecarSet ${ctx.name}: upgrading in place: ${what || 'annotations only'}`,
    );
    return true;
  }
}

/**
 * The API server refused the resize for good: the pod records it instead of the upgrade, so it is
 * not tried again for this version and the health gate counts it failed. Resolves false.
 */
async function recordRefusedResize(
  ctx: SidecarSetContext,
  pod: Pod,
  err: ResizeRefusedError,
  deps: ReconcileDeps,
): Promise<false> {
  const refusal = { hash: ctx.hash, message: err.message };
  const annotations = { [RESIZE_REFUSED]: withRefusedResize(pod, ctx.name, refusal) };
  const { namespace, name } = podRef(pod);
  await deps.writer.patchPod(namespace, name, {
    metadata: { resourceVersion: pod.metadata.resourceVersion, annotations },
  });
  await deps.writer.event(
    podObjectRef(pod),
    'Warning',
    'ResizeRefused',
    `SidecarSet ${ctx.name}: the API server refused the resize: ${err.message}`,
  );
  return false;
}

/**
 * Puts a finished hot upgrade's old slot back on the empty image (OpenKruise pkg/controller/sidecarset/sidecarset_hotupgrade.go), from a
 * fresh read (the slots' version annotations are not cached) and guarded by its resourceVersion.
 * Resolves false when the pod no longer needs it.
 */
async function flipPod(
  ctx: SidecarSetContext,
  planned: PodFlip,
  deps: ReconcileDeps,
  signal: AbortSignal,
): Promise<boolean> {
  const { namespace, name } = planned.pod;
  for (let attempt = 1; ; attempt++) {
    signal.throwIfAborted();
    await deps.takeToken(signal);
    const pod = await deps.writer.getPod(namespace, name);
    if (!isPlannedPod(planned.pod, pod)) return false;
    if (!needsFlip(ctx, pod)) return false;
    const change = buildPodFlip(ctx, pod, deps.now());
    signal.throwIfAborted();
    try {
      await deps.writer.patchPod(namespace, name, upgradePatch(pod, change));
    } catch (err) {
      if (err instanceof ConflictError && attempt < CONFLICT_RETRIES) continue;
      throw err;
    }
    const slots = change.images.map((i) => i.container).join(', ');
    await podEvent(
      deps,
      pod,
      'ResetContainerSucceed',
      `SidecarSet ${ctx.name}: hot upgrade finished, ${slots} back on the empty image`,
    );
    return true;
  }
}

/** The pod the plan named: still there, and not a new pod under the same name. */
function isPlannedPod(ref: PodRef, pod: Pod | undefined): pod is Pod {
  const uid = ref.uid ?? '';
  return pod !== undefined && (uid === '' || pod.metadata.uid === uid);
}

/** Waits for every write; the first failure, if any, is thrown once all have settled. */
async function settleAll(writes: readonly Promise<unknown>[]): Promise<number> {
  const results = await Promise.allSettled(writes);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return results.filter((r) => r.status === 'fulfilled' && r.value === true).length;
}

/** A Normal event on a pod, unless pod events are turned off (--pod-events=false). */
async function podEvent(
  deps: ReconcileDeps,
  pod: Pod,
  reason: string,
  message: string,
): Promise<void> {
  if (deps.podEvents) await deps.writer.event(podObjectRef(pod), 'Normal', reason, message);
}

/**
 * A strategic merge patch: containers and init containers (native sidecars) merge by name, so
 * only the images named change.
 */
function upgradePatch(pod: Pod, change: PodFlip): Record<string, unknown> {
  const patch: Record<string, unknown> = {
    metadata: { resourceVersion: pod.metadata.resourceVersion, annotations: change.annotations },
  };
  const images = change.images.map((i) => ({ name: i.container, image: i.to }));
  if (images.length > 0) patch['spec'] = byContainerList(pod, images);
  return patch;
}

/** The pod/resize patch: each sidecar's new requests and limits. */
function resizePatch(pod: Pod, changes: readonly ResourceChange[]): Record<string, unknown> {
  const resources = changes.map((r) => ({ name: r.container, resources: r.to }));
  return { spec: byContainerList(pod, resources) };
}

/** Container entries of a patch, under spec.containers or spec.initContainers as the pod has them. */
function byContainerList(
  pod: Pod,
  entries: readonly { name: string }[],
): Record<string, { name: string }[]> {
  const out: Record<string, { name: string }[]> = {};
  for (const entry of entries) {
    const init = (pod.spec.initContainers ?? []).some((c) => c.name === entry.name);
    (out[init ? 'initContainers' : 'containers'] ??= []).push(entry);
  }
  return out;
}

function sidecarsReady(ctx: SidecarSetContext, pod: Pod): boolean {
  return ctx.containerNames.every((n) => containerStatus(pod, n)?.ready === true);
}

function gateStatus(pod: Pod): string | undefined {
  return pod.status?.conditions?.find((c) => c.type === READINESS_GATE)?.status;
}

function hasReadinessGate(pod: Pod): boolean {
  return (pod.spec.readinessGates ?? []).some((g) => g['conditionType'] === READINESS_GATE);
}

function gateCondition(status: 'True' | 'False', reason: string, now: Date) {
  return { type: READINESS_GATE, status, reason, lastTransitionTime: now.toISOString() };
}

function sidecarSetRef(ss: SidecarSet): ObjectReference {
  return {
    kind: 'SidecarSet',
    apiVersion: V1BETA1,
    name: ss.metadata.name ?? '',
    ...(ss.metadata.uid ? { uid: ss.metadata.uid } : {}),
  };
}

function podObjectRef(pod: Pod): ObjectReference {
  const ref = podRef(pod);
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    name: ref.name,
    namespace: ref.namespace,
    ...(ref.uid ? { uid: ref.uid } : {}),
  };
}

function shortHash(hash: string): string {
  return hash.slice(0, 10);
}
