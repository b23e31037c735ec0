import { jsonEqual } from './json.js';
import { desiredStatus, podKey, usesImage } from './kubelet-status.js';
import type { ImageFailure } from './kubelet-status.js';
import { PODS, sameResource } from './resources.js';
import type { ObjectStore, StoreEvent } from './store.js';
import type { KubeObject } from './types.js';
import { Signal, waitUntil } from './wait.js';
import type { WaitOptions } from './wait.js';

export { fakeImageId, IMAGE_FAILURES } from './kubelet-status.js';
export type { ImageFailure } from './kubelet-status.js';

/** Schedules `run` after `ms`; returns a cancel function. Inject a fake to control time. */
export type Schedule = (run: () => void, ms: number) => () => void;

export interface KubeletOptions {
  /** Delay between a pod change and the status the kubelet reports; default 5 ms. */
  readonly delayMs?: number;
  readonly schedule?: Schedule;
  /** Report newly created pods as Running and Ready, with a status for every container (default true). */
  readonly startPods?: boolean;
  readonly now?: () => Date;
  /** Seconds between the crashes of a CrashLoopBackOff container; default 1. */
  readonly crashLoopBackoffSeconds?: number;
}

const realSchedule: Schedule = (run, ms) => {
  const timer = setTimeout(run, ms);
  return () => {
    clearTimeout(timer);
  };
};

/**
 * A kubelet for the fake cluster. After `delayMs` it reports each pod's containers as the spec
 * says: a changed image runs in a restarted container (new image and imageID, restartCount + 1,
 * ready); other containers are left as they are. Images marked with failImage() never become
 * ready; with CrashLoopBackOff their restartCount keeps climbing. Pod conditions Ready / ContainersReady follow the containers and the readiness gates.
 * It writes through the store directly, as the kubelet's status manager writes pods/status.
 * The status itself is computed by kubelet-status.ts, shared with ApiKubelet
 * (test/support/api-kubelet.ts), which reports through any API server.
 */
export class FakeKubelet {
  private readonly store: ObjectStore;
  private readonly delayMs: number;
  private readonly schedule: Schedule;
  private readonly startPods: boolean;
  private readonly now: () => Date;
  private readonly failures = new Map<string, ImageFailure>();
  private readonly pending = new Map<string, () => void>();
  /** The next crash of a pod's crash-looping container: a future event, not a pending report. */
  private readonly crashes = new Map<string, () => void>();
  private readonly crashLoopBackoffSeconds: number | undefined;
  /** Pods being deleted gracefully, removed when their grace period ends. */
  private readonly removals = new Map<string, () => void>();
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
    this.crashLoopBackoffSeconds = options.crashLoopBackoffSeconds;
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

  /**
   * Resolves when no report is scheduled (with a real clock: once the kubelet has caught up). The
   * next crash of a crash-looping container is a future event, not a report it is behind on.
   */
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
    const timers = [...this.pending.values(), ...this.crashes.values(), ...this.removals.values()];
    for (const cancel of timers) cancel();
    this.pending.clear();
    this.crashes.clear();
    this.removals.clear();
    this.idleSignal.emit(undefined);
  }

  private resyncImage(image: string): void {
    for (const pod of this.store.list(PODS).items) {
      if (usesImage(pod, image)) this.enqueue(pod);
    }
  }

  private onEvent(event: StoreEvent): void {
    if (this.writing || !sameResource(event.resource, PODS)) return;
    const key = podKey(event.object);
    if (event.type === 'DELETED') {
      this.pending.get(key)?.();
      this.pending.delete(key);
      this.crashes.get(key)?.();
      this.crashes.delete(key);
      this.removals.get(key)?.();
      this.removals.delete(key);
      this.idleSignal.emit(undefined);
      return;
    }
    if (event.object.metadata['deletionTimestamp'] !== undefined) this.removeLater(event.object);
    this.enqueue(event.object);
  }

  /**
   * Ends a graceful deletion as the kubelet does once the containers have stopped: here, when the
   * grace period (deletionGracePeriodSeconds) is over, unless someone deleted the pod before.
   */
  private removeLater(pod: KubeObject): void {
    const key = podKey(pod);
    if (this.removals.has(key)) return;
    const grace = pod.metadata['deletionGracePeriodSeconds'];
    const { namespace = '', name = '', uid } = pod.metadata;
    const cancel = this.schedule(
      () => {
        this.removals.delete(key);
        if (this.store.get(PODS, namespace, name)?.metadata.uid !== uid) return;
        this.store.delete(PODS, namespace, name);
      },
      (typeof grace === 'number' ? grace : 0) * 1000,
    );
    this.removals.set(key, cancel);
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

  /** Reports the pod again when its crash-looping container crashes next. */
  private crashAt(pod: KubeObject, at: Date): void {
    const key = podKey(pod);
    this.crashes.get(key)?.();
    const cancel = this.schedule(
      () => {
        this.crashes.delete(key);
        this.enqueue(pod);
      },
      Math.max(at.getTime() - this.now().getTime(), 0),
    );
    this.crashes.set(key, cancel);
  }

  private report(namespace: string, name: string): void {
    const pod = this.store.get(PODS, namespace, name);
    if (pod === undefined) return;
    const desired = desiredStatus(pod, {
      failures: this.failures,
      startPods: this.startPods,
      now: this.now,
      ipIndex: this.ips + 1,
      ...(this.crashLoopBackoffSeconds === undefined
        ? {}
        : { crashLoopBackoffSeconds: this.crashLoopBackoffSeconds }),
    });
    if (desired === undefined) return;
    if (desired.usedIp) this.ips++;
    if (desired.nextCrashAt !== undefined) this.crashAt(pod, desired.nextCrashAt);
    const { status } = desired;
    if (jsonEqual(status, pod['status'])) return;
    this.writing = true;
    try {
      this.store.mutate(PODS, namespace, name, (p) => {
        p['status'] = status;
      });
    } finally {
      this.writing = false;
    }
  }
}
