/**
 * The pure part of the fake kubelet: the status a kubelet would report for a pod, computed from
 * its spec, its previous status, the images made to fail, the clock and an IP counter. No I/O:
 * FakeKubelet (kubelet.ts) writes the result into the in-process store, ApiKubelet
 * (test/support/api-kubelet.ts) through any API server's pods/status.
 *
 * The result is valid for a real kube-apiserver: container statuses only for spec containers,
 * pod and host IPs that parse, condition types that are qualified names, times in the API
 * server's RFC 3339 seconds form and `lastProbeTime: null`.
 */
import { createHash } from 'node:crypto';
import { clone, isJsonObject, jsonEqual } from './json.js';
import type { JsonObject, JsonValue } from './json.js';
import type { KubeObject } from './types.js';

export const IMAGE_FAILURES = ['ImagePullBackOff', 'CrashLoopBackOff'] as const;
export type ImageFailure = (typeof IMAGE_FAILURES)[number];

/** The conditions the kubelet owns; any other condition in the status is kept as it is. */
export const KUBELET_CONDITIONS: readonly string[] = [
  'PodScheduled',
  'Initialized',
  'ContainersReady',
  'Ready',
];

/** The node every pod seems to run on. */
export const FAKE_HOST_IP = '192.168.0.10';

export interface SpecContainer {
  readonly name: string;
  readonly image: string;
  /** `Always` on an init container: a native sidecar, which runs beside the containers. */
  readonly restartPolicy?: string;
  /** Requests and limits: reported in the status as applied (in-place resize, no restart). */
  readonly resources?: JsonObject;
}

export interface StatusContext {
  /** Images made to fail, and how (FakeKubelet.failImage). */
  readonly failures: ReadonlyMap<string, ImageFailure>;
  /** Report pods that have no container status yet as started (false leaves them Pending). */
  readonly startPods: boolean;
  /** The clock; called at most once, and only when a status is computed. */
  readonly now: () => Date;
  /** The number of the pod IP (podIp) a pod that starts now gets. */
  readonly ipIndex: number;
  /** Seconds between the crashes of a CrashLoopBackOff container (CRASH_LOOP_BACKOFF_SECONDS). */
  readonly crashLoopBackoffSeconds?: number;
}

/**
 * The kubelet's back-off between restarts of a crashing container starts at 10 s and doubles up
 * to 5 minutes; the test kubelets keep it at one second, so that restarts climb within a test.
 */
export const CRASH_LOOP_BACKOFF_SECONDS = 1;

export interface DesiredStatus {
  /** The whole new status: the previous one, with what the kubelet owns recomputed. */
  readonly status: JsonObject;
  /** True when the pod started now and took `ipIndex` as its IP: the caller advances its counter. */
  readonly usedIp: boolean;
  /** When a crash-looping container crashes next: the caller reports the pod again then. */
  readonly nextCrashAt?: Date;
}

/** `namespace/name`, the key the kubelets track pods by. */
export function podKey(pod: KubeObject): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

export function specContainers(
  pod: KubeObject,
  list: 'containers' | 'initContainers',
): SpecContainer[] {
  const spec = pod['spec'];
  const containers = isJsonObject(spec) ? spec[list] : undefined;
  if (!Array.isArray(containers)) return [];
  return containers.filter(isJsonObject).map((c) => ({
    name: typeof c['name'] === 'string' ? c['name'] : '',
    image: typeof c['image'] === 'string' ? c['image'] : '',
    ...(typeof c['restartPolicy'] === 'string' ? { restartPolicy: c['restartPolicy'] } : {}),
    ...(isJsonObject(c['resources']) ? { resources: c['resources'] } : {}),
  }));
}

/** The containers that run for the pod's life: its containers and its native sidecars. */
function runningContainers(pod: KubeObject): { init: SpecContainer[]; main: SpecContainer[] } {
  return {
    init: specContainers(pod, 'initContainers').filter((c) => c.restartPolicy === 'Always'),
    main: specContainers(pod, 'containers'),
  };
}

/** True when one of the pod's containers or native sidecars runs `image`. */
export function usesImage(pod: KubeObject, image: string): boolean {
  const { init, main } = runningContainers(pod);
  return [...init, ...main].some((c) => c.image === image);
}

/** A content-addressed id per image, so that a new image always shows a new imageID. */
export function fakeImageId(image: string): string {
  const digest = createHash('sha256').update(image).digest('hex');
  return `docker-pullable://${image.replace(/[:@].*$/, '')}@sha256:${digest}`;
}

/** A metav1.Time as the API server writes it: RFC 3339, whole seconds, UTC. */
export function kubeTime(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}

/** The `n`-th pod IP: 10.0.x.y (always a valid IPv4 address). */
export function podIp(n: number): string {
  return `10.0.${(n >> 8) & 255}.${n & 255}`;
}

function str(obj: JsonObject, key: string): string | undefined {
  const value = obj[key];
  return typeof value === 'string' ? value : undefined;
}

