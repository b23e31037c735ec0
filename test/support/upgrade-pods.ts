/**
 * Pods and SidecarSets for upgrade-planner tests, shaped like OpenKruise's strategy-test fixtures
 * (OpenKruise pkg/controller/sidecarset/sidecarset_strategy_test.go): the SidecarSet is at hash "bbb"; an old pod records "aaa" and runs
 * v1; an "upgraded" pod records "bbb" and has v2 in its spec while its status still reports v1;
 * a "done" pod also reports v2 under a new imageID.
 */
import type { Pod, PodCondition } from '../../src/core/api/k8s-types.js';
import type { SidecarSet, SidecarSetUpdateStrategy } from '../../src/core/api/sidecarset-types.js';

export const SET = 'test-sidecarset';
export const SIDECAR = 'test-sidecar';
export const NEW_HASH = 'bbb';
export const OLD_HASH = 'aaa';
/** A revision between the two, that `previous` pods were upgraded to (image v1.5). */
export const PREVIOUS_HASH = 'aab';
export const WITHOUT_IMAGE = 'without-bbb';
const V1_ID = 'docker-pullable://test-sidecar@sha256:1111';
const V2_ID = 'docker-pullable://test-sidecar@sha256:2222';
const V15_ID = 'docker-pullable://test-sidecar@sha256:1515';
const BASE_TIME = Date.parse('2026-01-01T00:00:00Z');

export function upgradeSidecarSet(
  strategy: SidecarSetUpdateStrategy = {},
  extra: {
    withoutImage?: string;
    latestRevision?: string;
    spec?: Partial<SidecarSet['spec']>;
  } = {},
): SidecarSet {
  const ss: SidecarSet = {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: {
      name: SET,
      generation: 2,
      annotations: {
        'kruise.io/sidecarset-hash': NEW_HASH,
        'kruise.io/sidecarset-hash-without-image': extra.withoutImage ?? WITHOUT_IMAGE,
      },
    },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [{ name: SIDECAR, image: 'test-sidecar:v2' }],
      updateStrategy: { type: 'RollingUpdate', ...strategy },
      ...extra.spec,
    },
  };
  if (extra.latestRevision !== undefined) ss.status = { latestRevision: extra.latestRevision };
  return ss;
}

export interface UpgradePodOptions {
  namespace?: string;
  labels?: Record<string, string>;
  /** Records the new hash and runs v2 in its spec. */
  upgraded?: boolean;
  /** Upgraded and applied by the kubelet (status reports v2). Implies upgraded. */
  done?: boolean;
  /**
   * With upgraded or done: the upgrade was to the revision before the SidecarSet's
   * (PREVIOUS_HASH, image v1.5), so the pod is not updated.
   */
  previous?: boolean;
  /** Running with Ready=True (default true). */
  ready?: boolean;
  phase?: string;
  /** The without-image hash the pod records (default: the SidecarSet's). */
  withoutImage?: string;
  nodeName?: string;
  restarts?: number;
  /** Seconds after the base time; default the index. */
  createdAt?: number;
  readySince?: number;
  uid?: string;
}

function hashAnnotation(hash: string): string {
  return JSON.stringify({
    [SET]: {
      updateTimestamp: '2026-01-01T00:00:00Z',
      hash,
      sidecarSetName: SET,
      sidecarList: [SIDECAR],
    },
  });
}

/**
 * A kruise.io/sidecarset-inplace-update-state value with this SidecarSet's entry: the revision and
 * each container's status imageID recorded before its image was written.
 */
export function inPlaceUpdateState(revision: string, imageIDs: Record<string, string>): string {
  const lastContainerStatuses = Object.fromEntries(
    Object.entries(imageIDs).map(([name, imageID]) => [name, { imageID }]),
  );
  return JSON.stringify({
    [SET]: { revision, updateTimestamp: '2026-01-01T00:00:00Z', lastContainerStatuses },
  });
}

