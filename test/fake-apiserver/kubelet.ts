import { createHash } from 'node:crypto';
import { clone, isJsonObject, jsonEqual } from './json.js';
import type { JsonObject, JsonValue } from './json.js';
import { PODS, sameResource } from './resources.js';
import type { ObjectStore, StoreEvent } from './store.js';
import type { KubeObject } from './types.js';
import { Signal, waitUntil } from './wait.js';
import type { WaitOptions } from './wait.js';

/** Schedules `run` after `ms`; returns a cancel function. Inject a fake to control time. */
export type Schedule = (run: () => void, ms: number) => () => void;

export const IMAGE_FAILURES = ['ImagePullBackOff', 'CrashLoopBackOff'] as const;
export type ImageFailure = (typeof IMAGE_FAILURES)[number];

export interface KubeletOptions {
  /** Delay between a pod change and the status the kubelet reports; default 5 ms. */
  readonly delayMs?: number;
  readonly schedule?: Schedule;
  /** Report newly created pods as Running and Ready, with a status for every container (default true). */
  readonly startPods?: boolean;
  readonly now?: () => Date;
}

const realSchedule: Schedule = (run, ms) => {
  const timer = setTimeout(run, ms);
  return () => {
    clearTimeout(timer);
  };
};

interface SpecContainer {
  readonly name: string;
  readonly image: string;
}

function specContainers(pod: KubeObject, list: 'containers' | 'initContainers'): SpecContainer[] {
  const spec = pod['spec'];
  const containers = isJsonObject(spec) ? spec[list] : undefined;
  if (!Array.isArray(containers)) return [];
  return containers.filter(isJsonObject).map((c) => ({
    name: typeof c['name'] === 'string' ? c['name'] : '',
    image: typeof c['image'] === 'string' ? c['image'] : '',
  }));
}

