import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi, Watch, makeInformer } from '@kubernetes/client-node';
import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { Recorder, withServer } from './harness.js';
import { isJsonObject } from './json.js';
import type { JsonObject } from './json.js';
import { PODS, SIDECARSETS } from './resources.js';
import type { KubeObject } from './types.js';

interface Seen {
  readonly type: string;
  readonly name: string;
  readonly resourceVersion: string;
  readonly object: JsonObject;
}

function seen(type: string, obj: unknown): Seen {
  const object = isJsonObject(obj) ? obj : {};
  const meta = isJsonObject(object['metadata']) ? object['metadata'] : {};
  return {
    type,
    name: typeof meta['name'] === 'string' ? meta['name'] : '',
    resourceVersion: typeof meta['resourceVersion'] === 'string' ? meta['resourceVersion'] : '',
    object,
  };
}

function pod(name: string, labels: Record<string, string> = { app: 'web' }): KubeObject {
  return { metadata: { name, labels }, spec: { containers: [{ name: 'app', image: 'app:1' }] } };
}

function podBody(name: string): V1Pod {
  return {
    metadata: { name, labels: { app: 'web' } },
    spec: { containers: [{ name: 'app', image: 'app:1' }] },
  };
}

function nameOf(obj: KubernetesObject): string {
  return obj.metadata?.name ?? '';
}

