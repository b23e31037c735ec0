/**
 * The API server behaviour our controller and webhook depend on, checked through client-node on
 * both backends: the fake API server (test/fake-apiserver/api-semantics.test.ts) and the real
 * kube-apiserver (test/e2e/api-semantics.e2e.ts). Where they disagree the fake is wrong: it is
 * fixed, or the difference is listed in test/fake-apiserver/README.md and left out of here.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';

import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  Watch,
  setHeaderOptions,
} from '@kubernetes/client-node';

import { apiFailure } from '../fake-apiserver/harness.js';

/** A cluster with the SidecarSet CRD and no webhooks. */
export interface SemanticsBackend {
  kubeConfig(): KubeConfig;
  createNamespace(name: string): Promise<void>;
}

const SS = { group: 'apps.kruise.io', version: 'v1beta1', plural: 'sidecarsets' } as const;
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const strategicPatch = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

/** The message of a failure's Status. */
function message(failure: { status: Record<string, unknown> }): string {
  const text = failure.status['message'];
  return typeof text === 'string' ? text : '';
}

let counter = 0;
const unique = (prefix: string): string => {
  counter++;
  return `${prefix}-${process.pid}-${counter}`;
};

function pod(name: string, labels: Record<string, string> = { app: 'web' }): V1Pod {
  return {
    metadata: { name, labels },
    spec: {
      containers: [
        { name: 'app', image: 'app:1' },
        { name: 'agent', image: 'agent:1' },
      ],
    },
  };
}

function sidecarSet(name: string): object {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      containers: [{ name: 'agent', image: 'agent:1' }],
    },
  };
}

interface CustomObject {
  metadata: { name: string; resourceVersion?: string; generation?: number };
  spec: { containers: { image: string }[] };
  status?: { matchedPods?: number };
}

