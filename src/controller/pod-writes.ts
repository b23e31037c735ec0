/**
 * The writes of one round to its pods: an in-place upgrade (resize, then one patch), a hot
 * upgrade's flip, an eviction to recreate the pod, and the bookkeeping around them (the
 * InPlaceUpdateReady gate, refusals, events). Each write is guarded: by the pod's resourceVersion,
 * or by its uid for an eviction, so that nothing is written to a pod the plan did not see.
 */
import type { Pod } from '../core/api/k8s-types.js';
import type { SidecarSet } from '../core/api/sidecarset-types.js';
import { buildPodFlip, buildPodUpgrade } from '../core/upgrade/change.js';
import type { SidecarSetContext } from '../core/upgrade/context.js';
import { needsFlip } from '../core/upgrade/hot-slots.js';
import { isUpdated } from '../core/upgrade/pod-state.js';
import { needsBudget } from '../core/upgrade/plan.js';
import { podKey, podRef } from '../core/api/pod-ref.js';
import { hasReadyCondition } from '../core/api/pod-status.js';
import type { RefusalAnnotation } from '../core/pod-annotations/refusals.js';
import { EVICTION_REFUSED, RESIZE_REFUSED, withRefusal } from '../core/pod-annotations/refusals.js';
import type { ResourceChange } from '../core/api/pod-resize.js';
import { restartsOnResize } from '../core/api/pod-resize.js';
import type { PodRecreate, PodUpgrade } from '../core/upgrade/types.js';
import type { PodRef } from '../core/api/pod-ref.js';
import { nextUpgradableCondition } from '../core/status/upgradable-condition.js';
import {
  closedGate,
  gateCondition,
  gateStatus,
  hasReadinessGate,
} from '../core/upgrade/readiness-gate.js';
import type { PodWriteOutcome } from '../core/status/update-failure-condition.js';
import type { UpgradeExpectations } from './expectations.js';
import type { RecreationExpectations } from './recreation-expectations.js';
import { planOutdated } from '../core/upgrade/plan-outdated.js';
import type { ClusterWriter, ControllerView, ObjectReference } from './ports.js';
import { ConflictError, EvictionRefusedError, ResizeRefusedError } from './ports.js';

/** What the pod writes need from the round. */
export interface PodWriteDeps {
  /** The SidecarSet as the cache has it now: a write checks the plan still holds. */
  view: Pick<ControllerView, 'sidecarSet' | 'podsInjectedBy'>;
  writer: ClusterWriter;
  expectations: UpgradeExpectations;
  /** Evictions awaiting their replacement, which count against the budget. */
  recreations: RecreationExpectations;
  /**
   * Pods upgraded by this process and not yet seen finished, per SidecarSet: for their
   * SidecarUpgraded event only (the readiness gate is opened from the pod's state).
   */
  inFlight: Map<string, Map<string, string>>;
  /** How each SidecarSet's last pod writes went (the PodUpdateFailure condition). */
  podWrites: Map<string, PodWriteOutcome>;
  /** Waits for a token before each pod write that upgrades (--qps/--burst). */
  takeToken: (signal: AbortSignal) => Promise<void>;
  now: () => Date;
  /** Whether pods get their own events (the SidecarSet always does). */
  podEvents: boolean;
}

const CONFLICT_RETRIES = 3;

/**
 * The pod changed between the plan and its write so that the plan no longer holds for it: it now
 * costs the budget, which the plan did not count, or it kept conflicting (409). The write is given
 * up and the round plans again shortly.
 */
export class PlanRaceError extends Error {
  constructor(pod: string, why: string) {
    super(`pod ${pod} changed since the plan: ${why}`);
    this.name = 'PlanRaceError';
  }
}

/** A pod's update failed for a reason other than a conflict: the round fails and backs off. */
export class PodUpdateError extends Error {
  constructor(pod: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(`updating pod ${pod} failed: ${why}`, { cause });
    this.name = 'PodUpdateError';
  }
}

/**
 * Builds the change from the cached pod and writes it with the pod's resourceVersion, so that a
 * change the cache has not seen yet makes the write fail (409) instead of being overwritten; then,
 * and whenever the cache cannot be used, it re-reads the pod and builds the change from the fresh
 * object. The cache keeps only what planning needs, which is all the change needs unless the
 * SidecarSet has patchPodMetadata or a HotUpgrade container (their writes read annotations the
 * cache does not keep; src/k8s/slim-pod.ts). A pod read afresh that now costs the budget, which
 * the plan did not count, is left to the next plan (PlanRaceError). Resolves false when the pod no
 * longer needs it, or the SidecarSet changed since the plan (core/upgrade/plan-outdated.ts).
 */
