/**
 * Pods on the real node as the e2e tests make and watch them: testd containers
 * (test/node-fixture/images.ts) and what their statuses say.
 */
import { Watch } from '@kubernetes/client-node';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';

import { TEST_IMAGES } from '../node-fixture/images.js';

/** `value`, or a failure naming what is missing. */
export function must<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`no ${what}`);
  return value;
}

export const nameOf = (pod: V1Pod): string => pod.metadata?.name ?? '';
export const uidOf = (pod: V1Pod): string => pod.metadata?.uid ?? '';

export function statusOf(pod: V1Pod, container: string): V1ContainerStatus | undefined {
  return [
    ...(pod.status?.containerStatuses ?? []),
    ...(pod.status?.initContainerStatuses ?? []),
  ].find((s) => s.name === container);
}

export function specImage(pod: V1Pod, container: string): string | undefined {
  return [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find(
    (c) => c.name === container,
  )?.image;
}

export function isReady(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

/** The container runs `image` and is ready, as the kubelet reports it. */
export function runsReady(pod: V1Pod, container: string, image: string): boolean {
  const status = statusOf(pod, container);
  return status?.image === image && status.ready && status.state?.running !== undefined;
}

export function envList(env: Record<string, string>): { name: string; value: string }[] {
  return Object.entries(env).map(([name, value]) => ({ name, value }));
}

/** A sidecar running testd, ready 2 s after each start (its readiness probe asks testd). */
export function sidecarContainer(name: string, image: string, env: Record<string, string> = {}) {
  return {
    name,
    image,
    env: envList({ NAME: name, TESTD_READY_AFTER: '2s', ...env }),
    // A generous timeout: on a loaded machine `runc exec` alone can take over the default 1 s.
    readinessProbe: { exec: { command: ['/testd', 'ready'] }, periodSeconds: 1, timeoutSeconds: 5 },
  };
}

/** The app: testd as `nginx`, with a TZ for the sidecar to take (transferEnv). */
export function appContainer(env: Record<string, string> = {}) {
  return {
    name: 'nginx',
    image: TEST_IMAGES.app,
    env: envList({ NAME: 'nginx', TZ: 'Asia/Shanghai', ...env }),
  };
}

export function gateOf(pod: V1Pod) {
  return pod.status?.conditions?.find((c) => c.type === 'InPlaceUpdateReady');
}

/** The most pods whose InPlaceUpdateReady gate was closed at one moment, over a watch's history. */
export function mostClosedGates(history: readonly V1Pod[]): number {
  const closed = new Map<string, boolean>();
  let most = 0;
  for (const pod of history) {
    closed.set(pod.metadata?.name ?? '', gateOf(pod)?.status === 'False');
    most = Math.max(most, [...closed.values()].filter(Boolean).length);
  }
  return most;
}

/**
 * Pods of one namespace as a watch delivers them: every version in order, and the most pods seen
 * not Ready at one moment (what maxUnavailable bounds).
 */
export class PodWatch {
  readonly pods = new Map<string, V1Pod>();
  readonly history: V1Pod[] = [];
  worstUnready = 0;
  /** The fewest pods there and not being deleted at one moment; set it to start counting. */
  fewestPresent = Infinity;
  private abort: (() => void) | undefined;

  static async start(kubeConfig: ConstructorParameters<typeof Watch>[0], namespace: string) {
    const watch = new PodWatch();
    const request = await new Watch(kubeConfig).watch(
      `/api/v1/namespaces/${namespace}/pods`,
      {},
      (type: string, pod: V1Pod) => {
        watch.history.push(pod);
        const name = pod.metadata?.name ?? '';
        if (type === 'DELETED' || pod.metadata?.deletionTimestamp !== undefined) {
          watch.pods.delete(name);
        } else {
          watch.pods.set(name, pod);
        }
        const unready = [...watch.pods.values()].filter((p) => !isReady(p)).length;
        watch.worstUnready = Math.max(watch.worstUnready, unready);
        watch.fewestPresent = Math.min(watch.fewestPresent, watch.pods.size);
      },
      () => undefined,
    );
    watch.abort = () => {
      request.abort();
    };
    return watch;
  }

  stop(): void {
    this.abort?.();
  }
}