/** Registers the checks as tests; `backend` is called once the tests run. */
export function apiSemantics(backend: () => SemanticsBackend): void {
  const clients = (): { core: CoreV1Api; custom: CustomObjectsApi; kc: KubeConfig } => {
    const kc = backend().kubeConfig();
    return { core: kc.makeApiClient(CoreV1Api), custom: kc.makeApiClient(CustomObjectsApi), kc };
  };
  const namespace = async (): Promise<string> => {
    const name = unique('api');
    await backend().createNamespace(name);
    return name;
  };

  it('create: the server sets uid, creationTimestamp and resourceVersion; a pod starts Pending', async () => {
    const { core } = clients();
    const ns = await namespace();
    const body = pod('p');
    body.status = { phase: 'Running' };
    const created = await core.createNamespacedPod({ namespace: ns, body });
    assert.ok(created.metadata?.uid);
    assert.ok(created.metadata.creationTimestamp);
    assert.ok(created.metadata.resourceVersion);
    assert.equal(created.status?.phase, 'Pending', 'the status sent on create is dropped');
    const again = await apiFailure(core.createNamespacedPod({ namespace: ns, body: pod('p') }));
    assert.equal(again.code, 409);
    assert.equal(again.status['reason'], 'AlreadyExists');
  });

  it('a namespaced create in a namespace that does not exist is 404 NotFound', async () => {
    const { core } = clients();
    const failure = await apiFailure(
      core.createNamespacedPod({ namespace: unique('missing'), body: pod('p') }),
    );
    assert.equal(failure.code, 404);
    assert.equal(failure.status['reason'], 'NotFound');
  });

  it('a strategic merge patch of one container image keeps the others; a no-op keeps the version', async () => {
    const { core } = clients();
    const ns = await namespace();
    await core.createNamespacedPod({ namespace: ns, body: pod('p') });
    const patched = await core.patchNamespacedPod(
      {
        name: 'p',
        namespace: ns,
        body: { spec: { containers: [{ name: 'agent', image: 'agent:2' }] } },
      },
      strategicPatch,
    );
    assert.deepEqual(
      patched.spec?.containers.map((c) => `${c.name}=${c.image ?? ''}`),
      ['app=app:1', 'agent=agent:2'],
    );
    const same = await core.patchNamespacedPod(
      {
        name: 'p',
        namespace: ns,
        body: { spec: { containers: [{ name: 'agent', image: 'agent:2' }] } },
      },
      strategicPatch,
    );
    assert.equal(same.metadata?.resourceVersion, patched.metadata?.resourceVersion);
  });

  it('a patch carrying a stale resourceVersion is 409 Conflict', async () => {
    const { core } = clients();
    const ns = await namespace();
    const created = await core.createNamespacedPod({ namespace: ns, body: pod('p') });
    await core.patchNamespacedPod(
      { name: 'p', namespace: ns, body: { metadata: { labels: { touched: 'yes' } } } },
      strategicPatch,
    );
    const stale = await apiFailure(
      core.patchNamespacedPod(
        {
          name: 'p',
          namespace: ns,
          body: {
            metadata: { resourceVersion: created.metadata?.resourceVersion },
            spec: { containers: [{ name: 'agent', image: 'agent:2' }] },
          },
        },
        strategicPatch,
      ),
    );
    assert.equal(stale.code, 409);
    assert.equal(stale.status['reason'], 'Conflict');
    const replaced = await apiFailure(
      core.patchNamespacedPod(
        {
          name: 'p',
          namespace: ns,
          body: [
            {
              op: 'replace',
              path: '/metadata/resourceVersion',
              value: created.metadata?.resourceVersion,
            },
          ],
        },
        jsonPatch,
      ),
    );
    assert.equal(replaced.code, 409);
  });

  it('a pod update that changes more than images is 422 Invalid', async () => {
    const { core } = clients();
    const ns = await namespace();
    await core.createNamespacedPod({ namespace: ns, body: pod('p') });
    const failure = await apiFailure(
      core.patchNamespacedPod(
        {
          name: 'p',
          namespace: ns,
          body: { spec: { containers: [{ name: 'agent', command: ['sh'] }] } },
        },
        strategicPatch,
      ),
    );
    assert.equal(failure.code, 422);
    assert.equal(failure.status['reason'], 'Invalid');
    assert.match(message(failure), /^Pod "p" is invalid: /);
    assert.match(message(failure), /pod updates may not change fields other than/);
  });

  it('pods/status: a status write changes the status and the labels, never the spec', async () => {
    const { core } = clients();
    const ns = await namespace();
    await core.createNamespacedPod({ namespace: ns, body: pod('p') });
    const written = await core.patchNamespacedPodStatus(
      {
        name: 'p',
        namespace: ns,
        body: {
          metadata: { labels: { reported: 'yes' } },
          spec: { containers: [{ name: 'agent', image: 'agent:9' }] },
          status: { conditions: [{ type: 'example.com/gate', status: 'True' }] },
        },
      },
      strategicPatch,
    );
    assert.equal(written.spec?.containers[1]?.image, 'agent:1');
    assert.ok(written.status?.conditions?.some((c) => c.type === 'example.com/gate'));
    // The pod status strategy resets only the spec (kubernetes pkg/registry/core/pod/strategy.go).
    assert.equal(written.metadata?.labels?.['reported'], 'yes');
  });

  it('label selectors, equality and set based, and the pods field selectors we use', async () => {
    const { core } = clients();
    const ns = await namespace();
    await core.createNamespacedPod({ namespace: ns, body: pod('a', { app: 'a' }) });
    await core.createNamespacedPod({ namespace: ns, body: pod('b', { app: 'b', skip: 'yes' }) });
    await core.createNamespacedPod({ namespace: ns, body: pod('c', { app: 'c' }) });
    const names = async (labelSelector?: string, fieldSelector?: string): Promise<string[]> =>
      (
        await core.listNamespacedPod({
          namespace: ns,
          ...(labelSelector === undefined ? {} : { labelSelector }),
          ...(fieldSelector === undefined ? {} : { fieldSelector }),
        })
      ).items
        .map((p) => p.metadata?.name ?? '')
        .sort();
    assert.deepEqual(await names('app in (a,b),!skip'), ['a']);
    assert.deepEqual(await names('app notin (a)'), ['b', 'c']);
    assert.deepEqual(await names('app=c'), ['c']);
    assert.deepEqual(await names(undefined, 'metadata.name=b'), ['b']);
    assert.deepEqual(await names(undefined, 'status.phase=Pending'), ['a', 'b', 'c']);
    assert.deepEqual(await names(undefined, 'spec.nodeName='), ['a', 'b', 'c']);
  });

  it('a list carries its resourceVersion; a watch from it sees only later changes', async () => {
    const { core, kc } = clients();
    const ns = await namespace();
    await core.createNamespacedPod({ namespace: ns, body: pod('before') });
    const list = await core.listNamespacedPod({ namespace: ns });
    assert.ok(list.metadata?.resourceVersion);
    const seen: string[] = [];
    const request = await new Watch(kc).watch(
      `/api/v1/namespaces/${ns}/pods`,
      { resourceVersion: list.metadata.resourceVersion },
      (type: string, obj: V1Pod) => seen.push(`${type} ${obj.metadata?.name ?? ''}`),
      () => undefined,
    );
    try {
      await core.createNamespacedPod({ namespace: ns, body: pod('after') });
      const deadline = Date.now() + 10_000;
      while (seen.length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      request.abort();
    }
    assert.deepEqual(seen, ['ADDED after']);
  });

  it('delete: an unscheduled pod goes at once and comes back with its deletionTimestamp; a custom resource answers a Status', async () => {
    const { core, custom } = clients();
    const ns = await namespace();
    await core.createNamespacedPod({ namespace: ns, body: pod('p') });
    const deleted = await core.deleteNamespacedPod({ name: 'p', namespace: ns });
    assert.equal(deleted.kind, 'Pod');
    assert.ok(deleted.metadata?.deletionTimestamp);
    const gone = await apiFailure(core.readNamespacedPod({ name: 'p', namespace: ns }));
    assert.equal(gone.code, 404);
    const name = unique('deleted');
    await custom.createClusterCustomObject({ ...SS, body: sidecarSet(name) });
    const answer = (await custom.deleteClusterCustomObject({ ...SS, name })) as {
      kind?: string;
      status?: string;
      details?: { name?: string };
    };
    assert.deepEqual(
      { kind: answer.kind, status: answer.status, name: answer.details?.name },
      { kind: 'Status', status: 'Success', name },
    );
  });

  it('custom resources: checked against the CRD schema', async () => {
    const { custom } = clients();
    const name = unique('schema');
    const body = sidecarSet(name) as { spec: Record<string, unknown> };
    body.spec['containers'] = [{ name: 'agent', image: 7 }];
    const failure = await apiFailure(custom.createClusterCustomObject({ ...SS, body }));
    assert.equal(failure.code, 422);
    assert.equal(failure.status['reason'], 'Invalid');
    assert.match(message(failure), /^SidecarSet\.apps\.kruise\.io "schema-/);
    assert.match(message(failure), /spec\.containers\[0\]\.image/);
  });

  it('custom resources: an unknown selector operator is refused by the schema, no webhook called', async () => {
    const { custom } = clients();
    const body = sidecarSet(unique('operator')) as { spec: Record<string, unknown> };
    body.spec['selector'] = { matchExpressions: [{ key: 'app', operator: 'Near', values: ['x'] }] };
    const failure = await apiFailure(custom.createClusterCustomObject({ ...SS, body }));
    assert.equal(failure.code, 422);
    assert.match(
      message(failure),
      /spec\.selector\.matchExpressions\[0\]\.operator: Unsupported value: "Near": supported values: "In", "NotIn", "Exists", "DoesNotExist"/,
    );
  });

  it('custom resources: generation follows the spec; /status writes leave the spec; no strategic merge', async () => {
    const { custom } = clients();
    const name = unique('semantics');
    const created = (await custom.createClusterCustomObject({
      ...SS,
      body: sidecarSet(name),
    })) as CustomObject;
    assert.equal(created.metadata.generation, 1);
    const partial = await apiFailure(
      custom.patchClusterCustomObjectStatus(
        { ...SS, name, body: { status: { matchedPods: 3 } } },
        mergePatch,
      ),
    );
    assert.equal(partial.code, 422, 'the CRD schema requires the status counters');
    assert.match(message(partial), /status\.updatedPods: Required value/);
    const status = (await custom.patchClusterCustomObjectStatus(
      {
        ...SS,
        name,
        body: {
          spec: { containers: [{ name: 'agent', image: 'agent:9' }] },
          status: { matchedPods: 3, updatedPods: 0, readyPods: 0 },
        },
      },
      mergePatch,
    )) as CustomObject;
    assert.equal(status.status?.matchedPods, 3);
    assert.equal(status.spec.containers[0]?.image, 'agent:1', '/status ignores the spec');
    assert.equal(status.metadata.generation, 1, 'a status write is not a new generation');
    const spec = (await custom.patchClusterCustomObject(
      { ...SS, name, body: { spec: { containers: [{ name: 'agent', image: 'agent:2' }] } } },
      mergePatch,
    )) as CustomObject;
    assert.equal(spec.metadata.generation, 2);
    assert.equal(spec.status?.matchedPods, 3, 'a main-resource write keeps the status');
    const strategic = await apiFailure(
      custom.patchClusterCustomObject(
        { ...SS, name, body: { metadata: { labels: { a: 'b' } } } },
        strategicPatch,
      ),
    );
    assert.equal(strategic.code, 415);
    const unversioned = await apiFailure(
      custom.replaceClusterCustomObject({
        ...SS,
        name,
        body: { ...sidecarSet(name), metadata: { name } },
      }),
    );
    assert.equal(unversioned.code, 422, 'a custom resource PUT needs metadata.resourceVersion');
  });
}
