import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CoreV1Api, makeInformer } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { Recorder, apiFailure, withServer } from './harness.js';
import { isJsonObject } from './json.js';
import { PODS } from './resources.js';
import type { StoreEvent } from './store.js';
import { waitForStore } from './wait.js';

function podBody(name: string): V1Pod {
  return {
    metadata: { name, labels: { app: 'web' } },
    spec: { containers: [{ name: 'app', image: 'app:1' }] },
  };
}

const imagePatch = (image: string): object[] => [
  { op: 'replace', path: '/spec/containers/0/image', value: image },
];

describe('fault injection, request log and change feed', () => {
  it('fails the next matching request with 409 and lets the retry through', async () => {
    await withServer(async (server) => {
      const core = server.kubeConfig().makeApiClient(CoreV1Api);
      await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
      const fault = server.control.failNext({
        match: (r) => r.verb === 'patch' && r.resource === 'pods',
        status: 409,
      });
      const failed = await apiFailure(
        core.patchNamespacedPod({ name: 'a', namespace: 'default', body: imagePatch('app:2') }),
      );
      assert.equal(failed.code, 409);
      assert.equal(failed.status['reason'], 'Conflict');
      assert.equal(
        server.store.get(PODS, 'default', 'a')?.metadata.generation,
        1,
        'the failed patch had no effect',
      );
      const retried = await core.patchNamespacedPod({
        name: 'a',
        namespace: 'default',
        body: imagePatch('app:2'),
      });
      assert.equal(retried.spec?.containers[0]?.image, 'app:2');
      assert.equal(fault.hits(), 1);
      assert.equal(fault.remaining(), 0);
      const patches = server.control.requests((r) => r.method === 'PATCH');
      assert.deepEqual(
        patches.map((r) => [r.status, r.injected]),
        [
          [409, true],
          [200, false],
        ],
      );
    });
  });

  it('fails several requests with 500, and can apply a write but lose its answer', async () => {
    await withServer(async (server) => {
      const core = server.kubeConfig().makeApiClient(CoreV1Api);
      await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
      server.control.failNext({ match: (r) => r.verb === 'get', status: 500, times: 2 });
      assert.equal(
        (await apiFailure(core.readNamespacedPod({ name: 'a', namespace: 'default' }))).code,
        500,
      );
      assert.equal(
        (await apiFailure(core.readNamespacedPod({ name: 'a', namespace: 'default' }))).code,
        500,
      );
      await core.readNamespacedPod({ name: 'a', namespace: 'default' });
      server.control.failNext({ match: (r) => r.verb === 'patch', status: 504, phase: 'after' });
      const lost = await apiFailure(
        core.patchNamespacedPod({ name: 'a', namespace: 'default', body: imagePatch('app:3') }),
      );
      assert.equal(lost.code, 504);
      const stored = server.store.get(PODS, 'default', 'a');
      const containers = isJsonObject(stored?.['spec']) ? stored['spec']['containers'] : undefined;
      assert.ok(Array.isArray(containers) && isJsonObject(containers[0]));
      assert.equal(
        containers[0]['image'],
        'app:3',
        'the write happened although the client saw an error',
      );
    });
  });

  it('logs method, path, content type and body of every request', async () => {
    await withServer(async (server) => {
      const core = server.kubeConfig().makeApiClient(CoreV1Api);
      await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
      const waiting = server.control.waitForRequest((r) => r.verb === 'patch' && r.name === 'a');
      await core.patchNamespacedPod({ name: 'a', namespace: 'default', body: imagePatch('app:2') });
      const record = await waiting;
      assert.equal(record.method, 'PATCH');
      assert.equal(record.path, '/api/v1/namespaces/default/pods/a');
      assert.equal(record.contentType, 'application/json-patch+json');
      assert.deepEqual(record.body, imagePatch('app:2'));
      assert.equal(record.namespace, 'default');
      assert.equal(record.status, 200);
      server.control.clearRequests();
      assert.equal(server.control.requests().length, 0);
    });
  });

  it('makes an informer relist when its watch is answered 410, and report a failing list', async () => {
    await withServer(async (server) => {
      const kc = server.kubeConfig();
      const core = kc.makeApiClient(CoreV1Api);
      const informer = makeInformer<V1Pod>(kc, '/api/v1/pods', () =>
        core.listPodForAllNamespaces(),
      );
      const errors = new Recorder<unknown>();
      informer.on('error', (err) => {
        errors.push(err);
      });
      try {
        await informer.start();
        await server.control.waitForWatch();
        server.control.clearRequests();
        server.control.failNext({ match: (r) => r.verb === 'watch', status: 410 });
        server.control.closeWatches();
        await server.control.waitForRequest((r) => r.verb === 'list');
        await server.control.waitForWatch();
        assert.equal(errors.items.length, 0, 'a 410 is not an error for the informer');
        server.control.failNext({ match: (r) => r.verb === 'list', status: 500 });
        server.control.failNext({ match: (r) => r.verb === 'watch', status: 410 });
        server.control.closeWatches();
        await errors.until((e) => e.length === 1, 'the informer to report the failed list');
      } finally {
        await informer.stop();
      }
    });
  });

  it('feeds every committed change to subscribers, so tests can check invariants at each instant', async () => {
    await withServer(async (server) => {
      const kubelet = server.startKubelet({ delayMs: 1 });
      const core = server.kubeConfig().makeApiClient(CoreV1Api);
      let maxNotReady = 0;
      const notReady = new Set<string>();
      const unsubscribe = server.store.subscribe((event: StoreEvent) => {
        if (event.resource.resource !== 'pods') return;
        const status = event.object['status'];
        const conditions =
          isJsonObject(status) && Array.isArray(status['conditions']) ? status['conditions'] : [];
        const ready = conditions.some(
          (c) => isJsonObject(c) && c['type'] === 'Ready' && c['status'] === 'True',
        );
        const name = event.object.metadata.name ?? '';
        if (ready || event.type === 'DELETED') notReady.delete(name);
        else notReady.add(name);
        maxNotReady = Math.max(maxNotReady, notReady.size);
      });
      try {
        for (const name of ['a', 'b', 'c']) {
          await core.createNamespacedPod({ namespace: 'default', body: podBody(name) });
          await waitForStore(server.store, () => (notReady.size === 0 ? true : undefined));
        }
        assert.equal(maxNotReady, 1, 'pods were started one at a time');
      } finally {
        unsubscribe();
        kubelet.stop();
      }
    });
  });

  it('answers malformed requests with Status errors', async () => {
    await withServer(async (server) => {
      const call = async (
        method: string,
        path: string,
        body?: string,
        contentType = 'application/json',
      ) => {
        const response = await fetch(server.url + path, {
          method,
          headers: { 'Content-Type': contentType },
          ...(body === undefined ? {} : { body }),
        });
        const json: unknown = await response.json();
        assert.ok(isJsonObject(json));
        assert.equal(json['kind'], 'Status');
        return [response.status, json['reason']];
      };
      assert.deepEqual(await call('GET', '/api/v1/widgets'), [404, 'NotFound']);
      assert.deepEqual(await call('POST', '/api/v1/namespaces/default/pods', '{not json'), [
        400,
        'BadRequest',
      ]);
      assert.deepEqual(await call('PUT', '/api/v1/namespaces/default/pods'), [
        405,
        'MethodNotAllowed',
      ]);
      assert.deepEqual(
        await call(
          'PATCH',
          '/api/v1/namespaces/default/pods/a',
          '{}',
          'application/apply-patch+yaml',
        ),
        [415, 'UnsupportedMediaType'],
      );
      assert.deepEqual(await call('GET', '/api/v1/namespaces/default/pods/a/exec'), [
        404,
        'NotFound',
      ]);
      assert.deepEqual(
        await call('GET', '/api/v1/namespaces/default/pods?labelSelector=a%20in%20('),
        [400, 'BadRequest'],
      );
    });
  });
});
