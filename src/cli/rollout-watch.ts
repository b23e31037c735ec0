/**
 * `sidecarset rollout status -w`: follows the rollout through watches (the SidecarSet, the pods
 * its selector can match, the namespaces), printing the status whenever it changes, until the
 * rollout is done (exit 0), the SidecarSet is deleted or --timeout passes (exit 1).
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { pino } from 'pino';

import type { Pod } from '../core/api/k8s-types.js';
import { selectorString } from '../core/matching/selector.js';
import type { SidecarSet } from '../core/api/sidecarset-types.js';
import type { RolloutStatus } from '../core/rollout/rollout-status.js';
import { rolloutStatus } from '../core/rollout/rollout-status.js';
import type { CachedNamespace } from '../k8s/collections.js';
import { cachedNamespace, listNamespaces, NAMESPACES_PATH } from '../k8s/collections.js';
import type { ListPage, Reflector, ReflectorHandlers } from '../k8s/reflector.js';
import { createReflector } from '../k8s/reflector.js';
import type { Io } from './io.js';

export interface FollowOptions {
  /** The apps.kruise.io version to watch SidecarSets in (CliClient.sidecarSetVersion). */
  version: string;
  /** Seconds; 0 waits for ever. */
  timeout: number;
  print: (status: RolloutStatus) => string;
  now: () => Date;
}

/** Changes arriving together (a round upgrading many pods) are printed once. */
const SETTLE_MS = 200;

export function followRollout(
  kubeConfig: KubeConfig,
  name: string,
  first: RolloutStatus,
  options: FollowOptions,
  io: Io,
): Promise<number> {
  let last = options.print(first);
  io.stdout.write(last);
  const logger = pino({ level: 'error', base: null }, io.stderr);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  let finished = false;
  let settle: NodeJS.Timeout | undefined;
  let deadline: NodeJS.Timeout | undefined;
  let pods: { scope: string; reflector: Reflector<Pod> } | undefined;
  let resolve: (code: number) => void = () => undefined;
  const done = new Promise<number>((r) => {
    resolve = r;
  });
  const handlers: ReflectorHandlers<unknown> = {
    onAdd: () => {
      schedule();
    },
    onUpdate: () => {
      schedule();
    },
    onDelete: () => {
      schedule();
    },
    onSynced: () => {
      schedule();
    },
  };
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const api = { group: 'apps.kruise.io', version: options.version, plural: 'sidecarsets' };
  const sidecarSets = createReflector<KubernetesObject, SidecarSet>({
    kubeConfig,
    path: `/apis/${api.group}/${api.version}/${api.plural}`,
    fieldSelector: `metadata.name=${name}`,
    list: async (params) =>
      (await custom.listClusterCustomObject({ ...api, ...params })) as ListPage<KubernetesObject>,
    transform: (raw) => raw as unknown as SidecarSet,
    logger,
    handlers,
  });
  const namespaces = createReflector<KubernetesObject, CachedNamespace>({
    kubeConfig,
    path: NAMESPACES_PATH,
    list: listNamespaces(kubeConfig),
    transform: cachedNamespace,
    logger,
    handlers,
  });

  function finish(code: number): void {
    if (finished) return;
    finished = true;
    clearTimeout(settle);
    clearTimeout(deadline);
    void Promise.all([sidecarSets.stop(), namespaces.stop(), pods?.reflector.stop()]).then(() => {
      resolve(code);
    });
  }

  function schedule(): void {
    if (finished || settle !== undefined) return;
    settle = setTimeout(() => {
      settle = undefined;
      render();
    }, SETTLE_MS);
  }

  /** The pod reflector for the SidecarSet's namespace and selector, replaced when they change. */
  function podsFor(ss: SidecarSet): Reflector<Pod> {
    const namespace = ss.spec.namespace ?? '';
    const labelSelector = selectorString(ss.spec.selector) ?? '';
    const scope = `${namespace}\u0000${labelSelector}`;
    if (pods?.scope === scope) return pods.reflector;
    void pods?.reflector.stop();
    const reflector = createReflector<unknown, Pod>({
      kubeConfig,
      path: namespace === '' ? '/api/v1/pods' : `/api/v1/namespaces/${namespace}/pods`,
      labelSelector,
      list: async (params) =>
        namespace === ''
          ? await core.listPodForAllNamespaces({ ...params, labelSelector })
          : await core.listNamespacedPod({
              namespace,
              ...params,
              labelSelector,
            }),
      // Listed pods are typed (times as Date), watched ones plain JSON: both as the API sent them.
      transform: (raw) => JSON.parse(JSON.stringify(raw)) as Pod,
      logger,
      handlers,
    });
    pods = { scope, reflector };
    void reflector.start();
    return reflector;
  }

  function render(): void {
    if (finished || !sidecarSets.synced() || !namespaces.synced()) return;
    const ss = sidecarSets.get(name);
    if (ss === undefined) {
      io.stderr.write(`error: sidecarset.apps.kruise.io "${name}" was deleted\n`);
      finish(1);
      return;
    }
    // An empty selector matches no pod: no reflector is needed, and none would list the right pods.
    const podReflector = selectorString(ss.spec.selector) === undefined ? undefined : podsFor(ss);
    if (podReflector !== undefined && !podReflector.synced()) return;
    const status = rolloutStatus(
      ss,
      podReflector?.list() ?? [],
      { get: (ns) => namespaces.get(ns)?.labels },
      options.now(),
    );
    const text = options.print(status);
    if (text !== last) io.stdout.write(text);
    last = text;
    if (status.done) finish(0);
  }

  if (options.timeout > 0) {
    deadline = setTimeout(() => {
      io.stderr.write(`error: timed out waiting for the rollout of SidecarSet "${name}"\n`);
      finish(1);
    }, options.timeout * 1000);
  }
  void sidecarSets.start();
  void namespaces.start();
  return done;
}
