/**
 * The fake kubelet's behaviour (test/fake-apiserver/kubelet-status.ts) driven through any API
 * server over HTTP, for a real kube-apiserver that runs without kubelets or a scheduler.
 *
 * It lists and watches pods (one namespace or all), and `delayMs` after a pod changes it writes
 * the status a kubelet would report with PUT .../pods/NAME/status, carrying the resourceVersion
 * it read; a 409 Conflict is retried from a fresh GET. What it writes follows FakeKubelet exactly:
 * new pods start Running and Ready, a changed image restarts its container, images made to fail
 * with failImage() stay not ready (crash-looping ones with a climbing restartCount), Ready waits for the readiness gates.
 *
 * Pods with `metadata.deletionTimestamp` are left alone. A watch that ends (timeout, closed
 * stream, 410 Expired or any error) is followed by a fresh list and a new watch; errors other
 * than the stream ending retry after a short backoff and are reported to `onError`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiException, CoreV1Api, Watch } from '@kubernetes/client-node';
import type { ConfigurationOptions, KubeConfig, V1Pod } from '@kubernetes/client-node';

import { withSignal } from '../../src/k8s/abortable.js';
import { isJsonObject, jsonEqual } from '../fake-apiserver/json.js';
import type { JsonObject, JsonValue } from '../fake-apiserver/json.js';
import { desiredStatus, kubeTime, podKey, usesImage } from '../fake-apiserver/kubelet-status.js';
import type { ImageFailure } from '../fake-apiserver/kubelet-status.js';
import type { KubeObject } from '../fake-apiserver/types.js';
import { Signal, waitUntil } from '../fake-apiserver/wait.js';
import type { WaitOptions } from '../fake-apiserver/wait.js';

export interface ApiKubeletOptions {
  /** Only pods in this namespace; default all namespaces. */
  readonly namespace?: string;
  /** Delay between a pod change and the status the kubelet reports; default 5 ms. */
  readonly delayMs?: number;
  /** Report newly created pods as Running and Ready, with a status for every container (default true). */
  readonly startPods?: boolean;
  readonly now?: () => Date;
  /** Seconds between the crashes of a CrashLoopBackOff container; default 1. */
  readonly crashLoopBackoffSeconds?: number;
  /** Failed lists, watches and status writes (they are retried); default: a line on stderr. */
  readonly onError?: (error: Error) => void;
}

/** 409s in a row on one status write before the report is counted as failed. */
const MAX_CONFLICTS = 5;
/** Failed reports in a row for one pod before it waits for its next change. */
const MAX_REPORT_FAILURES = 3;
const RETRY_INITIAL_MS = 100;
const RETRY_MAX_MS = 2000;

/** A watch that ends sooner than this with no event counts as a failure (client-go's rule). */
const SHORT_WATCH_MS = 1000;

/** closed: ended normally; short: ended at once with no event; expired: 410 Gone. */
type WatchOutcome = 'closed' | 'short' | 'expired' | 'failed' | 'stopped';

function statusCode(err: unknown): number | undefined {
  if (err instanceof ApiException) return err.code;
  if (typeof err === 'object' && err !== null && 'statusCode' in err) {
    return typeof err.statusCode === 'number' ? err.statusCode : undefined;
  }
  return undefined;
}

function asError(err: unknown): Error {
  if (err instanceof ApiException) {
    const body: unknown = err.body;
    const detail = typeof body === 'string' ? body : JSON.stringify(body);
    return new Error(`HTTP ${err.code}: ${detail}`);
  }
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * client-node's typed objects as the API server's JSON: Date fields back to metav1.Time strings,
 * undefined fields dropped. (Pod models use the JSON field names, so nothing is renamed.)
 */
function plainJson(value: unknown): JsonValue | undefined {
  if (value === null) return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : kubeTime(value);
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (Array.isArray(value)) {
    return value.flatMap((item: unknown) => {
      const json = plainJson(item);
      return json === undefined ? [] : [json];
    });
  }
  if (typeof value !== 'object') return undefined;
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(value)) {
    const json = plainJson(item);
    if (json !== undefined) out[key] = json;
  }
  return out;
}

function asPod(value: unknown): KubeObject | undefined {
  const json = plainJson(value);
  if (!isJsonObject(json) || !isJsonObject(json['metadata'])) return undefined;
  const metadata = json['metadata'];
  if (typeof metadata['name'] !== 'string') return undefined;
  return { ...json, metadata };
}

function resourceVersionOf(pod: KubeObject | undefined): string | undefined {
  return pod?.metadata.resourceVersion;
}

function isTerminating(pod: KubeObject): boolean {
  const deletion = pod.metadata['deletionTimestamp'];
  return deletion !== undefined && deletion !== null;
}