function waitingReason(status: JsonObject): string | undefined {
  const state = status['state'];
  const waiting = isJsonObject(state) ? state['waiting'] : undefined;
  return isJsonObject(waiting) ? str(waiting, 'reason') : undefined;
}

/** When a container in CrashLoopBackOff crashes again: its last crash plus the back-off. */
function nextCrash(status: JsonObject, backoffSeconds: number): Date | undefined {
  if (waitingReason(status) !== 'CrashLoopBackOff') return undefined;
  const last = status['lastState'];
  const terminated = isJsonObject(last) ? last['terminated'] : undefined;
  const finishedAt = isJsonObject(terminated) ? str(terminated, 'finishedAt') : undefined;
  const time = Date.parse(finishedAt ?? '');
  return Number.isNaN(time) ? undefined : new Date(time + backoffSeconds * 1000);
}

/** A pod condition; its lastTransitionTime is kept while its status stays the same. */
export function condition(
  type: string,
  ok: boolean,
  previous: readonly JsonValue[] | undefined,
  now: string,
): JsonObject {
  const status = ok ? 'True' : 'False';
  const old = previous?.find((c) => isJsonObject(c) && c['type'] === type);
  const since =
    isJsonObject(old) && old['status'] === status ? (old['lastTransitionTime'] ?? now) : now;
  return { type, status, lastProbeTime: null, lastTransitionTime: since };
}

/** The condition types of the pod's readiness gates. */
export function readinessGates(pod: KubeObject): string[] {
  const spec = pod['spec'];
  const gates = isJsonObject(spec) ? spec['readinessGates'] : undefined;
  if (!Array.isArray(gates)) return [];
  return gates
    .filter(isJsonObject)
    .flatMap((g) => (typeof g['conditionType'] === 'string' ? [g['conditionType']] : []));
}

/**
 * One container's status. An unchanged healthy container keeps its previous status; a changed
 * image runs in a restarted container (restartCount + 1, new imageID and containerID, ready, the
 * old one in lastState, stopped cleanly). `failure` (the container's image was made to fail) keeps
 * it not ready: ImagePullBackOff leaves restartCount alone and, as the real kubelet, still names
 * the image of the container that ran before (no new one was made); CrashLoopBackOff crashes at
 * once (restartCount + 1, lastState.terminated, waiting CrashLoopBackOff) and again each
 * `backoffSeconds` after its last crash, as a crash-looping container's restartCount keeps
 * climbing.
 */
export function containerStatus(
  spec: SpecContainer,
  previous: JsonObject | undefined,
  failure: ImageFailure | undefined,
  now: string,
  backoffSeconds = CRASH_LOOP_BACKOFF_SECONDS,
): JsonObject {
  const status = imageStatus(spec, previous, failure, now, backoffSeconds);
  // A resize is applied to the running container in place (status.containerStatuses[].resources).
  if (spec.resources === undefined || jsonEqual(status['resources'], spec.resources)) return status;
  return { ...status, resources: spec.resources };
}

function imageStatus(
  spec: SpecContainer,
  previous: JsonObject | undefined,
  failure: ImageFailure | undefined,
  now: string,
  backoffSeconds: number,
): JsonObject {
  const restarts = typeof previous?.['restartCount'] === 'number' ? previous['restartCount'] : 0;
  const ourWaiting =
    previous !== undefined && IMAGE_FAILURES.some((f) => f === waitingReason(previous));
  const unchanged = previous !== undefined && previous['image'] === spec.image;
  if (failure === undefined && unchanged && !ourWaiting) return previous;
  if (failure !== undefined && unchanged && waitingReason(previous) === failure) {
    const crash = nextCrash(previous, backoffSeconds);
    if (crash === undefined || Date.parse(now) < crash.getTime()) return previous;
  }
  // A new container (first start, image change or recovery) is a restart unless it is the first.
  const restartCount = previous === undefined ? 0 : restarts + 1;
  const base = { name: spec.name, image: spec.image, started: false, ready: false };
  if (failure === 'ImagePullBackOff') {
    const ran = previous !== undefined && str(previous, 'containerID') !== undefined;
    return {
      ...base,
      image: ran ? (str(previous, 'image') ?? spec.image) : spec.image,
      imageID: ran ? (str(previous, 'imageID') ?? '') : '',
      restartCount: restarts,
      state: {
        waiting: {
          reason: 'ImagePullBackOff',
          message: `Back-off pulling image "${spec.image}"`,
        },
      },
    };
  }
  if (failure === 'CrashLoopBackOff') {
    return {
      ...base,
      imageID: fakeImageId(spec.image),
      restartCount,
      state: {
        waiting: {
          reason: 'CrashLoopBackOff',
          message: `back-off restarting failed container ${spec.name}`,
        },
      },
      lastState: {
        terminated: { exitCode: 1, reason: 'Error', startedAt: now, finishedAt: now },
      },
    };
  }
  const stopped = stoppedContainer(previous, now);
  return {
    ...base,
    imageID: fakeImageId(spec.image),
    containerID: `containerd://${createHash('sha256').update(`${spec.name}/${spec.image}/${restartCount}`).digest('hex').slice(0, 32)}`,
    started: true,
    ready: true,
    restartCount,
    state: { running: { startedAt: now } },
    ...(stopped === undefined ? {} : { lastState: { terminated: stopped } }),
  };
}