export async function upgradePod(
  ss: SidecarSet,
  ctx: SidecarSetContext,
  { planned, cachedPod }: { planned: PodUpgrade; cachedPod: Pod | undefined },
  deps: PodWriteDeps,
  signal: AbortSignal,
): Promise<boolean> {
  const { namespace, name } = planned.pod;
  let gateClosed = false;
  // Whether the pod was Ready before we touched it (closing the gate makes it not Ready).
  let readyBefore: boolean | undefined;
  const fromCache = (ss.spec.patchPodMetadata ?? []).length === 0 && ctx.hot.length === 0;
  let cached = fromCache ? cachedPod : undefined;
  // What the plan counted against maxUnavailable (it planned from the cached pod).
  const budgeted = cachedPod === undefined || needsBudget(ctx, cachedPod);
  for (let attempt = 1; ; attempt++) {
    if (!(await turnToWrite(ss, deps, signal))) return false;
    const pod = cached ?? (await deps.writer.getPod(namespace, name));
    cached = undefined;
    if (!isPlannedPod(planned.pod, pod)) return false;
    if (isUpdated(ctx, pod)) return false;
    if (!budgeted && needsBudget(ctx, pod)) {
      const race = new PlanRaceError(podKey(planned.pod), 'it is available now');
      return writeFailed(ctx, { pod, gateClosed }, race, deps, signal);
    }
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
      await deps.writer.setPodConditions(namespace, name, [closedGate(ctx.name, deps.now())]);
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
      return writeFailed(ctx, { pod, gateClosed }, err, deps, signal);
    }
    await upgradeStarted(ctx, pod, change, deps);
    return true;
  }
}

/** The pod was written: the round waits for the cache to show it, and the pod is told. */
async function upgradeStarted(
  ctx: SidecarSetContext,
  pod: Pod,
  change: PodUpgrade,
  deps: PodWriteDeps,
): Promise<void> {
  const ref = podRef(pod);
  const key = podKey(ref);
  deps.expectations.expect(ctx.name, ctx.hash, key);
  const inFlight = deps.inFlight.get(ctx.name) ?? new Map<string, string>();
  deps.inFlight.set(ctx.name, inFlight.set(key, ctx.hash));
  const upgradable = nextUpgradableCondition(pod.status?.conditions, ctx.name, true, deps.now());
  if (upgradable !== undefined) {
    await deps.writer.setPodConditions(ref.namespace, ref.name, [upgradable]);
  }
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
}

/**
 * An upgrade's write failed: the gate it closed opens again, since nothing restarts the sidecar
 * now; a refused resize is recorded on the pod (resolves false); a race with the plan, or
 * conflicts on every retry, make the round plan again (PlanRaceError); anything else fails it.
 */
async function writeFailed(
  ctx: SidecarSetContext,
  { pod, gateClosed }: { pod: Pod; gateClosed: boolean },
  err: unknown,
  deps: PodWriteDeps,
  signal: AbortSignal,
): Promise<false> {
  if (gateClosed) await reopenGate(ctx, pod, err, deps);
  if (err instanceof ResizeRefusedError) return recordRefusedResize(ctx, pod, err, deps);
  if (signal.aborted) throw err;
  if (err instanceof PlanRaceError) throw err;
  if (err instanceof ConflictError) throw new PlanRaceError(podKey(podRef(pod)), err.message);
  throw new PodUpdateError(podKey(podRef(pod)), err);
}

/**
 * Opens the gate this write closed (best effort: failing that, the next round opens it from the
 * pod's state, core/upgrade/readiness-gate.ts).
 */
async function reopenGate(
  ctx: SidecarSetContext,
  pod: Pod,
  err: unknown,
  deps: PodWriteDeps,
): Promise<void> {
  const why = err instanceof Error ? err.message : String(err);
  const { namespace, name } = podRef(pod);
  const open = gateCondition(
    'True',
    'InPlaceUpdateFailed',
    `SidecarSet ${ctx.name}: ${why}`,
    deps.now(),
  );
  await deps.writer.setPodConditions(namespace, name, [open]).catch(() => undefined);
}

/**
 * The API server refused the resize for good: the pod records it instead of the upgrade, so it is
 * not tried again for this version and the health gate counts it failed. Resolves false.
 */