const defaultOnError = (error: Error): void => {
  console.error(`api-kubelet: ${error.message}`);
};

/**
 * A kubelet for a cluster without kubelets: the behaviour of FakeKubelet, through the API.
 * stop() ends the watch, the timers and any request in flight, and resolves once they settled.
 */
export class ApiKubelet {
  private readonly core: CoreV1Api;
  private readonly watcher: Watch;
  private readonly namespace: string | undefined;
  private readonly delayMs: number;
  private readonly startPods: boolean;
  private readonly now: () => Date;
  private readonly onError: (error: Error) => void;
  private readonly stopping = new AbortController();
  private readonly requestOptions: ConfigurationOptions;
  private readonly failures = new Map<string, ImageFailure>();
  /** The pods as last listed or watched (or written), by namespace/name. */
  private pods = new Map<string, KubeObject>();
  /** Reports waiting for their delay, by pod key. */
  private readonly scheduled = new Map<string, NodeJS.Timeout>();
  /** The next crash of a pod's crash-looping container: a future event, not a pending report. */
  private readonly crashes = new Map<string, NodeJS.Timeout>();
  private readonly crashLoopBackoffSeconds: number | undefined;
  /** Reports running (reading or writing); at most one per pod. */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Pods that changed while their report ran: the resourceVersion of the last change. */
  private readonly changedInFlight = new Map<string, string>();
  /** Pods to report again once their running report ends (failImage, a failed report). */
  private readonly rerun = new Set<string>();
  /** The resourceVersion of our own last write per pod, whose watch event needs no report. */
  private readonly ownWrites = new Map<string, string>();
  private readonly reportFailures = new Map<string, number>();
  private readonly idleSignal = new Signal<undefined>();
  private readonly loop: Promise<void>;
  private cancelWatch: (() => void) | undefined;
  private synced = false;
  private stopped = false;
  private ips = 0;