function iso(seconds: number): string {
  return new Date(BASE_TIME + seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** `pod-<i>`; pods with a higher index are newer. */
export function upgradePod(i: number, options: UpgradePodOptions = {}): Pod {
  const upgraded = options.upgraded === true || options.done === true;
  const ready = options.ready ?? true;
  const to =
    options.previous === true
      ? { hash: PREVIOUS_HASH, image: 'test-sidecar:v1.5', id: V15_ID }
      : { hash: NEW_HASH, image: 'test-sidecar:v2', id: V2_ID };
  const annotations: Record<string, string> = {
    'kruise.io/sidecarset-injected-list': SET,
    'kruise.io/sidecarset-hash': hashAnnotation(upgraded ? to.hash : OLD_HASH),
    'kruise.io/sidecarset-hash-without-image': hashAnnotation(
      options.withoutImage ?? WITHOUT_IMAGE,
    ),
  };
  if (upgraded) {
    annotations['kruise.io/sidecarset-inplace-update-state'] = inPlaceUpdateState(to.hash, {
      [SIDECAR]: V1_ID,
    });
  }
  const conditions: PodCondition[] = [
    {
      type: 'Ready',
      status: ready ? 'True' : 'False',
      lastTransitionTime: iso(options.readySince ?? options.createdAt ?? i),
    },
  ];
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `pod-${i}`,
      namespace: options.namespace ?? 'default',
      labels: options.labels ?? { app: 'web' },
      annotations,
      creationTimestamp: iso(options.createdAt ?? i),
    },
    spec: {
      nodeName: options.nodeName ?? 'node-1',
      containers: [
        { name: SIDECAR, image: upgraded ? to.image : 'test-sidecar:v1' },
        { name: 'app', image: 'nginx:1.25' },
      ],
    },
    status: {
      phase: options.phase ?? 'Running',
      conditions,
      containerStatuses: [
        {
          name: SIDECAR,
          image: options.done === true ? to.image : 'test-sidecar:v1',
          imageID: options.done === true ? to.id : V1_ID,
          ready,
          restartCount: options.restarts ?? 0,
        },
        {
          name: 'app',
          image: 'nginx:1.25',
          imageID: 'docker-pullable://nginx@sha256:3333',
          ready,
          restartCount: 0,
        },
      ],
    },
  };
  if (options.uid !== undefined) pod.metadata.uid = options.uid;
  return pod;
}

/**
 * `total` pods of which the first `upgraded` are upgraded and the first `done` of those are done
 * (TestGetNextUpgradePods' "count / updated / updated-and-done").
 */
export function podFleet(
  total: number,
  upgraded = 0,
  done = 0,
  options: UpgradePodOptions = {},
): Pod[] {
  return Array.from({ length: total }, (_, i) =>
    upgradePod(i, { ...options, upgraded: i < upgraded, done: i < done }),
  );
}

/** A deterministic shuffle (so tests show that input order does not matter). */
export function shuffled<T>(items: readonly T[], seed = 7): T[] {
  const out = [...items];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

export function names(
  refs: readonly { pod: { name: string } }[] | readonly { name: string }[],
): string[] {
  return refs.map((r) => ('pod' in r ? r.pod.name : r.name));
}

/** A SidecarSet (resourceVersion 42) with one HotUpgrade sidecar "hot" at `image`. */
export function hotSidecarSet(image = 'hot:2'): SidecarSet {
  const ss = upgradeSidecarSet({});
  ss.metadata.resourceVersion = '42';
  ss.spec.containers = [
    {
      name: 'hot',
      image,
      upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' },
    },
  ];
  return ss;
}

/** hot-1 works on hot:1, hot-2 idles on the empty image; everything running and ready. */
export function hotPod(i = 0): Pod {
  const pod = upgradePod(i);
  pod.spec.containers = [
    { name: 'hot-1', image: 'hot:1' },
    { name: 'hot-2', image: 'empty:1' },
    { name: 'app', image: 'nginx:1.25' },
  ];
  pod.status = {
    ...pod.status,
    containerStatuses: [
      { name: 'hot-1', image: 'hot:1', imageID: 'id://hot-1', ready: true, restartCount: 0 },
      { name: 'hot-2', image: 'empty:1', imageID: 'id://empty', ready: true, restartCount: 0 },
      { name: 'app', image: 'nginx:1.25', imageID: 'id://nginx', ready: true, restartCount: 0 },
    ],
  };
  pod.metadata.annotations = {
    ...pod.metadata.annotations,
    'kruise.io/sidecarset-working-hotupgrade-container': '{"hot":"hot-1"}',
    'version.sidecarset.kruise.io/hot-1': '1',
    'versionalt.sidecarset.kruise.io/hot-1': '0',
    'version.sidecarset.kruise.io/hot-2': '0',
    'versionalt.sidecarset.kruise.io/hot-2': '1',
  };
  return pod;
}

/** The kubelet has applied the spec: every container's status shows its image (a new ID). */
export function applied(pod: Pod): Pod {
  const next = structuredClone(pod);
  next.status = {
    ...next.status,
    containerStatuses: (next.status?.containerStatuses ?? []).map((s) => {
      const image = next.spec.containers.find((c) => c.name === s.name)?.image ?? '';
      return image === s.image ? s : { ...s, image, imageID: `id://${image}`, ready: true };
    }),
  };
  return next;
}

/**
 * Available as the kubelet shows it, whatever the planner makes of the pod: Running and Ready, and
 * every container's status on its spec image (otherwise it is about to restart).
 */
export function runsSpecReady(pod: Readonly<Pod>): boolean {
  const status = pod.status;
  return (
    status?.phase === 'Running' &&
    status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true &&
    pod.spec.containers.every(
      (c) => status.containerStatuses?.find((s) => s.name === c.name)?.image === c.image,
    )
  );
}