/** A content-addressed id per image, so that a new image always shows a new imageID. */
export function fakeImageId(image: string): string {
  const digest = createHash('sha256').update(image).digest('hex');
  return `docker-pullable://${image.replace(/[:@].*$/, '')}@sha256:${digest}`;
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

function condition(
  type: string,
  ok: boolean,
  previous: JsonValue[] | undefined,
  now: string,
): JsonObject {
  const status = ok ? 'True' : 'False';
  const old = previous?.find((c) => isJsonObject(c) && c['type'] === type);
  const since =
    isJsonObject(old) && old['status'] === status ? (old['lastTransitionTime'] ?? now) : now;
  return { type, status, lastProbeTime: null, lastTransitionTime: since };
}

function readinessGates(pod: KubeObject): string[] {
  const spec = pod['spec'];
  const gates = isJsonObject(spec) ? spec['readinessGates'] : undefined;
  if (!Array.isArray(gates)) return [];
  return gates
    .filter(isJsonObject)
    .flatMap((g) => (typeof g['conditionType'] === 'string' ? [g['conditionType']] : []));
}

/**
 * A kubelet for the fake cluster. After `delayMs` it reports each pod's containers as the spec
 * says: a changed image runs in a restarted container (new image and imageID, restartCount + 1,
 * ready); other containers are left as they are. Images marked with failImage() never become
 * ready. Pod conditions Ready / ContainersReady follow the containers and the readiness gates.
 * It writes through the store directly, as the kubelet's status manager writes pods/status.
 */
export class FakeKubelet {
  private readonly store: ObjectStore;
  private readonly delayMs: number;
  private readonly schedule: Schedule;
  private readonly startPods: boolean;
  private readonly now: () => Date;
  private readonly failures = new Map<string, ImageFailure>();
  private readonly pending = new Map<string, () => void>();
  private readonly idleSignal = new Signal<undefined>();
  private readonly unsubscribe: () => void;
  private writing = false;
  private ips = 0;

  constructor(store: ObjectStore, options: KubeletOptions = {}) {
    this.store = store;
    this.delayMs = options.delayMs ?? 5;
    this.schedule = options.schedule ?? realSchedule;
    this.startPods = options.startPods ?? true;
    this.now = options.now ?? (() => new Date());
    this.unsubscribe = store.subscribe((event) => {
      this.onEvent(event);
    });
    for (const pod of store.list(PODS).items) this.enqueue(pod);
  }

  /** Containers whose spec image is `image` will fail (existing pods are re-evaluated). */
  failImage(image: string, reason: ImageFailure = 'ImagePullBackOff'): void {
    this.failures.set(image, reason);
    this.resyncImage(image);
  }

  /** Undoes failImage: failing containers with this image start and become ready. */
  healImage(image: string): void {
    this.failures.delete(image);
    this.resyncImage(image);
  }

  /** Pods with a status report still scheduled. */
  pendingPods(): number {
    return this.pending.size;
  }

  /** Resolves when no report is scheduled (with a real clock: once the kubelet has caught up). */
  whenIdle(options: WaitOptions = {}): Promise<true> {
    return waitUntil(
      (wake) => this.idleSignal.subscribe(wake),
      () => (this.pending.size === 0 ? true : undefined),
      {
        what: 'the kubelet to be idle',
        ...options,
      },
    );
  }

  stop(): void {
    this.unsubscribe();
    for (const cancel of this.pending.values()) cancel();
    this.pending.clear();
    this.idleSignal.emit(undefined);
  }

  private resyncImage(image: string): void {
    for (const pod of this.store.list(PODS).items) {
      if (specContainers(pod, 'containers').some((c) => c.image === image)) this.enqueue(pod);
    }
  }

  private onEvent(event: StoreEvent): void {
    if (this.writing || !sameResource(event.resource, PODS)) return;
    const key = `${event.object.metadata.namespace ?? ''}/${event.object.metadata.name ?? ''}`;
    if (event.type === 'DELETED') {
      this.pending.get(key)?.();
      this.pending.delete(key);
      this.idleSignal.emit(undefined);
      return;
    }
    this.enqueue(event.object);
  }

  private enqueue(pod: KubeObject): void {
    const namespace = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    const key = `${namespace}/${name}`;
    if (this.pending.has(key)) return;
    const cancel = this.schedule(() => {
      this.pending.delete(key);
      this.report(namespace, name);
      this.idleSignal.emit(undefined);
    }, this.delayMs);
    this.pending.set(key, cancel);
  }

  private report(namespace: string, name: string): void {
    const pod = this.store.get(PODS, namespace, name);
    if (pod === undefined) return;
    const status = this.desiredStatus(pod);
    if (status === undefined || jsonEqual(status, pod['status'])) return;
    this.writing = true;
    try {
      this.store.mutate(PODS, namespace, name, (p) => {
        p['status'] = status;
      });
    } finally {
      this.writing = false;
    }
  }

  private desiredStatus(pod: KubeObject): JsonObject | undefined {
    const status: JsonObject = isJsonObject(pod['status']) ? clone(pod['status']) : {};
    const previous = Array.isArray(status['containerStatuses'])
      ? status['containerStatuses'].filter(isJsonObject)
      : [];
    const started = previous.length > 0;
    if (!started && !this.startPods) return undefined;
    const now = this.now()
      .toISOString()
      .replace(/\.\d+Z$/, 'Z');
    const containerStatuses = specContainers(pod, 'containers').map((c) =>
      this.containerStatus(
        c,
        previous.find((p) => p['name'] === c.name),
        now,
      ),
    );
    const ready = containerStatuses.every((c) => c['ready'] === true);
    const conditions = Array.isArray(status['conditions']) ? status['conditions'] : undefined;
    const gates = readinessGates(pod);
    const gatesOk = gates.every((type) =>
      conditions?.some((c) => isJsonObject(c) && c['type'] === type && c['status'] === 'True'),
    );
    const ours = ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'];
    status['conditions'] = [
      condition('PodScheduled', true, conditions, now),
      condition('Initialized', true, conditions, now),
      condition('ContainersReady', ready, conditions, now),
      condition('Ready', ready && gatesOk, conditions, now),
      ...(conditions ?? []).filter(
        (c) => !(isJsonObject(c) && ours.includes(str(c, 'type') ?? '')),
      ),
    ];
    status['containerStatuses'] = containerStatuses;
    const init = specContainers(pod, 'initContainers');
    if (init.length > 0 && !started) {
      status['initContainerStatuses'] = init.map((c) => ({
        name: c.name,
        image: c.image,
        imageID: fakeImageId(c.image),
        ready: true,
        restartCount: 0,
        state: {
          terminated: { exitCode: 0, reason: 'Completed', startedAt: now, finishedAt: now },
        },
      }));
    }
    const running = containerStatuses.some(
      (c) => isJsonObject(c['state']) && 'running' in c['state'],
    );
    // A pod that once ran stays Running while its containers restart or back off.
    status['phase'] = running || status['phase'] === 'Running' ? 'Running' : 'Pending';
    if (!started) {
      this.ips++;
      status['podIP'] = `10.0.${(this.ips >> 8) & 255}.${this.ips & 255}`;
      status['hostIP'] = '192.168.0.10';
      status['startTime'] = now;
    }
    return status;
  }

  private containerStatus(
    spec: SpecContainer,
    previous: JsonObject | undefined,
    now: string,
  ): JsonObject {
    const failure = this.failures.get(spec.image);
    const restarts = typeof previous?.['restartCount'] === 'number' ? previous['restartCount'] : 0;
    const ourWaiting =
      previous !== undefined && IMAGE_FAILURES.some((f) => f === waitingReason(previous));
    const unchanged = previous !== undefined && previous['image'] === spec.image;
    if (failure === undefined && unchanged && !ourWaiting) return previous;
    if (failure !== undefined && unchanged && waitingReason(previous) === failure) return previous;
    // A new container (first start, image change or recovery) is a restart unless it is the first.
    const restartCount = previous === undefined ? 0 : restarts + 1;
    const base = { name: spec.name, image: spec.image, started: false, ready: false };
    if (failure === 'ImagePullBackOff') {
      return {
        ...base,
        imageID: '',
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
    return {
      ...base,
      imageID: fakeImageId(spec.image),
      containerID: `containerd://${createHash('sha256').update(`${spec.name}/${spec.image}/${restartCount}`).digest('hex').slice(0, 32)}`,
      started: true,
      ready: true,
      restartCount,
      state: { running: { startedAt: now } },
    };
  }
}
