/**
 * In-place rollout scenarios written against the Kubernetes API only, so the same test code runs
 * on both backends: the in-process fake API server (test/controller/rollout-scenarios.test.ts) and
 * the real kube-apiserver (test/e2e/rollout-scenarios.e2e.ts). Each scenario works in a namespace
 * of its own with a SidecarSet limited to it (`spec.namespace`), so scenarios do not see each other.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { apiFailure } from '../fake-apiserver/harness.js';
import type { ImageFailure } from '../fake-apiserver/kubelet-status.js';
import { eventually } from '../support/eventually.js';
import { replaceSidecarSet } from '../support/replace-sidecarset.js';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  Watch,
  setHeaderOptions,
} from '@kubernetes/client-node';

/** The test kubelets (FakeKubelet, ApiKubelet): images made to fail, and healed. */
export interface ScenarioKubelet {
  /** Never ready: ImagePullBackOff (default), or CrashLoopBackOff with a climbing restartCount. */
  failImage(image: string, reason?: ImageFailure): void;
  healImage(image: string): void;
}

/** What a scenario starts from. */
interface SetUp {
  readonly pods: number;
  readonly strategy?: Record<string, unknown>;
  /** More of the SidecarSet's spec. */
  readonly spec?: Record<string, unknown>;
  readonly labels?: (i: number) => Record<string, string>;
  /** More of pod i's spec. */
  readonly podSpec?: (i: number) => Record<string, unknown>;
  /** The SidecarSet's annotations (the health gate's settings). */
  readonly annotations?: Record<string, string>;
}

/** A cluster with our webhook and controller running, and a kubelet that reports pod status. */
export interface ScenarioBackend {
  /** An admin's KubeConfig. */
  kubeConfig(): KubeConfig;
  readonly kubelet: ScenarioKubelet;
  /** Creates a namespace that pods can be created in. */
  createNamespace(name: string): Promise<void>;
  /** The controller's Prometheus metrics, as text. */
  metrics(): Promise<string>;
  /**
   * Resolves once pods of this namespace are sent to the webhook: with a scoped pod webhook
   * (docs/adr/0012-scoped-pod-webhook.md), a moment after a SidecarSet for it was created.
   */
  podsOfNamespaceSentToWebhook?(namespace: string): Promise<void>;
}

export interface PodJson {
  metadata: {
    name: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: { containers: { name: string; image: string }[] };
  status?: {
    containerStatuses?: { name: string; image: string; ready: boolean; restartCount: number }[];
    conditions?: PodCondition[];
  };
}

export interface PodCondition {
  type: string;
  status: string;
  message?: string;
}

export interface SidecarSetCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

interface SidecarSetJson {
  metadata: { generation?: number; annotations?: Record<string, string> };
  spec: Record<string, unknown> & { containers: { image: string }[] };
  status?: {
    observedGeneration?: number;
    matchedPods?: number;
    updatedPods?: number;
    readyPods?: number;
    updatedReadyPods?: number;
    collisionCount?: number;
    conditions?: SidecarSetCondition[];
  };
}

/** Where serve keeps the SidecarSets' ControllerRevisions (as deployed). */
const REVISIONS_NAMESPACE = 'sidecarset-system';
const SIDECARSETS = { group: 'apps.kruise.io', version: 'v1beta1', plural: 'sidecarsets' };

export function podReady(pod: PodJson): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

/** The status of a pod's condition of this type. */
export function conditionOf(pod: PodJson, type: string): PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === type);
}

/** The image a pod's spec gives its sidecar, the image it runs and whether that is ready. */
export function sidecar(
  pod: PodJson,
  name = 'agent',
): { spec?: string; running?: string; ready: boolean } {
  const spec = pod.spec.containers.find((c) => c.name === name)?.image;
  const status = pod.status?.containerStatuses?.find((c) => c.name === name);
  return {
    ...(spec === undefined ? {} : { spec }),
    ...(status === undefined ? {} : { running: status.image }),
    ready: status?.ready === true,
  };
}

let counter = 0;