describe('watch through @kubernetes/client-node', () => {
  it('replays every change after the list resourceVersion, in order, then streams live ones', async () => {
    await withServer(async (server) => {
      const kc = server.kubeConfig();
      const core = kc.makeApiClient(CoreV1Api);
      await core.createNamespacedPod({ namespace: 'default', body: podBody('a') });
      const list = await core.listNamespacedPod({ namespace: 'default' });
      const from = list.metadata?.resourceVersion ?? '';
      await core.createNamespacedPod({ namespace: 'default', body: podBody('b') });
      server.store.mutate(PODS, 'default', 'a', (p) => {
        p['status'] = { phase: 'Running' };
      });
      await core.deleteNamespacedPod({ name: 'a', namespace: 'default' });
      const events = new Recorder<Seen>();
      const done = new Recorder<unknown>();
      const watch = new Watch(kc);
      const request = await watch.watch(
        '/api/v1/namespaces/default/pods',
        { resourceVersion: from },
        (type: string, obj: unknown) => {
          events.push(seen(type, obj));
        },
        (err: unknown) => {
          done.push(err);
        },
      );
      await events.until((e) => e.length === 3, 'the replay');
      await core.createNamespacedPod({ namespace: 'default', body: podBody('c') });
      await events.until((e) => e.length === 4, 'the live event');
      assert.deepEqual(
        events.items.map((e) => `${e.type} ${e.name}`),
        ['ADDED b', 'MODIFIED a', 'DELETED a', 'ADDED c'],
      );
      const versions = events.items.map((e) => Number(e.resourceVersion));
      assert.ok(
        versions.every((v, i) => i === 0 || v > (versions[i - 1] ?? 0)),
        `increasing: ${versions.join()}`,
      );
      assert.ok((versions[0] ?? 0) > Number(from));
      assert.equal(events.items[0]?.object['kind'], 'Pod', 'watch events carry apiVersion/kind');
      request.abort();
      await server.control.waitForWatches((open) => open.length === 0, {
        what: 'the server to drop the watch',
      });
      await done.until((d) => d.length === 1, 'the done callback');
    });
  });

  it('starts with the current state when no resourceVersion is given', async () => {
    await withServer(async (server) => {
      const kc = server.kubeConfig();
      server.store.create(PODS, 'default', pod('a'));
      server.store.create(PODS, 'default', pod('b', { app: 'db' }));
      const events = new Recorder<Seen>();
      const request = await new Watch(kc).watch(
        '/api/v1/pods',
        { labelSelector: 'app=web' },
        (type: string, obj: unknown) => {
          events.push(seen(type, obj));
        },
        () => undefined,
      );
      await events.until((e) => e.length === 1, 'the initial state');
      assert.deepEqual(
        events.items.map((e) => `${e.type} ${e.name}`),
        ['ADDED a'],
      );
      request.abort();
    });
  });

  it('turns label changes into ADDED/DELETED for a watch with a selector', async () => {
    await withServer(async (server) => {
      const kc = server.kubeConfig();
      server.store.create(PODS, 'default', pod('a', { app: 'db' }));
      const events = new Recorder<Seen>();
      const request = await new Watch(kc).watch(
        '/api/v1/namespaces/default/pods',
        { labelSelector: 'app=web', resourceVersion: String(server.store.resourceVersion()) },
        (type: string, obj: unknown) => {
          events.push(seen(type, obj));
        },
        () => undefined,
      );
      const relabel = (app: string): void => {
        server.store.mutate(PODS, 'default', 'a', (p) => {
          p.metadata.labels = { app };
        });
      };
      relabel('web');
      server.store.mutate(PODS, 'default', 'a', (p) => {
        p.metadata.annotations = { touched: 'yes' };
      });
      relabel('db');
      relabel('other');
      await events.until((e) => e.length === 3, 'three events');
      assert.deepEqual(
        events.items.map((e) => `${e.type} ${e.name}`),
        ['ADDED a', 'MODIFIED a', 'DELETED a'],
      );
      request.abort();
    });
  });

  it('answers a watch from a compacted resourceVersion with an ERROR 410 Expired event and ends it', async () => {
    await withServer(async (server) => {
      const kc = server.kubeConfig();
      const old = String(server.store.resourceVersion());
      server.store.create(PODS, 'default', pod('a'));
      server.store.compact();
      const events = new Recorder<Seen>();
      const done = new Recorder<unknown>();
      await new Watch(kc).watch(
        '/api/v1/namespaces/default/pods',
        { resourceVersion: old },
        (type: string, obj: unknown) => {
          events.push(seen(type, obj));
        },
        (err: unknown) => {
          done.push(err);
        },
      );
      await done.until((d) => d.length === 1, 'the stream to end');
      assert.equal(done.items[0], null, 'a clean end, not a transport error');
      assert.equal(events.items.length, 1);
      const status = events.items[0]?.object;
      assert.equal(events.items[0]?.type, 'ERROR');
      assert.equal(status?.['kind'], 'Status');
      assert.equal(status['code'], 410);
      assert.equal(status['reason'], 'Expired');
    });
  });

  it('drives an informer: list, watch, add/update/delete, and a relist after 410', async () => {
    await withServer(async (server) => {
      const kc = server.kubeConfig();
      const core = kc.makeApiClient(CoreV1Api);
      server.store.create(PODS, 'default', pod('a'));
      server.store.create(PODS, 'default', pod('gone'));
      const informer = makeInformer<V1Pod>(kc, '/api/v1/namespaces/default/pods', () =>
        core.listNamespacedPod({ namespace: 'default' }),
      );
      const events = new Recorder<string>();
      const errors = new Recorder<unknown>();
      informer.on('add', (p) => {
        events.push(`add ${nameOf(p)}`);
      });
      informer.on('update', (p) => {
        events.push(`update ${nameOf(p)}`);
      });
      informer.on('delete', (p) => {
        events.push(`delete ${nameOf(p)}`);
      });
      informer.on('error', (err) => {
        errors.push(err);
      });
      try {
        await informer.start();
        await server.control.waitForWatch((w) => w.resource.resource === 'pods');
        await core.createNamespacedPod({ namespace: 'default', body: podBody('b') });
        server.store.mutate(PODS, 'default', 'a', (p) => {
          p['status'] = { phase: 'Running' };
        });
        await events.until((e) => e.length === 4, 'the informer events');
        assert.deepEqual(events.items, ['add a', 'add gone', 'add b', 'update a']);

        // The watch ends and, before the informer reconnects, the history it needs is compacted.
        const firstList = server.control.requests((r) => r.verb === 'list').length;
        server.control.closeWatches();
        server.store.create(PODS, 'default', pod('c'));
        server.store.delete(PODS, 'default', 'gone');
        server.store.compact();
        await events.until((e) => e.length === 6, 'the events after the relist');
        assert.deepEqual(events.items.slice(4).sort(), ['add c', 'delete gone']);
        assert.equal(
          server.control.requests((r) => r.verb === 'list').length,
          firstList + 1,
          'one relist',
        );
        assert.deepEqual(informer.list().map(nameOf).sort(), ['a', 'b', 'c']);
        assert.equal(errors.items.length, 0);
      } finally {
        await informer.stop();
      }
    });
  });

  it('informs on cluster-scoped SidecarSets', async () => {
    await withServer(async (server) => {
      const kc = server.kubeConfig();
      const custom = kc.makeApiClient(CustomObjectsApi);
      const informer = makeInformer<KubernetesObject>(
        kc,
        '/apis/apps.kruise.io/v1beta1/sidecarsets',
        async () =>
          (await custom.listClusterCustomObject({
            group: 'apps.kruise.io',
            version: 'v1beta1',
            plural: 'sidecarsets',
          })) as { items: KubernetesObject[] },
      );
      const events = new Recorder<string>();
      informer.on('add', (s) => {
        events.push(`add ${nameOf(s)}`);
      });
      informer.on('update', (s) => {
        events.push(`update ${nameOf(s)}`);
      });
      try {
        await informer.start();
        await server.control.waitForWatch((w) => w.resource.resource === 'sidecarsets');
        server.store.create(SIDECARSETS, '', { metadata: { name: 'logtail' }, spec: {} });
        server.store.patch(
          SIDECARSETS,
          '',
          'logtail',
          {
            type: 'application/merge-patch+json',
            body: { status: { matchedPods: 1, updatedPods: 0, readyPods: 0 } },
          },
          { subresource: 'status' },
        );
        await events.until((e) => e.length === 2, 'add and update');
        assert.deepEqual(events.items, ['add logtail', 'update logtail']);
      } finally {
        await informer.stop();
      }
    });
  });

  it('ends a watch after timeoutSeconds with a final BOOKMARK, and sends bookmarks on demand', async () => {
    await withServer(async (server) => {
      const kc = server.kubeConfig();
      const events = new Recorder<Seen>();
      const done = new Recorder<unknown>();
      await new Watch(kc).watch(
        '/api/v1/namespaces/default/pods',
        {
          resourceVersion: String(server.store.resourceVersion()),
          allowWatchBookmarks: true,
          timeoutSeconds: 1,
        },
        (type: string, obj: unknown) => {
          events.push(seen(type, obj));
        },
        (err: unknown) => {
          done.push(err);
        },
      );
      await server.control.waitForWatch();
      server.store.create(PODS, 'default', pod('a'));
      server.control.sendBookmarks();
      await done.until((d) => d.length === 1, 'the timeout', 5000);
      assert.deepEqual(
        events.items.map((e) => e.type),
        ['ADDED', 'BOOKMARK', 'BOOKMARK'],
      );
      assert.equal(events.items[1]?.resourceVersion, String(server.store.resourceVersion()));
      assert.equal(events.items[1].object['kind'], 'Pod');
      assert.equal(server.control.watches().length, 0);
    });
  });

  it('reports a dropped connection to the informer as an error; restarting resumes without a relist', async () => {
    await withServer(async (server) => {
      const kc = server.kubeConfig();
      const core = kc.makeApiClient(CoreV1Api);
      const informer = makeInformer<V1Pod>(kc, '/api/v1/pods', () =>
        core.listPodForAllNamespaces(),
      );
      const events = new Recorder<string>();
      const errors = new Recorder<unknown>();
      informer.on('add', (p) => {
        events.push(`add ${nameOf(p)}`);
      });
      informer.on('error', (err) => {
        errors.push(err);
      });
      try {
        await informer.start();
        await server.control.waitForWatch();
        assert.equal(
          server.control.closeWatches(() => true, { abrupt: true }),
          1,
        );
        await errors.until((e) => e.length === 1, 'the informer error');
        server.store.create(PODS, 'default', pod('while-down'));
        await informer.start();
        await events.until((e) => e.includes('add while-down'), 'the missed pod');
        assert.equal(
          server.control.requests((r) => r.verb === 'list').length,
          1,
          'resumed from its resourceVersion',
        );
      } finally {
        await informer.stop();
      }
    });
  });
});
