import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { V1Lease, V1Pod } from '@kubernetes/client-node';
import { apiFailure, withServer } from './harness.js';
import { isJsonObject } from './json.js';
import { PODDISRUPTIONBUDGETS, PODS, SIDECARSETS } from './resources.js';
import type { KubeObject } from './types.js';

const SS = { group: 'apps.kruise.io', version: 'v1beta1', plural: 'sidecarsets' } as const;

function podBody(name: string, labels: Record<string, string> = { app: 'web' }): V1Pod {
  return {
    metadata: { name, labels },
    spec: {
      containers: [
        { name: 'app', image: 'app:1' },
        { name: 'logtail', image: 'logtail:0.16.16' },
      ],
    },
  };
}

function sidecarSetBody(name: string): KubeObject {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [{ name: 'logtail', image: 'logtail:0.16.16' }],
    },
  };
}

function asObject(value: unknown): KubeObject {
  assert.ok(isJsonObject(value) && isJsonObject(value['metadata']), 'a Kubernetes object');
  return value as KubeObject;
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const strategicPatch = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

describe('fake API server with @kubernetes/client-node', () => {
  it('creates, reads, lists across namespaces and deletes pods', async () => {
    await withServer(async (server) => {
      const core = server.kubeConfig().makeApiClient(CoreV1Api);
      await core.createNamespace({ body: { metadata: { name: 'team-a' } } });
      const created = await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
      await core.createNamespacedPod({ namespace: 'team-a', body: podBody('b') });
      assert.equal(created.status?.phase, 'Pending');
      assert.ok(created.metadata?.uid);
      const read = await core.readNamespacedPod({ name: 'a', namespace: 'default' });
      assert.equal(read.metadata?.resourceVersion, created.metadata.resourceVersion);
      const all = await core.listPodForAllNamespaces();
      assert.deepEqual(
        all.items.map((p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`),
        ['default/a', 'team-a/b'],
      );
      assert.equal(all.metadata?.resourceVersion, String(server.store.resourceVersion()));
      const inTeam = await core.listNamespacedPod({ namespace: 'team-a' });
      assert.equal(inTeam.items.length, 1);
      await core.deleteNamespacedPod({ name: 'a', namespace: 'default' });
      const missing = await apiFailure(core.readNamespacedPod({ name: 'a', namespace: 'default' }));
      assert.equal(missing.code, 404);
      assert.equal(missing.status['kind'], 'Status');
      assert.equal(missing.status['reason'], 'NotFound');
      assert.equal(missing.status['message'], 'pods "a" not found');
      const exists = await apiFailure(
        core.createNamespacedPod({ namespace: 'team-a', body: podBody('b') }),
      );
      assert.equal(exists.code, 409);
      assert.equal(exists.status['reason'], 'AlreadyExists');
      const noNamespace = await apiFailure(
        core.createNamespacedPod({ namespace: 'nope', body: podBody('c') }),
      );
      assert.equal(noNamespace.code, 404);
    });
  });

  it('applies JSON patch, merge patch and strategic merge patch to pods', async () => {
    await withServer(async (server) => {
      const core = server.kubeConfig().makeApiClient(CoreV1Api);
      await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
      const json = await core.patchNamespacedPod({
        name: 'a',
        namespace: 'default',
        body: [
          { op: 'test', path: '/spec/containers/1/name', value: 'logtail' },
          { op: 'replace', path: '/spec/containers/1/image', value: 'logtail:0.16.18' },
        ],
      });
      assert.equal(json.spec?.containers[1]?.image, 'logtail:0.16.18');
      assert.equal(json.metadata?.generation, 2);
      const merged = await core.patchNamespacedPod(
        {
          name: 'a',
          namespace: 'default',
          body: { metadata: { annotations: { note: 'x' }, labels: { app: null } } },
        },
        mergePatch,
      );
      assert.deepEqual(merged.metadata?.annotations, { note: 'x' });
      assert.deepEqual(merged.metadata.labels, {});
      assert.equal(merged.metadata.generation, 2, 'metadata changes leave generation alone');
      const strategic = await core.patchNamespacedPod(
        {
          name: 'a',
          namespace: 'default',
          body: { spec: { containers: [{ name: 'app', image: 'app:2' }] } },
        },
        strategicPatch,
      );
      assert.deepEqual(
        strategic.spec?.containers.map((c) => `${c.name}=${c.image ?? ''}`),
        ['app=app:2', 'logtail=logtail:0.16.18'],
      );
      const patches = server.control
        .requests((r) => r.method === 'PATCH')
        .map((r) => r.contentType);
      assert.deepEqual(patches, [
        PatchStrategy.JsonPatch,
        PatchStrategy.MergePatch,
        PatchStrategy.StrategicMergePatch,
      ]);
      const failedTest = await apiFailure(
        core.patchNamespacedPod({
          name: 'a',
          namespace: 'default',
          body: [{ op: 'test', path: '/spec/containers/1/image', value: 'logtail:0.16.16' }],
        }),
      );
      assert.equal(failedTest.code, 422);
      const forbidden = await apiFailure(
        core.patchNamespacedPod(
          {
            name: 'a',
            namespace: 'default',
            body: { spec: { containers: [{ name: 'app', command: ['sh'] }] } },
          },
          strategicPatch,
        ),
      );
      assert.equal(forbidden.code, 422);
      assert.match(
        JSON.stringify(forbidden.status['message']),
        /pod updates may not change fields/,
      );
    });
  });

  it('answers 409 Conflict to a PUT or a patch carrying a stale resourceVersion', async () => {
    await withServer(async (server) => {
      const core = server.kubeConfig().makeApiClient(CoreV1Api);
      const first = await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
      const second = await core.replaceNamespacedPod({
        name: 'a',
        namespace: 'default',
        body: { ...first, metadata: { ...first.metadata, labels: { app: 'web', v: '2' } } },
      });
      assert.notEqual(second.metadata?.resourceVersion, first.metadata?.resourceVersion);
      const stalePut = await apiFailure(
        core.replaceNamespacedPod({
          name: 'a',
          namespace: 'default',
          body: { ...first, metadata: { ...first.metadata, labels: { v: '3' } } },
        }),
      );
      assert.equal(stalePut.code, 409);
      assert.equal(stalePut.status['reason'], 'Conflict');
      const staleMerge = await apiFailure(
        core.patchNamespacedPod(
          {
            name: 'a',
            namespace: 'default',
            body: {
              metadata: { resourceVersion: first.metadata?.resourceVersion, labels: { v: '4' } },
            },
          },
          mergePatch,
        ),
      );
      assert.equal(staleMerge.code, 409);
      const staleJson = await apiFailure(
        core.patchNamespacedPod({
          name: 'a',
          namespace: 'default',
          body: [
            {
              op: 'replace',
              path: '/metadata/resourceVersion',
              value: first.metadata?.resourceVersion,
            },
            { op: 'replace', path: '/spec/containers/0/image', value: 'app:9' },
          ],
        }),
      );
      assert.equal(staleJson.code, 409);
      const fresh = await core.patchNamespacedPod(
        {
          name: 'a',
          namespace: 'default',
          body: {
            metadata: { resourceVersion: second.metadata?.resourceVersion, labels: { v: '5' } },
          },
        },
        mergePatch,
      );
      assert.equal(fresh.metadata?.labels?.['v'], '5');
      assert.equal(server.store.get(PODS, 'default', 'a')?.metadata.labels?.['v'], '5');
    });
  });

  it('keeps status and spec apart for SidecarSets through the status subresource', async () => {
    await withServer(async (server) => {
      const custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
      const created = asObject(
        await custom.createClusterCustomObject({
          ...SS,
          body: {
            ...sidecarSetBody('logtail'),
            status: { matchedPods: 9, updatedPods: 0, readyPods: 0 },
          },
        }),
      );
      assert.equal(created['status'], undefined, 'status is dropped on create');
      assert.equal(created.metadata.generation, 1);
      const status = asObject(
        await custom.patchClusterCustomObjectStatus(
          {
            ...SS,
            name: 'logtail',
            body: {
              status: { matchedPods: 1, updatedPods: 0, readyPods: 0, observedGeneration: 1 },
              spec: { containers: [] },
            },
          },
          mergePatch,
        ),
      );
      assert.deepEqual(status['status'], {
        matchedPods: 1,
        updatedPods: 0,
        readyPods: 0,
        observedGeneration: 1,
      });
      assert.deepEqual(status['spec'], created['spec'], 'a status write leaves the spec alone');
      assert.equal(status.metadata.generation, 1);
      const spec = asObject(
        await custom.patchClusterCustomObject({
          ...SS,
          name: 'logtail',
          body: [
            { op: 'replace', path: '/spec/containers/0/image', value: 'logtail:0.16.18' },
            {
              op: 'add',
              path: '/status',
              value: { matchedPods: 42, updatedPods: 0, readyPods: 0 },
            },
          ],
        }),
      );
      assert.equal(spec.metadata.generation, 2);
      assert.deepEqual(
        spec['status'],
        { matchedPods: 1, updatedPods: 0, readyPods: 0, observedGeneration: 1 },
        'a main write leaves the status alone',
      );
      const replaced = asObject(
        await custom.replaceClusterCustomObjectStatus({
          ...SS,
          name: 'logtail',
          body: {
            ...spec,
            status: { matchedPods: 2, updatedPods: 0, readyPods: 0, observedGeneration: 2 },
          },
        }),
      );
      assert.equal(replaced.metadata.generation, 2);
      const stale = await apiFailure(
        custom.replaceClusterCustomObjectStatus({
          ...SS,
          name: 'logtail',
          body: { ...spec, status: { matchedPods: 3, updatedPods: 0, readyPods: 0 } },
        }),
      );
      assert.equal(stale.code, 409);
      const list = asObject(await custom.listClusterCustomObject({ ...SS }));
      const items = list['items'];
      assert.ok(Array.isArray(items) && items.length === 1);
      assert.equal(list['kind'], 'SidecarSetList');
      assert.equal(server.store.get(SIDECARSETS, '', 'logtail')?.metadata.generation, 2);
    });
  });

  it('filters lists with label and field selectors', async () => {
    await withServer(async (server) => {
      const core = server.kubeConfig().makeApiClient(CoreV1Api);
      await core.createNamespacedPod({
        namespace: 'default',
        body: podBody('a', { app: 'web', track: 'canary' }),
      });
      await core.createNamespacedPod({ namespace: 'default', body: podBody('b', { app: 'web' }) });
      await core.createNamespacedPod({ namespace: 'default', body: podBody('c', { app: 'db' }) });
      server.store.mutate(PODS, 'default', 'b', (p) => {
        p['spec'] = { ...(isJsonObject(p['spec']) ? p['spec'] : {}), nodeName: 'node-1' };
      });
      const names = (pods: { items: V1Pod[] }): string[] =>
        pods.items.map((p) => p.metadata?.name ?? '');
      assert.deepEqual(
        names(await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' })),
        ['a', 'b'],
      );
      assert.deepEqual(
        names(
          await core.listNamespacedPod({
            namespace: 'default',
            labelSelector: 'app=web,track notin (canary)',
          }),
        ),
        ['b'],
      );
      assert.deepEqual(
        names(await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=node-1' })),
        ['b'],
      );
      assert.deepEqual(
        names(
          await core.listNamespacedPod({ namespace: 'default', fieldSelector: 'metadata.name!=a' }),
        ),
        ['b', 'c'],
      );
      const bad = await apiFailure(
        core.listNamespacedPod({ namespace: 'default', fieldSelector: 'spec.image=x' }),
      );
      assert.equal(bad.code, 400);
      const page = await core.listNamespacedPod({ namespace: 'default', limit: 2 });
      assert.deepEqual(names(page), ['a', 'b']);
      const rest = await core.listNamespacedPod({
        namespace: 'default',
        limit: 2,
        _continue: page.metadata?._continue ?? '',
      });
      assert.deepEqual(names(rest), ['c']);
    });
  });

  it('creates and renews Leases with optimistic concurrency', async () => {
    await withServer(async (server) => {
      const leases = server.kubeConfig().makeApiClient(CoordinationV1Api);
      const body: V1Lease = {
        metadata: { name: 'sidecarset-controller', namespace: 'kube-system' },
        spec: {
          holderIdentity: 'replica-a',
          leaseDurationSeconds: 15,
          renewTime: new Date('2024-01-01T00:00:00.000Z'),
        },
      };
      const created = await leases.createNamespacedLease({ namespace: 'kube-system', body });
      const again = await apiFailure(
        leases.createNamespacedLease({ namespace: 'kube-system', body }),
      );
      assert.equal(again.code, 409);
      assert.equal(again.status['reason'], 'AlreadyExists');
      const renewed = await leases.replaceNamespacedLease({
        name: 'sidecarset-controller',
        namespace: 'kube-system',
        body: {
          ...created,
          spec: { ...created.spec, renewTime: new Date('2024-01-01T00:00:05.000Z') },
        },
      });
      assert.equal(renewed.spec?.holderIdentity, 'replica-a');
      // Replica b read the lease before a renewed it: its takeover must fail.
      const takeover = await apiFailure(
        leases.replaceNamespacedLease({
          name: 'sidecarset-controller',
          namespace: 'kube-system',
          body: { ...created, spec: { ...created.spec, holderIdentity: 'replica-b' } },
        }),
      );
      assert.equal(takeover.code, 409);
      const current = await leases.readNamespacedLease({
        name: 'sidecarset-controller',
        namespace: 'kube-system',
      });
      assert.equal(current.spec?.holderIdentity, 'replica-a');
      // client-node types renewTime (a MicroTime) as Date but hands back the string it received.
      assert.equal(new Date(current.spec.renewTime ?? 0).toISOString(), '2024-01-01T00:00:05.000Z');
    });
  });

  it('records Events', async () => {
    await withServer(async (server) => {
      const core = server.kubeConfig().makeApiClient(CoreV1Api);
      await core.createNamespacedEvent({
        namespace: 'default',
        body: {
          metadata: { generateName: 'logtail.' },
          involvedObject: {
            kind: 'SidecarSet',
            name: 'logtail',
            apiVersion: 'apps.kruise.io/v1beta1',
          },
          reason: 'SidecarUpgraded',
          message: 'pod default/a upgraded',
          type: 'Normal',
          source: { component: 'sidecarset-controller' },
        },
      });
      const events = await core.listNamespacedEvent({
        namespace: 'default',
        fieldSelector: 'involvedObject.name=logtail,reason=SidecarUpgraded',
      });
      assert.equal(events.items.length, 1);
      assert.match(events.items[0]?.metadata.name ?? '', /^logtail\./);
      assert.equal(events.items[0]?.message, 'pod default/a upgraded');
    });
  });

  it('serves discovery, so KubernetesObjectApi works too', async () => {
    await withServer(async (server) => {
      const objects = server.kubeConfig().makeApiClient(KubernetesObjectApi);
      await objects.create({
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'SidecarSet',
        metadata: { name: 's' },
        spec: {},
      });
      const read = await objects.read({
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'SidecarSet',
        metadata: { name: 's' },
      });
      assert.equal(read.metadata?.name, 's');
      const pod = await objects.create({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p', namespace: 'default' },
        spec: { containers: [] },
      });
      assert.equal(pod.metadata.namespace, 'default');
    });
  });

  it('evicts a pod with createNamespacedPodEviction; a 429 carries the Status', async () => {
    await withServer(async (server) => {
      const core = server.kubeConfig().makeApiClient(CoreV1Api);
      const created = await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
      server.store.mutate(PODS, 'default', 'a', (pod) => {
        pod['status'] = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
      });
      server.store.create(PODDISRUPTIONBUDGETS, 'default', {
        metadata: { name: 'web' },
        spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } },
      });
      server.store.mutate(PODDISRUPTIONBUDGETS, 'default', 'web', (pdb) => {
        pdb['status'] = {
          observedGeneration: 1,
          disruptionsAllowed: 0,
          desiredHealthy: 1,
          currentHealthy: 1,
        };
      });
      const eviction = (uid: string) => ({
        name: 'a',
        namespace: 'default',
        body: {
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name: 'a', namespace: 'default' },
          deleteOptions: { preconditions: { uid } },
        },
      });
      const uid = created.metadata?.uid ?? '';
      const refused = await apiFailure(core.createNamespacedPodEviction(eviction(uid)));
      assert.equal(refused.code, 429);
      assert.equal(
        refused.status['message'],
        "Cannot evict pod as it would violate the pod's disruption budget.",
      );
      const details = refused.status['details'];
      assert.deepEqual(isJsonObject(details) ? details['causes'] : undefined, [
        {
          reason: 'DisruptionBudget',
          message: 'The disruption budget web needs 1 healthy pods and has 1 currently',
        },
      ]);

      server.store.delete(PODDISRUPTIONBUDGETS, 'default', 'web');
      const stale = await apiFailure(core.createNamespacedPodEviction(eviction('other')));
      assert.equal(stale.code, 409);
      await core.createNamespacedPodEviction(eviction(uid));
      assert.equal(server.store.get(PODS, 'default', 'a'), undefined, 'unscheduled: gone at once');
    });
  });
});