/** One scenario's namespace, SidecarSet "agent-N" (image agent:1 in container "agent") and pods. */
class Scenario {
  readonly name: string;
  readonly namespace: string;
  private readonly core: CoreV1Api;
  private readonly custom: CustomObjectsApi;
  private readonly apps: AppsV1Api;
  private readonly kubeConfig: KubeConfig;
  private readonly backend: ScenarioBackend;
  private readonly newImage: string;
  /** The most pods seen at once whose sidecar spec is `newImage` but not running it ready. */
  worstUnavailable = 0;
  /**
   * The most pods seen at once that are unavailable for any reason: not Ready, or their sidecar
   * not running its spec image ready (whichever image that is).
   */
  worstAnyUnavailable = 0;
  /** Every version of every pod the watch delivered, in order. */
  readonly history: PodJson[] = [];
  private watchAbort?: () => void;

  constructor(backend: ScenarioBackend, newImage: string) {
    this.backend = backend;
    this.newImage = newImage;
    counter++;
    this.name = `agent-${process.pid}-${counter}`;
    this.namespace = this.name;
    this.kubeConfig = backend.kubeConfig();
    this.core = this.kubeConfig.makeApiClient(CoreV1Api);
    this.custom = this.kubeConfig.makeApiClient(CustomObjectsApi);
    this.apps = this.kubeConfig.makeApiClient(AppsV1Api);
  }

  /** The namespace, the SidecarSet, and its pods (web-00, web-01, …) injected and ready. */
  async setUp(options: SetUp): Promise<void> {
    await this.backend.createNamespace(this.namespace);
    await this.createSidecarSet(
      { updateStrategy: options.strategy ?? {}, ...options.spec },
      options.annotations,
    );
    await this.backend.podsOfNamespaceSentToWebhook?.(this.namespace);
    for (let i = 0; i < options.pods; i++) {
      await this.core.createNamespacedPod({
        namespace: this.namespace,
        body: {
          metadata: {
            name: `web-${String(i).padStart(2, '0')}`,
            labels: { app: 'web', ...options.labels?.(i) },
          },
          spec: { containers: [{ name: 'web', image: 'nginx:1.27' }], ...options.podSpec?.(i) },
        },
      });
    }
    await eventually(
      async () => (await this.pods()).every((p) => podReady(p) && p.spec.containers.length > 1),
      'pods injected and ready',
    );
    await this.watchPods();
  }

  async createSidecarSet(
    spec: Record<string, unknown>,
    annotations: Record<string, string> = {},
  ): Promise<void> {
    await this.custom.createClusterCustomObject({
      ...SIDECARSETS,
      body: {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'SidecarSet',
        metadata: { name: this.name, annotations },
        spec: {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': this.namespace } },
          selector: { matchLabels: { app: 'web' } },
          containers: [{ name: 'agent', image: 'agent:1' }],
          ...spec,
        },
      },
    });
  }

  async deleteSidecarSet(): Promise<void> {
    await this.custom.deleteClusterCustomObject({ ...SIDECARSETS, name: this.name });
  }

  async pods(): Promise<PodJson[]> {
    const list = await this.core.listNamespacedPod({ namespace: this.namespace });
    return list.items as unknown as PodJson[];
  }

  /** This SidecarSet's ControllerRevisions (kept in sidecarset-system, as deployed). */
  async revisions(): Promise<{ name: string; data: unknown; revision: number }[]> {
    const list = await this.apps.listNamespacedControllerRevision({
      namespace: REVISIONS_NAMESPACE,
      labelSelector: `kruise.io/sidecarset-name=${this.name}`,
    });
    return list.items.map((r) => ({
      name: r.metadata?.name ?? '',
      data: r.data as unknown,
      revision: r.revision,
    }));
  }

  /** Takes a revision's name: deletes it and creates another object, unlabelled, under it. */
  async squatRevisionName(name: string): Promise<void> {
    await this.apps.deleteNamespacedControllerRevision({ namespace: REVISIONS_NAMESPACE, name });
    await this.apps.createNamespacedControllerRevision({
      namespace: REVISIONS_NAMESPACE,
      body: { metadata: { name }, data: { someone: 'else' }, revision: 1 },
    });
  }

  async sidecarSet(): Promise<SidecarSetJson> {
    return (await this.custom.getClusterCustomObject({
      ...SIDECARSETS,
      name: this.name,
    })) as SidecarSetJson;
  }

  /** Read, change, replace; read again when the controller wrote the status in between (409). */
  update(change: (spec: SidecarSetJson['spec']) => void): Promise<void> {
    return replaceSidecarSet(this.custom, this.name, change);
  }