  constructor(kubeConfig: KubeConfig, options: ApiKubeletOptions = {}) {
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.watcher = new Watch(kubeConfig);
    this.namespace = options.namespace;
    this.delayMs = options.delayMs ?? 5;
    this.startPods = options.startPods ?? true;
    this.now = options.now ?? (() => new Date());
    this.crashLoopBackoffSeconds = options.crashLoopBackoffSeconds;
    this.onError = options.onError ?? defaultOnError;
    this.requestOptions = withSignal(this.stopping.signal);
    this.loop = this.run().catch((err: unknown) => {
      this.fail(err);
    });
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

  /** Pods with a status report scheduled or in flight. */
  pendingPods(): number {
    return new Set([...this.scheduled.keys(), ...this.inFlight.keys()]).size;
  }

  /**
   * Resolves once the first list is in and no report is scheduled or in flight: the kubelet has
   * caught up with every pod change its watch has delivered (a change made just before may not
   * have arrived yet).
   */
  whenIdle(options: WaitOptions = {}): Promise<true> {
    return waitUntil(
      (wake) => this.idleSignal.subscribe(wake),
      () => this.idle(),
      {
        what: 'the API kubelet to be idle',
        ...options,
      },
    );
  }

  /**
   * Ends the watch, the timers and the requests in flight: they are aborted at once, so nothing
   * keeps the process alive even if the promise is not awaited. Resolves once they have all
   * settled. Idempotent.
   */
  async stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      this.stopping.abort();
      this.cancelWatch?.();
      for (const timer of [...this.scheduled.values(), ...this.crashes.values()]) {
        clearTimeout(timer);
      }
      this.scheduled.clear();
      this.crashes.clear();
      this.idleSignal.emit(undefined);
    }
    await Promise.allSettled([this.loop, ...this.inFlight.values()]);
  }

  /** Read through a call: `stopped` changes while the loop awaits. */
  private isStopped(): boolean {
    return this.stopped;
  }

  private idle(): true | undefined {
    if (this.stopped) return true;
    return this.synced && this.scheduled.size === 0 && this.inFlight.size === 0 ? true : undefined;
  }

  private fail(err: unknown): void {
    if (this.stopped) return;
    try {
      this.onError(asError(err));
    } catch {
      // a throwing onError must not stop the kubelet
    }
  }

  // --- list and watch ---------------------------------------------------------------------

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      let outcome: WatchOutcome;
      try {
        const resourceVersion = await this.relist();
        outcome = await this.watch(resourceVersion);
      } catch (err: unknown) {
        this.fail(err);
        outcome = 'failed';
      }
      if (outcome === 'stopped' || this.isStopped()) return;
      failures = outcome === 'failed' || outcome === 'short' ? failures + 1 : 0;
      if (failures > 0) {
        const ms = Math.min(RETRY_MAX_MS, RETRY_INITIAL_MS * 2 ** (failures - 1));
        try {
          await sleep(ms, undefined, { signal: this.stopping.signal });
        } catch {
          return; // stopped
        }
      }
    }
  }

  /** Lists the pods, applies the difference to the cache; returns the list's resourceVersion. */
  private async relist(): Promise<string> {
    const list =
      this.namespace === undefined
        ? await this.core.listPodForAllNamespaces({}, this.requestOptions)
        : await this.core.listNamespacedPod({ namespace: this.namespace }, this.requestOptions);
    const listed = new Map<string, KubeObject>();
    for (const item of list.items) {
      const pod = asPod(item);
      if (pod !== undefined) listed.set(podKey(pod), pod);
    }
    const old = this.pods;
    this.pods = listed;
    for (const key of old.keys()) {
      if (!listed.has(key)) this.forget(key);
    }
    for (const [key, pod] of listed) {
      if (resourceVersionOf(old.get(key)) !== resourceVersionOf(pod)) this.changed(key, pod);
    }
    this.synced = true;
    this.idleSignal.emit(undefined);
    return list.metadata?.resourceVersion ?? '';
  }

  /** One watch from `resourceVersion`; resolves when it ends, with how it ended. */
  private watch(resourceVersion: string): Promise<WatchOutcome> {
    return new Promise<WatchOutcome>((resolve) => {
      let settled = false;
      let events = 0;
      const opened = Date.now();
      let request: AbortController | undefined;
      const finish = (outcome: WatchOutcome, err?: unknown): void => {
        if (settled) return;
        settled = true;
        this.cancelWatch = undefined;
        request?.abort();
        if (outcome === 'failed') this.fail(err);
        resolve(outcome);
      };
      if (this.stopped) {
        finish('stopped');
        return;
      }
      this.cancelWatch = () => {
        finish('stopped');
      };
      const onEvent = (type: string, raw: unknown): void => {
        if (settled) return;
        events++;
        if (type === 'ERROR') {
          const code = isJsonObject(raw) ? raw['code'] : undefined;
          if (code === 410) finish('expired');
          else finish('failed', new Error(`watch ERROR event: ${JSON.stringify(raw)}`));
          return;
        }
        if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') this.onEvent(type, raw);
      };
      const onDone = (err: unknown): void => {
        if (this.stopped) finish('stopped');
        else if (err === null || err === undefined)
          finish(events === 0 && Date.now() - opened < SHORT_WATCH_MS ? 'short' : 'closed');
        else if (statusCode(err) === 410) finish('expired');
        else finish('failed', err);
      };
      const path =
        this.namespace === undefined
          ? '/api/v1/pods'
          : `/api/v1/namespaces/${encodeURIComponent(this.namespace)}/pods`;
      this.watcher
        .watch(path, { resourceVersion, allowWatchBookmarks: true }, onEvent, onDone)
        .then(
          (controller) => {
            request = controller;
            if (settled) controller.abort();
          },
          (err: unknown) => {
            onDone(err ?? new Error('watch failed'));
          },
        );
    });
  }

  private onEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', raw: unknown): void {
    const pod = asPod(raw);
    if (pod === undefined) return;
    const key = podKey(pod);
    if (type === 'DELETED') {
      this.pods.delete(key);
      this.forget(key);
      return;
    }
    this.pods.set(key, pod);
    this.changed(key, pod);
  }

  /** A pod appeared or changed (by watch or relist). */
  private changed(key: string, pod: KubeObject): void {
    const version = resourceVersionOf(pod) ?? '';
    if (this.ownWrites.get(key) === version) {
      this.ownWrites.delete(key); // the echo of our own write: nothing new to report
      return;
    }
    this.reportFailures.delete(key);
    if (isTerminating(pod)) {
      this.cancel(key);
      return;
    }
    if (this.inFlight.has(key)) this.changedInFlight.set(key, version);
    else this.enqueue(key);
  }

  /** A pod is gone. */
  private forget(key: string): void {
    this.cancel(key);
    clearTimeout(this.crashes.get(key));
    this.crashes.delete(key);
    this.ownWrites.delete(key);
    this.reportFailures.delete(key);
    this.changedInFlight.delete(key);
    this.rerun.delete(key);
  }

  private cancel(key: string): void {
    const timer = this.scheduled.get(key);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.scheduled.delete(key);
    this.idleSignal.emit(undefined);
  }

  private resyncImage(image: string): void {
    for (const [key, pod] of this.pods) {
      if (!usesImage(pod, image) || isTerminating(pod)) continue;
      this.reportFailures.delete(key);
      if (this.inFlight.has(key)) this.rerun.add(key);
      else this.enqueue(key);
    }
  }

  // --- reports ----------------------------------------------------------------------------

  private enqueue(key: string, delayMs = this.delayMs): void {
    if (this.stopped || this.scheduled.has(key)) return;
    const timer = setTimeout(() => {
      this.scheduled.delete(key);
      this.startReport(key);
    }, delayMs);
    this.scheduled.set(key, timer);
  }

  private startReport(key: string): void {
    const running = this.report(key).then(
      () => {
        this.reportFailures.delete(key);
      },
      (err: unknown) => {
        if (this.stopped) return;
        this.fail(err);
        const failures = (this.reportFailures.get(key) ?? 0) + 1;
        this.reportFailures.set(key, failures);
        if (failures < MAX_REPORT_FAILURES) this.rerun.add(key);
      },
    );
    this.inFlight.set(
      key,
      running.finally(() => {
        this.inFlight.delete(key);
        const changed = this.changedInFlight.delete(key);
        if (this.rerun.delete(key) || changed) {
          const failures = this.reportFailures.get(key) ?? 0;
          this.enqueue(key, this.delayMs + (failures > 0 ? RETRY_INITIAL_MS * failures : 0));
        }
        this.idleSignal.emit(undefined);
      }),
    );
  }

  /** Reports the pod again when its crash-looping container crashes next. */
  private crashAt(key: string, at: Date): void {
    if (this.stopped) return;
    clearTimeout(this.crashes.get(key));
    const timer = setTimeout(
      () => {
        this.crashes.delete(key);
        if (this.inFlight.has(key)) this.rerun.add(key);
        else this.enqueue(key);
      },
      Math.max(at.getTime() - this.now().getTime(), 0),
    );
    this.crashes.set(key, timer);
  }

  /** Writes the pod's desired status if it differs; retries 409s from a fresh GET. */
  private async report(key: string): Promise<void> {
    let pod = this.pods.get(key);
    let ipIndex: number | undefined;
    for (let conflicts = 0; pod !== undefined && !this.stopped; conflicts++) {
      if (isTerminating(pod)) return;
      const desired = desiredStatus(pod, {
        failures: this.failures,
        startPods: this.startPods,
        now: this.now,
        ipIndex: ipIndex ?? this.ips + 1,
        ...(this.crashLoopBackoffSeconds === undefined
          ? {}
          : { crashLoopBackoffSeconds: this.crashLoopBackoffSeconds }),
      });
      if (desired === undefined) return;
      if (desired.nextCrashAt !== undefined) this.crashAt(key, desired.nextCrashAt);
      if (desired.usedIp && ipIndex === undefined) {
        this.ips++;
        ipIndex = this.ips; // kept if a conflict makes us compute again
      }
      if (jsonEqual(desired.status, pod['status'])) return;
      try {
        await this.write(key, pod, desired.status);
        return;
      } catch (err: unknown) {
        const code = statusCode(err);
        if (code === 404) return; // deleted meanwhile
        if (code !== 409 || conflicts >= MAX_CONFLICTS) throw err;
      }
      pod = await this.read(pod);
    }
  }

  private async write(key: string, pod: KubeObject, status: JsonObject): Promise<void> {
    const sentVersion = resourceVersionOf(pod);
    // The whole pod goes back, as the kubelet sends it: pods/status applies metadata too.
    const body = { ...pod, apiVersion: 'v1', kind: 'Pod', status } as unknown as V1Pod;
    const written = asPod(
      await this.core.replaceNamespacedPodStatus(
        { namespace: pod.metadata.namespace ?? '', name: pod.metadata.name ?? '', body },
        this.requestOptions,
      ),
    );
    if (written === undefined || this.stopped) return;
    const version = resourceVersionOf(written) ?? '';
    if (this.changedInFlight.get(key) === version) {
      // The watch already brought this write back: it was the only change meanwhile.
      this.changedInFlight.delete(key);
    } else if (version !== sentVersion) {
      this.ownWrites.set(key, version);
    }
    // Newer than what the cache holds, unless the watch has moved on already.
    if (resourceVersionOf(this.pods.get(key)) === sentVersion) this.pods.set(key, written);
  }

  /** A fresh GET after a conflict; undefined when the pod is gone. */
  private async read(pod: KubeObject): Promise<KubeObject | undefined> {
    try {
      return asPod(
        await this.core.readNamespacedPod(
          { namespace: pod.metadata.namespace ?? '', name: pod.metadata.name ?? '' },
          this.requestOptions,
        ),
      );
    } catch (err: unknown) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  }
}