async function recordRefusedResize(
  ctx: SidecarSetContext,
  pod: Pod,
  err: ResizeRefusedError,
  deps: PodWriteDeps,
): Promise<false> {
  await recordRefusal(ctx, pod, RESIZE_REFUSED, err.message, deps);
  await deps.writer.event(
    podObjectRef(pod),
    'Warning',
    'ResizeRefused',
    `SidecarSet ${ctx.name}: the API server refused the resize: ${err.message}`,
  );
  return false;
}

/** Records on the pod, under `key`, that the API server refused this version's write. */
async function recordRefusal(
  ctx: SidecarSetContext,
  pod: Pod,
  key: RefusalAnnotation,
  message: string,
  deps: PodWriteDeps,
): Promise<void> {
  const annotations = { [key]: withRefusal(pod, key, ctx.name, { hash: ctx.hash, message }) };
  const { namespace, name } = podRef(pod);
  await deps.writer.patchPod(namespace, name, {
    metadata: { resourceVersion: pod.metadata.resourceVersion, annotations },
  });
}

/**
 * Evicts a pod whose sidecars cannot change in place, so that its controller recreates it and the
 * webhook injects the new sidecar (docs/adr/0024-recreation-through-evictions.md). The Eviction API
 * honours PodDisruptionBudgets: a refusal is recorded on the pod when its reason changed, with a
 * Warning event, and the pod is tried again in a later round. The eviction names the pod's uid, so
 * a new pod under the same name is never evicted. Resolves true when the pod is being deleted.
 */
export async function evictPod(
  ss: SidecarSet,
  ctx: SidecarSetContext,
  { planned, cachedPod }: { planned: PodRecreate; cachedPod: Pod | undefined },
  deps: PodWriteDeps,
  signal: AbortSignal,
): Promise<boolean> {
  const { namespace, name, uid } = planned.pod;
  if (!(await turnToWrite(ss, deps, signal))) return false;
  signal.throwIfAborted();
  try {
    if (!(await deps.writer.evictPod(namespace, name, uid))) return false;
  } catch (err) {
    if (!(err instanceof EvictionRefusedError)) throw err;
    if (cachedPod !== undefined && planned.refused !== err.message) {
      await recordRefusal(ctx, cachedPod, EVICTION_REFUSED, err.message, deps);
      await deps.writer.event(
        podObjectRef(cachedPod),
        'Warning',
        'EvictionRefused',
        `SidecarSet ${ctx.name}: the pod cannot be evicted to be recreated: ${err.message}`,
      );
    }
    return false;
  }
  deps.expectations.expect(ctx.name, ctx.hash, podKey(planned.pod));
  if (cachedPod !== undefined) {
    const known = deps.view.podsInjectedBy(ctx.name);
    deps.recreations.evicted(ctx.name, cachedPod, known, deps.now());
    await podEvent(
      deps,
      cachedPod,
      'SidecarRecreate',
      `SidecarSet ${ctx.name}: evicted so that ${planned.controller} recreates it with the new sidecar (${planned.message})`,
    );
  }
  return true;
}

/**
 * Puts a finished hot upgrade's old slot back on the empty image (OpenKruise pkg/controller/sidecarset/sidecarset_hotupgrade.go), from a
 * fresh read (the slots' version annotations are not cached) and guarded by its resourceVersion.
 * Resolves false when the pod no longer needs it.
 */
export async function flipPod(
  ss: SidecarSet,
  ctx: SidecarSetContext,
  planned: PodUpgrade,
  deps: PodWriteDeps,
  signal: AbortSignal,
): Promise<boolean> {
  const { namespace, name } = planned.pod;
  for (let attempt = 1; ; attempt++) {
    if (!(await turnToWrite(ss, deps, signal))) return false;
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

/**
 * Waits for the write's token, then checks that the SidecarSet the round planned from is still the
 * one in the cache: true when the write may go ahead.
 */
async function turnToWrite(
  planned: SidecarSet,
  deps: PodWriteDeps,
  signal: AbortSignal,
): Promise<boolean> {
  signal.throwIfAborted();
  await deps.takeToken(signal);
  return planOutdated(planned, deps.view.sidecarSet(planned.metadata.name ?? '')) === undefined;
}

/** The pod the plan named: still there, and not a new pod under the same name. */
function isPlannedPod(ref: PodRef, pod: Pod | undefined): pod is Pod {
  const uid = ref.uid ?? '';
  return pod !== undefined && (uid === '' || pod.metadata.uid === uid);
}

/** A Normal event on a pod, unless pod events are turned off (--pod-events=false). */
export async function podEvent(
  deps: PodWriteDeps,
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
function upgradePatch(pod: Pod, change: PodUpgrade): Record<string, unknown> {
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