  /** Sets one annotation of the SidecarSet (a merge patch, as `kubectl annotate`). */
  async annotate(key: string, value: string): Promise<void> {
    await this.custom.patchClusterCustomObject(
      { ...SIDECARSETS, name: this.name, body: { metadata: { annotations: { [key]: value } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  /** The SidecarSet's RolloutPaused condition. */
  async rolloutPaused(): Promise<SidecarSetCondition | undefined> {
    return (await this.sidecarSet()).status?.conditions?.find((c) => c.type === 'RolloutPaused');
  }

  /** Waits for RolloutPaused with this status and reason. */
  async waitRolloutPaused(status: string, reason: string): Promise<SidecarSetCondition> {
    let found: SidecarSetCondition | undefined;
    await eventually(async () => {
      found = await this.rolloutPaused();
      return found?.status === status && found.reason === reason;
    }, `RolloutPaused ${status} ${reason}`);
    if (found === undefined) throw new Error('no RolloutPaused condition');
    return found;
  }

  /** Events about this SidecarSet with this reason (a cluster-scoped object's go to default). */
  async events(reason: string): Promise<{ type?: string; message?: string; count?: number }[]> {
    const list = await this.core.listNamespacedEvent({ namespace: 'default' });
    return list.items.filter(
      (e) =>
        e.involvedObject.kind === 'SidecarSet' &&
        e.involvedObject.name === this.name &&
        e.reason === reason,
    );
  }

  /** The metric sidecarset_rollout_paused for this SidecarSet, or undefined when not exported. */
  async pausedMetric(): Promise<number | undefined> {
    const line = (await this.backend.metrics())
      .split('\n')
      .find((l) => l.startsWith(`sidecarset_rollout_paused{sidecarset="${this.name}"}`));
    return line === undefined ? undefined : Number(line.split(' ').at(-1));
  }

  /** Pods whose sidecar spec is this image. */
  async onImage(image: string): Promise<PodJson[]> {
    return (await this.pods()).filter((p) => sidecar(p).spec === image);
  }

  async deletePod(name: string): Promise<void> {
    await this.core.deleteNamespacedPod({ name, namespace: this.namespace, gracePeriodSeconds: 0 });
  }

  setImage(image: string): Promise<void> {
    return this.update((spec) => {
      (spec.containers[0] as { image: string }).image = image;
    });
  }

  /** Runs `body` while the kubelet makes containers on `image` fail this way, then heals it. */
  async whileImageFails(
    image: string,
    reason: ImageFailure,
    body: () => Promise<void>,
  ): Promise<void> {
    this.backend.kubelet.failImage(image, reason);
    try {
      await body();
    } finally {
      this.backend.kubelet.healImage(image);
    }
  }

  /** Pods whose sidecar runs the new image ready. */
  async upgraded(): Promise<PodJson[]> {
    return (await this.pods()).filter(
      (p) => sidecar(p).running === this.newImage && sidecar(p).ready,
    );
  }

  async waitUpgraded(count: number): Promise<void> {
    await eventually(
      async () => (await this.upgraded()).length === count,
      `${count} pods upgraded`,
    );
  }

  /** Waits until the status describes the current generation with these counts. */
  async waitStatus(expected: NonNullable<SidecarSetJson['status']>): Promise<void> {
    let last: unknown;
    await eventually(
      async () => {
        const set = await this.sidecarSet();
        last = set.status;
        return (
          set.status?.observedGeneration === set.metadata.generation &&
          Object.entries(expected).every(
            ([key, value]) => set.status?.[key as keyof typeof expected] === value,
          )
        );
      },
      () => `status ${JSON.stringify(expected)} (last: ${JSON.stringify(last)})`,
    );
  }

  /** Watches the pods: every version seen goes to `history`, and the worst unavailability. */
  private async watchPods(): Promise<void> {
    const state = new Map<string, PodJson>();
    const request = await new Watch(this.kubeConfig).watch(
      `/api/v1/namespaces/${this.namespace}/pods`,
      {},
      (type: string, pod: PodJson) => {
        this.history.push(pod);
        if (type === 'DELETED') state.delete(pod.metadata.name);
        else state.set(pod.metadata.name, pod);
        const pods = [...state.values()];
        const unavailable = pods.filter((p) => {
          const s = sidecar(p);
          return s.spec === this.newImage && !(s.running === this.newImage && s.ready);
        }).length;
        this.worstUnavailable = Math.max(this.worstUnavailable, unavailable);
        const any = pods.filter((p) => {
          const s = sidecar(p);
          return !(podReady(p) && s.running === s.spec && s.ready);
        }).length;
        this.worstAnyUnavailable = Math.max(this.worstAnyUnavailable, any);
      },
      () => undefined,
    );
    this.watchAbort = () => {
      request.abort();
    };
  }

  close(): void {
    this.watchAbort?.();
  }
}

async function withScenario(
  backend: ScenarioBackend,
  newImage: string,
  body: (s: Scenario) => Promise<void>,
): Promise<void> {
  const scenario = new Scenario(backend, newImage);
  try {
    await body(scenario);
  } finally {
    scenario.close();
  }
}

/** The message of a refused request's Status. */
function failureMessage(failure: { status: Record<string, unknown> }): string {
  const text = failure.status['message'];
  return typeof text === 'string' ? text : '';
}

/** A short pause, to show that something does NOT happen (paused, partition). */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1500));

/** Registers the scenarios as tests; `backend` is called once the tests run. */
export function rolloutScenarios(backend: () => ScenarioBackend): void {
  it('upgrades every matched pod in place, one at a time by default; the status follows', async () => {
    await withScenario(backend(), 'agent:2', async (s) => {
      await s.setUp({ pods: 4 });
      await s.waitStatus({ matchedPods: 4, updatedPods: 4, readyPods: 4 });
      await s.setImage('agent:2');
      await s.waitUpgraded(4);
      await s.waitStatus({ matchedPods: 4, updatedPods: 4, readyPods: 4, updatedReadyPods: 4 });
      for (const pod of await s.pods()) {
        const web = pod.status?.containerStatuses?.find((c) => c.name === 'web');
        assert.equal(web?.restartCount, 0, `${pod.metadata.name}: the app container kept running`);
      }
      assert.equal(s.worstUnavailable, 1, 'maxUnavailable defaults to 1');
    });
  });

  it('maxUnavailable: never more pods unavailable than it allows', async () => {
    await withScenario(backend(), 'agent:2', async (s) => {
      await s.setUp({ pods: 6, strategy: { maxUnavailable: 2 } });
      await s.setImage('agent:2');
      await s.waitUpgraded(6);
      assert.ok(s.worstUnavailable <= 2, `at most 2 unavailable; saw ${s.worstUnavailable}`);
    });
  });

  it('a failing image stops the rollout at maxUnavailable; healed, it finishes', async () => {
    await withScenario(backend(), 'agent:broken', async (s) => {
      await s.setUp({ pods: 5, strategy: { maxUnavailable: 2 } });
      await s.whileImageFails('agent:broken', 'ImagePullBackOff', async () => {
        await s.setImage('agent:broken');
        await eventually(
          async () =>
            (await s.pods()).filter((p) => sidecar(p).spec === 'agent:broken').length === 2,
          'two pods on the failing image',
        );
        await settle();
        const onBroken = (await s.pods()).filter((p) => sidecar(p).spec === 'agent:broken');
        assert.equal(onBroken.length, 2, 'the rollout held at the budget');
        assert.ok(onBroken.every((p) => !sidecar(p).ready));
      });
      await s.waitUpgraded(5);
    });
  });

  it('maxUnavailable holds across back-to-back image changes: pods still restarting count', async () => {
    await withScenario(backend(), 'agent:3', async (s) => {
      await s.setUp({ pods: 6, strategy: { maxUnavailable: 2 } });
      // agent:2 never comes up: its first two pods are still restarting for it when agent:3 is
      // published.
      await s.whileImageFails('agent:2', 'ImagePullBackOff', async () => {
        await s.setImage('agent:2');
        // The status counts both writes: the controller's cache has seen them.
        await s.waitStatus({ matchedPods: 6, updatedPods: 2 });
        assert.equal((await s.onImage('agent:2')).length, 2, 'the rollout held at the budget');
        await s.setImage('agent:3');
        await s.waitUpgraded(6);
      });
      assert.ok(
        s.worstAnyUnavailable <= 2,
        `at most 2 pods unavailable across both changes; saw ${s.worstAnyUnavailable}`,
      );
    });
  });

  it('partition keeps that many pods on the old sidecar until it is lowered', async () => {
    await withScenario(backend(), 'agent:2', async (s) => {
      await s.setUp({ pods: 5, strategy: { maxUnavailable: 5, partition: 3 } });
      await s.setImage('agent:2');
      await s.waitUpgraded(2);
      await s.waitStatus({ matchedPods: 5, updatedPods: 2 });
      await settle();
      assert.equal((await s.upgraded()).length, 2, 'partition 3 of 5: two upgraded');
      await s.update((spec) => {
        (spec['updateStrategy'] as Record<string, unknown>)['partition'] = 0;
      });
      await s.waitUpgraded(5);
      await s.waitStatus({ matchedPods: 5, updatedPods: 5, readyPods: 5 });
    });
  });

  it('paused: nothing is upgraded until the rollout is resumed', async () => {
    await withScenario(backend(), 'agent:2', async (s) => {
      await s.setUp({ pods: 3, strategy: { maxUnavailable: 3, paused: true } });
      await s.setImage('agent:2');
      await s.waitStatus({ matchedPods: 3, updatedPods: 0 });
      await settle();
      assert.equal(
        (await s.pods()).filter((p) => sidecar(p).spec === 'agent:2').length,
        0,
        'no pod touched while paused',
      );
      await s.update((spec) => {
        (spec['updateStrategy'] as Record<string, unknown>)['paused'] = false;
      });
      await s.waitUpgraded(3);
    });
  });

  it("patchPodMetadata: an upgraded pod gets the new revision's annotations", async () => {
    const key = 'example.com/agent-config';
    const patch = (value: string): unknown[] => [
      { annotations: { [key]: value }, patchPolicy: 'Overwrite' },
    ];
    await withScenario(backend(), 'agent:2', async (s) => {
      await s.setUp({
        pods: 2,
        strategy: { maxUnavailable: 2 },
        spec: { patchPodMetadata: patch('v1') },
      });
      for (const pod of await s.pods()) assert.equal(pod.metadata.annotations?.[key], 'v1');
      await s.update((spec) => {
        (spec.containers[0] as { image: string }).image = 'agent:2';
        spec['patchPodMetadata'] = patch('v2');
      });
      await s.waitUpgraded(2);
      for (const pod of await s.pods()) assert.equal(pod.metadata.annotations?.[key], 'v2');
    });
  });

  it('revisions: a rollback renumbers the old revision, unused ones beyond the limit go', async () => {
    await withScenario(backend(), 'agent:2', async (s) => {
      await s.setUp({ pods: 0, spec: { revisionHistoryLimit: 2 } });
      const revisions = async (): Promise<{ image: string; revision: number }[]> =>
        (await s.revisions())
          .map((r) => ({
            image: JSON.stringify(r.data).match(/agent:\d/)?.[0] ?? '',
            revision: r.revision,
          }))
          .sort((a, b) => a.revision - b.revision);
      const latest = async (image: string): Promise<boolean> =>
        (await revisions()).at(-1)?.image === image;
      await eventually(() => latest('agent:1'), 'revision of agent:1');
      await s.setImage('agent:2');
      await eventually(() => latest('agent:2'), 'revision of agent:2');
      await s.setImage('agent:1');
      await eventually(() => latest('agent:1'), 'agent:1 renumbered as the newest');
      assert.deepEqual(
        (await revisions()).map((r) => r.image),
        ['agent:2', 'agent:1'],
        'the rollback reused the old revision',
      );
      await s.setImage('agent:3');
      await eventually(() => latest('agent:3'), 'revision of agent:3');
      await eventually(
        async () => (await revisions()).map((r) => r.image).join() === 'agent:1,agent:3',
        'the oldest revision deleted (revisionHistoryLimit 2)',
      );
    });
  });

  it('a revision name taken by another object: a collision is counted and another name used', async () => {
    await withScenario(backend(), 'agent:2', async (s) => {
      await s.setUp({ pods: 0 });
      let first = '';
      await eventually(async () => {
        first = (await s.revisions())[0]?.name ?? '';
        return first !== '';
      }, 'the first revision');
      // Recreated with the same spec, the SidecarSet wants the same revision name, which the
      // controller's cache (labelled revisions only) does not show as taken.
      await s.deleteSidecarSet();
      await s.squatRevisionName(first);
      await s.createSidecarSet({});
      await eventually(async () => {
        const revisions = await s.revisions();
        return revisions.length === 1 && revisions[0]?.name !== first;
      }, 'a revision under another name');
      await eventually(
        async () => (await s.sidecarSet()).status?.['collisionCount'] === 1,
        'status.collisionCount 1',
      );
    });
  });

  it('NotUpdate: the new image is recorded, running pods are never touched', async () => {
    await withScenario(backend(), 'agent:2', async (s) => {
      await s.setUp({ pods: 2, strategy: { type: 'NotUpdate' } });
      await s.setImage('agent:2');
      await s.waitStatus({ matchedPods: 2, updatedPods: 0 });
      await settle();
      assert.equal((await s.pods()).filter((p) => sidecar(p).spec === 'agent:2').length, 0);
    });
  });

  it('a change beyond the image is reported on the pods (SidecarSetUpgradable) and not applied', async () => {
    await withScenario(backend(), 'agent:2', async (s) => {
      await s.setUp({ pods: 2 });
      await s.update((spec) => {
        const agent = spec.containers[0] as Record<string, unknown>;
        agent['image'] = 'agent:2';
        agent['args'] = ['--verbose'];
      });
      await eventually(
        async () =>
          (await s.pods()).every((p) => {
            const condition = conditionOf(p, 'SidecarSetUpgradable');
            // The message maps each SidecarSet's name to whether the pod can be upgraded.
            return (
              condition?.status === 'False' &&
              condition.message === JSON.stringify({ [s.name]: false })
            );
          }),
        'SidecarSetUpgradable=False on both pods',
      );
      assert.equal((await s.pods()).filter((p) => sidecar(p).spec === 'agent:2').length, 0);
      await s.waitStatus({ matchedPods: 2, updatedPods: 0 });
    });
  });

  it('InPlaceUpdateReady readiness gate: closed before the image changes, open again after', async () => {
    await withScenario(backend(), 'agent:2', async (s) => {
      await s.setUp({
        pods: 1,
        podSpec: () => ({ readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] }),
      });
      await s.setImage('agent:2');
      await s.waitUpgraded(1);
      await eventually(
        async () => (await s.pods()).every((p) => podReady(p)),
        'the pod Ready again',
      );
      // Each change of the gate, with the sidecar image the pod had at that moment.
      const changes: string[] = [];
      for (const pod of s.history) {
        const change = `${conditionOf(pod, 'InPlaceUpdateReady')?.status ?? ''} ${sidecar(pod).spec ?? ''}`;
        if (changes.at(-1)?.split(' ')[0] !== change.split(' ')[0]) changes.push(change);
      }
      assert.deepEqual(changes.slice(-3), ['True agent:1', 'False agent:1', 'True agent:2']);
    });
  });

  it('hot upgrade: the new image in the empty slot, then the old slot back on the empty image', async () => {
    await withScenario(backend(), 'agent:2', async (s) => {
      const slots = (pod: PodJson): string =>
        ['agent-1', 'agent-2'].map((name) => sidecar(pod, name).spec ?? '').join();
      await s.setUp({
        pods: 2,
        strategy: { maxUnavailable: 2 },
        spec: {
          containers: [
            {
              name: 'agent',
              image: 'agent:1',
              upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' },
            },
          ],
        },
      });
      assert.deepEqual((await s.pods()).map(slots), ['agent:1,empty:1', 'agent:1,empty:1']);
      await s.setImage('agent:2');
      await eventually(
        async () =>
          (await s.pods()).every(
            (p) =>
              slots(p) === 'empty:1,agent:2' &&
              sidecar(p, 'agent-2').running === 'agent:2' &&
              podReady(p),
          ),
        'agent:2 in the second slot, the first back on the empty image',
      );
      for (const pod of await s.pods()) {
        assert.equal(
          pod.metadata.annotations?.['kruise.io/sidecarset-working-hotupgrade-container'],
          '{"agent":"agent-2"}',
        );
      }
      await s.waitStatus({ matchedPods: 2, updatedPods: 2, readyPods: 2 });
    });
  });

  it('a canary selector upgrades only the pods it selects', async () => {
    await withScenario(backend(), 'agent:2', async (s) => {
      await s.setUp({
        pods: 4,
        strategy: { maxUnavailable: 4, selector: { matchLabels: { canary: 'true' } } },
        labels: (i) => (i < 2 ? { canary: 'true' } : {}),
      });
      await s.setImage('agent:2');
      await s.waitUpgraded(2);
      await s.waitStatus({ matchedPods: 4, updatedPods: 2 });
      await settle();
      const upgraded = (await s.upgraded()).map((p) => p.metadata.name).sort();
      assert.deepEqual(upgraded, ['web-00', 'web-01']);
    });
  });

  describe('health-gated rollouts (docs/adr/0014-health-gated-rollouts.md)', () => {
    /** A short progress deadline, so that failures are judged within the test. */
    const fast = { 'sidecarset.dev/progress-deadline-seconds': '2' };

    it('a sidecar that never becomes ready on 20 pods, maxUnavailable 50%: paused at the threshold, said everywhere; a fixed spec finishes', async () => {
      await withScenario(backend(), 'agent:2', async (s) => {
        await s.setUp({
          pods: 20,
          strategy: { maxUnavailable: '50%' },
          annotations: { ...fast, 'sidecarset.dev/unhealthy-pods-to-pause': '3' },
        });
        await s.whileImageFails('agent:never-ready', 'ImagePullBackOff', async () => {
          await s.setImage('agent:never-ready');
          const paused = await s.waitRolloutPaused('True', 'UnhealthyPods');
          assert.match(paused.message ?? '', /^10 upgraded pod\(s\) failed \(pause at 3\): /);
          assert.match(
            paused.message ?? '',
            // As a real kubelet reports a failed pull: the old container's image (ImageNotRunning).
            /web-\d\d \(sidecar agent does not run agent:never-ready 2s after the upgrade\)/,
          );
          await settle();
          assert.equal((await s.onImage('agent:never-ready')).length, 10, 'no more pods touched');
          await eventually(async () => (await s.events('RolloutPaused')).length === 1, 'the event');
          const [event] = await s.events('RolloutPaused');
          assert.equal(event?.type, 'Warning');
          await eventually(
            async () => (await s.pausedMetric()) === 1,
            'sidecarset_rollout_paused 1',
          );
          // The fix: a new spec, which the failed (not ready) pods get first.
          await s.setImage('agent:2');
          await s.waitUpgraded(20);
          await s.waitRolloutPaused('False', 'Resumed');
          await eventually(
            async () => (await s.pausedMetric()) === 0,
            'sidecarset_rollout_paused 0',
          );
        });
      });
    });

    it('a crash-looping sidecar pauses the rollout on its restarts, long before the deadline; a fixed spec resumes it', async () => {
      await withScenario(backend(), 'agent:2', async (s) => {
        // The default deadline (600 s): only the crash-loop rule can fail a pod within the test.
        await s.setUp({
          pods: 6,
          strategy: { maxUnavailable: 3 },
          annotations: {
            'sidecarset.dev/max-sidecar-restarts': '1',
            'sidecarset.dev/unhealthy-pods-to-pause': '2',
          },
        });
        await s.whileImageFails('agent:crash-loop', 'CrashLoopBackOff', async () => {
          await s.setImage('agent:crash-loop');
          const paused = await s.waitRolloutPaused('True', 'UnhealthyPods');
          assert.match(paused.message ?? '', /^[23] upgraded pod\(s\) failed \(pause at 2\): /);
          assert.match(
            paused.message ?? '',
            /web-\d\d \(sidecar agent restarted \d+ times since the upgrade \(crash loop\)\)/,
          );
          await settle();
          const touched = await s.onImage('agent:crash-loop');
          assert.equal(touched.length, 3, 'the first wave (maxUnavailable 3) only');
          for (const pod of touched) {
            const agent = pod.status?.containerStatuses?.find((c) => c.name === 'agent');
            const web = pod.status?.containerStatuses?.find((c) => c.name === 'web');
            assert.equal(agent?.ready, false, pod.metadata.name);
            // The restart that applied the image, then more than max-sidecar-restarts (1).
            assert.ok(agent.restartCount >= 3, `${pod.metadata.name}: restarts climb`);
            assert.equal(web?.restartCount, 0, `${pod.metadata.name}: the app kept running`);
          }
          await s.setImage('agent:2');
          await s.waitUpgraded(6);
          await s.waitRolloutPaused('False', 'Resumed');
        });
      });
    });

    it('undo: the old image written back brings every pod back in place', async () => {
      await withScenario(backend(), 'agent:1', async (s) => {
        await s.setUp({ pods: 4, strategy: { maxUnavailable: 2 }, annotations: fast });
        const uids = (await s.pods()).map((p) => p.metadata.uid);
        await s.whileImageFails('agent:bad-undo', 'ImagePullBackOff', async () => {
          await s.setImage('agent:bad-undo');
          await s.waitRolloutPaused('True', 'UnhealthyPods');
          await s.setImage('agent:1');
          await eventually(
            async () =>
              (await s.pods()).every(
                (p) => sidecar(p).running === 'agent:1' && sidecar(p).ready && podReady(p),
              ),
            'every pod back on agent:1, ready',
          );
          const after = await s.pods();
          assert.deepEqual(
            after.map((p) => p.metadata.uid),
            uids,
            'the same pods: in place',
          );
          for (const pod of after) {
            const web = pod.status?.containerStatuses?.find((c) => c.name === 'web');
            assert.equal(web?.restartCount, 0, `${pod.metadata.name}: the app kept running`);
          }
          await s.waitRolloutPaused('False', 'Resumed');
        });
      });
    });

    it('stays paused when the failed pods recover, until a user resumes (sidecarset.dev/resumed-at)', async () => {
      await withScenario(backend(), 'agent:flaky', async (s) => {
        await s.setUp({ pods: 3, strategy: { maxUnavailable: 1 }, annotations: fast });
        await s.whileImageFails('agent:flaky', 'ImagePullBackOff', async () => {
          await s.setImage('agent:flaky');
          await s.waitRolloutPaused('True', 'UnhealthyPods');
        });
        await s.waitUpgraded(1);
        await settle();
        assert.equal((await s.onImage('agent:flaky')).length, 1, 'still paused: no more pods');
        assert.equal((await s.rolloutPaused())?.status, 'True');
        await s.annotate('sidecarset.dev/resumed-at', new Date().toISOString());
        await s.waitUpgraded(3);
        await s.waitRolloutPaused('False', 'Resumed');
      });
    });

    it('malformed tuning annotations are refused at admission, saying what is accepted', async () => {
      await withScenario(backend(), 'agent:2', async (s) => {
        const deadline = 'sidecarset.dev/progress-deadline-seconds';
        const toPause = 'sidecarset.dev/unhealthy-pods-to-pause';
        await s.setUp({ pods: 0, annotations: { [deadline]: '30' } });
        const changed = await apiFailure(s.annotate(deadline, 'ten'));
        assert.equal(changed.code, 422);
        assert.match(
          failureMessage(changed),
          /metadata\.annotations\[sidecarset\.dev\/progress-deadline-seconds\]: Invalid value: "ten": must be an integer number of seconds from 1 to 604800/,
        );
        assert.equal((await s.sidecarSet()).metadata.annotations?.[deadline], '30', 'unchanged');
        await s.deleteSidecarSet();
        const created = await apiFailure(s.createSidecarSet({}, { [toPause]: '150%' }));
        assert.equal(created.code, 422);
        assert.match(
          failureMessage(created),
          /metadata\.annotations\[sidecarset\.dev\/unhealthy-pods-to-pause\]: Invalid value: "150%": must be a number of pods .* or a percentage of matched pods from 1% to 100%/,
        );
      });
    });

    it('a healthy rollout never pauses', async () => {
      await withScenario(backend(), 'agent:2', async (s) => {
        await s.setUp({
          pods: 4,
          strategy: { maxUnavailable: 2 },
          // Short, yet longer than a busy machine may take to show an upgraded pod ready (1 s
          // failed the rollout on the real API server with 2 cores under load).
          annotations: { 'sidecarset.dev/progress-deadline-seconds': '3' },
        });
        await s.setImage('agent:2');
        await s.waitUpgraded(4);
        await settle();
        assert.equal(await s.rolloutPaused(), undefined);
        assert.deepEqual(await s.events('RolloutPaused'), []);
        assert.equal(await s.pausedMetric(), 0);
      });
    });

    it('a pod deleted mid-rollout does not count as failed', async () => {
      await withScenario(backend(), 'agent:2', async (s) => {
        await s.setUp({
          pods: 3,
          strategy: { maxUnavailable: 1 },
          annotations: { ...fast, 'sidecarset.dev/unhealthy-pods-to-pause': '2' },
        });
        await s.whileImageFails('agent:deleted', 'ImagePullBackOff', async () => {
          await s.setImage('agent:deleted');
          let first = '';
          await eventually(async () => {
            first = (await s.onImage('agent:deleted'))[0]?.metadata.name ?? '';
            return first !== '';
          }, 'a first pod on the failing image');
          await s.deletePod(first);
          // Its budget freed, a second pod gets the image and fails: one failure, threshold two.
          await eventually(
            async () => (await s.onImage('agent:deleted')).some((p) => p.metadata.name !== first),
            'a second pod on the failing image',
          );
          await new Promise((resolve) => setTimeout(resolve, 4000));
          assert.notEqual((await s.rolloutPaused())?.status, 'True', 'not paused');
          assert.equal((await s.onImage('agent:deleted')).length, 1, 'the budget holds the rest');
        });
      });
    });
  });
}