/** The previous container, stopped by the kubelet for a restart (its program exits 0). */
function stoppedContainer(previous: JsonObject | undefined, now: string): JsonObject | undefined {
  const state = previous?.['state'];
  const running = isJsonObject(state) ? state['running'] : undefined;
  const containerID = previous === undefined ? undefined : str(previous, 'containerID');
  if (!isJsonObject(running) || containerID === undefined) return undefined;
  return {
    exitCode: 0,
    reason: 'Completed',
    startedAt: running['startedAt'] ?? now,
    finishedAt: now,
    containerID,
  };
}

/**
 * The status the kubelet reports for `pod`, or undefined when it reports nothing (a pod not
 * started yet with `startPods` false). The caller compares it with the current status and writes
 * it only when it differs. Ready needs every container ready and every readiness gate True.
 */
export function desiredStatus(pod: KubeObject, context: StatusContext): DesiredStatus | undefined {
  const status: JsonObject = isJsonObject(pod['status']) ? clone(pod['status']) : {};
  const statusList = (key: string): JsonObject[] => {
    const list = status[key];
    return Array.isArray(list) ? list.filter(isJsonObject) : [];
  };
  const previous = statusList('containerStatuses');
  const previousInit = statusList('initContainerStatuses');
  const started = previous.length > 0;
  if (!started && !context.startPods) return undefined;
  const now = kubeTime(context.now());
  const backoffSeconds = context.crashLoopBackoffSeconds ?? CRASH_LOOP_BACKOFF_SECONDS;
  const { init: sidecars, main } = runningContainers(pod);
  const statusOf = (c: SpecContainer, before: readonly JsonObject[]): JsonObject =>
    containerStatus(
      c,
      before.find((p) => p['name'] === c.name),
      context.failures.get(c.image),
      now,
      backoffSeconds,
    );
  const containerStatuses = main.map((c) => statusOf(c, previous));
  const sidecarStatuses = sidecars.map((c) => statusOf(c, previousInit));
  const running = [...sidecars, ...main];
  const crashes = [...sidecarStatuses, ...containerStatuses].flatMap((status, i) => {
    const image = running[i]?.image ?? '';
    const next =
      context.failures.get(image) === 'CrashLoopBackOff'
        ? nextCrash(status, backoffSeconds)
        : undefined;
    return next === undefined ? [] : [next.getTime()];
  });
  const ready = [...sidecarStatuses, ...containerStatuses].every((c) => c['ready'] === true);
  const conditions = Array.isArray(status['conditions']) ? status['conditions'] : undefined;
  const gatesOk = readinessGates(pod).every((type) =>
    conditions?.some((c) => isJsonObject(c) && c['type'] === type && c['status'] === 'True'),
  );
  // Which spec this status describes, as the real kubelet says (pod generation tracking).
  const generation = pod.metadata.generation;
  const observed = generation === undefined ? {} : { observedGeneration: generation };
  status['conditions'] = [
    ...[
      condition('PodScheduled', true, conditions, now),
      condition('Initialized', true, conditions, now),
      condition('ContainersReady', ready, conditions, now),
      condition('Ready', ready && gatesOk, conditions, now),
    ].map((c) => ({ ...c, ...observed })),
    ...(conditions ?? []).filter(
      (c) => !(isJsonObject(c) && KUBELET_CONDITIONS.includes(str(c, 'type') ?? '')),
    ),
  ];
  status['containerStatuses'] = containerStatuses;
  if (generation !== undefined) status['observedGeneration'] = generation;
  // Classic init containers ran to completion before the containers started; native sidecars
  // (restartPolicy: Always) run beside them and restart in place like them.
  const init = specContainers(pod, 'initContainers');
  if (init.length > 0) {
    status['initContainerStatuses'] = init.map((c) => {
      const sidecar = sidecarStatuses.find((status) => status['name'] === c.name);
      if (sidecar !== undefined) return sidecar;
      const before = previousInit.find((p) => p['name'] === c.name);
      return (
        before ?? {
          name: c.name,
          image: c.image,
          imageID: fakeImageId(c.image),
          ready: true,
          restartCount: 0,
          state: {
            terminated: { exitCode: 0, reason: 'Completed', startedAt: now, finishedAt: now },
          },
        }
      );
    });
  }
  const anyRunning = containerStatuses.some(
    (c) => isJsonObject(c['state']) && 'running' in c['state'],
  );
  // A pod that once ran stays Running while its containers restart or back off.
  status['phase'] = anyRunning || status['phase'] === 'Running' ? 'Running' : 'Pending';
  if (!started) {
    status['podIP'] = podIp(context.ipIndex);
    status['hostIP'] = FAKE_HOST_IP;
    status['startTime'] = now;
  }
  const nextCrashAt = crashes.length === 0 ? undefined : new Date(Math.min(...crashes));
  return { status, usedIp: !started, ...(nextCrashAt === undefined ? {} : { nextCrashAt }) };
}
