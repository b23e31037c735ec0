/**
 * The reflector against the fake API server, through the real @kubernetes/client-node: list and
 * watch, handlers, relist after 410 with synthetic events, recovery with backoff, bookmarks,
 * selectors, paging and a clean stop.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { CoreV1Api } from '@kubernetes/client-node';
import { pino } from 'pino';

import type { Reflector, ReflectorOptions } from '../../src/k8s/reflector.js';
import { createReflector, withoutManagedFields } from '../../src/k8s/reflector.js';
import type { FakeApiServer, KubeObject, RequestInfo } from '../fake-apiserver/index.js';
import { CONFIGMAPS, PODS } from '../fake-apiserver/index.js';
import { Recorder, withServer } from '../fake-apiserver/harness.js';

/** What the test transform keeps: a small object, so the raw pod cannot be what is stored. */
interface Small {
  name: string;
  app: string;
  image: string;
}

function small(raw: unknown): Small {
  const pod = raw as {
    metadata?: { name?: string; labels?: Record<string, string> };
    spec?: { containers?: { image?: string }[] };
  };
  return {
    name: pod.metadata?.name ?? '',
    app: pod.metadata?.labels?.['app'] ?? '',
    image: pod.spec?.containers?.[0]?.image ?? '',
  };
}

function pod(
  name: string,
  labels: Record<string, string> = { app: 'web' },
  node = 'node-1',
): KubeObject {
  return {
    metadata: { name, labels },
    spec: { nodeName: node, containers: [{ name: 'app', image: 'app:1' }] },
  };
}

interface LogLine {
  level: number;
  msg: string;
  reason?: string;
  retryInMs?: number;
}

/** Backoff delays as requested; resolves at once unless held. */
class Delays {
  readonly requested = new Recorder<number>();
  private held: (() => void) | undefined;
  private gate: Promise<void> | undefined;

  hold(): void {
    this.gate = new Promise((resolve) => {
      this.held = resolve;
    });
  }

  release(): void {
    this.held?.();
    this.gate = undefined;
  }

  readonly delay = (ms: number, signal: AbortSignal): Promise<void> => {
    this.requested.push(ms);
    if (this.gate === undefined) return Promise.resolve();
    const gate = this.gate;
    return new Promise((resolve) => {
      signal.addEventListener('abort', () => {
        resolve();
      });
      void gate.then(resolve);
    });
  };
}

interface Harness {
  reflector: Reflector<Small>;
  events: Recorder<string>;
  logs: Recorder<LogLine>;
  delays: Delays;
}

function makeReflector(
  server: FakeApiServer,
  extra: Partial<ReflectorOptions<unknown, Small>> = {},
): Harness {
  const kc = server.kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const events = new Recorder<string>();
  const logs = new Recorder<LogLine>();
  const delays = new Delays();
  const logger = pino(
    { level: 'debug' },
    {
      write(line: string) {
        logs.push(JSON.parse(line) as LogLine);
      },
    },
  );
  const reflector = createReflector<unknown, Small>({
    kubeConfig: kc,
    path: '/api/v1/namespaces/default/pods',
    list: (params) => core.listNamespacedPod({ namespace: 'default', ...params }),
    transform: small,
    logger,
    delay: delays.delay,
    // No /readyz probes: these tests count the backoff's delays (reflector-recovery.test.ts).
    probeIntervalMs: 0,
    handlers: {
      onAdd: (p) => {
        events.push(`add ${p.name}`);
      },
      onUpdate: (old, p) => {
        events.push(`update ${old.name} ${old.image}->${p.image}`);
      },
      onDelete: (p) => {
        events.push(`delete ${p.name}`);
      },
      onSynced: () => {
        events.push('synced');
      },
    },
    ...extra,
  });
  return { reflector, events, logs, delays };
}

const isPodWatch = (r: RequestInfo): boolean => r.verb === 'watch' && r.resource === 'pods';
const isPodList = (r: RequestInfo): boolean => r.verb === 'list' && r.resource === 'pods';

function setImage(server: FakeApiServer, name: string, image: string): void {
  server.store.mutate(PODS, 'default', name, (p) => {
    const spec = p['spec'] as { containers: { image: string }[] };
    const first = spec.containers[0];
    if (first) first.image = image;
  });
}

async function running(h: Harness, server: FakeApiServer): Promise<void> {
  await h.reflector.start();
  await server.control.waitForWatch((w) => w.resource.resource === 'pods');
}

describe('createReflector', () => {
  it('lists, stores transformed objects, calls onAdd then onSynced, and watches from the list version', async () => {
    await withServer(async (server) => {
      server.store.create(PODS, 'default', pod('a'));
      server.store.create(PODS, 'default', pod('b'));
      const h = makeReflector(server, { random: () => 0.5 });
      try {
        assert.equal(h.reflector.synced(), false);
        await running(h, server);
        assert.equal(h.reflector.synced(), true);
        assert.deepEqual(h.events.items, ['add a', 'add b', 'synced']);
        assert.equal(h.reflector.size(), 2);
        assert.deepEqual(h.reflector.get('default/a'), { name: 'a', app: 'web', image: 'app:1' });
        assert.deepEqual(
          h.reflector.list().map((p) => p.name),
          ['a', 'b'],
        );
        const list = server.control.requests(isPodList);
        assert.equal(list.length, 1);
        assert.equal(list[0]?.query['limit'], '500');
        const watch = server.control.requests(isPodWatch)[0];
        assert.equal(watch?.query['resourceVersion'], h.reflector.resourceVersion());
        assert.equal(watch.query['allowWatchBookmarks'], 'true');
        assert.equal(watch.query['timeoutSeconds'], '450', '5 min × (1 + random)');
      } finally {
        await h.reflector.stop();
      }
    });
  });

  it('follows adds, updates and deletes through the watch', async () => {
    await withServer(async (server) => {
      server.store.create(PODS, 'default', pod('a'));
      server.store.create(PODS, 'default', pod('b'));
      const h = makeReflector(server);
      try {
        await running(h, server);
        server.store.create(PODS, 'default', pod('c'));
        setImage(server, 'a', 'app:2');
        server.store.delete(PODS, 'default', 'b');
        server.store.create(PODS, 'kube-system', pod('elsewhere'));
        await h.events.until((e) => e.length === 6, 'three watch events');
        assert.deepEqual(h.events.items.slice(3), ['add c', 'update a app:1->app:2', 'delete b']);
        assert.deepEqual(
          h.reflector.list().map((p) => `${p.name} ${p.image}`),
          ['a app:2', 'c app:1'],
        );
        assert.equal(h.reflector.resourceVersion(), String(server.store.resourceVersion() - 1));
      } finally {
        await h.reflector.stop();
      }
    });
  });

  it('relists after 410 Expired and emits the difference as deletes, adds and updates', async () => {
    await withServer(async (server) => {
      for (const name of ['a', 'b', 'c']) server.store.create(PODS, 'default', pod(name));
      const h = makeReflector(server);
      try {
        await running(h, server);
        // Keep the reflector away while the cluster changes: its next watch fails, and the
        // backoff after it is held.
        h.delays.hold();
        server.control.failNext({ match: isPodWatch, status: 500 });
        server.control.closeWatches(() => true, { abrupt: true });
        await h.delays.requested.until((d) => d.length === 1, 'the backoff');
        server.store.delete(PODS, 'default', 'a');
        setImage(server, 'b', 'app:2');
        server.store.create(PODS, 'default', pod('d'));
        server.store.compact();
        h.delays.release();
        await h.events.until((e) => e.includes('add d'), 'the relist');
        assert.deepEqual(h.events.items.slice(4), ['delete a', 'update b app:1->app:2', 'add d']);
        assert.deepEqual(
          h.reflector.list().map((p) => `${p.name} ${p.image}`),
          ['b app:2', 'c app:1', 'd app:1'],
        );
        assert.equal(server.control.requests(isPodList).length, 2);
        const expired = h.logs.items.find((l) => l.msg.includes('expired'));
        assert.match(expired?.reason ?? '', /410/);
        // It watches again from the new list's version, and keeps following.
        await server.control.waitForWatch();
        server.store.create(PODS, 'default', pod('e'));
        await h.events.until((e) => e.includes('add e'), 'the next watch');
      } finally {
        await h.reflector.stop();
      }
    });
  });

  it('recovers after the watch connection drops, from the last resourceVersion', async () => {
    await withServer(async (server) => {
      server.store.create(PODS, 'default', pod('a'));
      const h = makeReflector(server);
      try {
        await running(h, server);
        const version = h.reflector.resourceVersion();
        assert.equal(
          server.control.closeWatches(() => true, { abrupt: true }),
          1,
        );
        server.store.create(PODS, 'default', pod('b'));
        await h.events.until((e) => e.includes('add b'), 'the event after the drop');
        const watches = server.control.requests(isPodWatch);
        assert.equal(watches.length, 2);
        assert.equal(watches[1]?.query['resourceVersion'], version, 'no relist, same version');
        assert.equal(server.control.requests(isPodList).length, 1);
      } finally {
        await h.reflector.stop();
      }
    });
  });

  it('retries a failing list with growing backoff until start() can resolve, then resets it', async () => {
    await withServer(async (server) => {
      server.store.create(PODS, 'default', pod('a'));
      const fault = server.control.failNext({ match: isPodList, status: 500, times: 3 });
      const h = makeReflector(server);
      try {
        await running(h, server);
        assert.equal(fault.hits(), 3);
        assert.deepEqual(h.delays.requested.items, [500, 1000, 2000]);
        assert.deepEqual(h.events.items, ['add a', 'synced']);
        const failures = h.logs.items.filter((l) => l.msg.startsWith('list failed'));
        assert.equal(failures.length, 3);
        assert.match(failures[0]?.reason ?? '', /500/);
        assert.deepEqual(
          failures.map((l) => l.retryInMs),
          [500, 1000, 2000],
        );
        // A later watch failure starts again from the initial delay.
        server.control.failNext({ match: isPodWatch, status: 500 });
        server.control.closeWatches(() => true, { abrupt: true });
        await h.delays.requested.until((d) => d.length === 4, 'the watch backoff');
        assert.equal(h.delays.requested.items[3], 500);
        await server.control.waitForWatch();
        server.store.create(PODS, 'default', pod('b'));
        await h.events.until((e) => e.includes('add b'), 'recovery');
      } finally {
        await h.reflector.stop();
      }
    });
  });

  it('caps the backoff at its maximum', async () => {
    await withServer(async (server) => {
      server.control.failNext({ match: isPodList, status: 503, times: 5 });
      const h = makeReflector(server, { backoff: { initialMs: 500, maxMs: 2000 } });
      try {
        await running(h, server);
        assert.deepEqual(h.delays.requested.items, [500, 1000, 2000, 2000, 2000]);
      } finally {
        await h.reflector.stop();
      }
    });
  });

  it('moves its resourceVersion on BOOKMARK events without calling handlers', async () => {
    await withServer(async (server) => {
      server.store.create(PODS, 'default', pod('a'));
      const h = makeReflector(server);
      try {
        await running(h, server);
        const before = h.reflector.resourceVersion();
        server.store.create(CONFIGMAPS, 'default', { metadata: { name: 'unrelated' } });
        const now = String(server.store.resourceVersion());
        assert.notEqual(now, before);
        server.control.sendBookmarks();
        // The stream ends right after the bookmark: the next watch starts from its version.
        server.control.closeWatches();
        await server.control.waitForWatch((w) => w.resourceVersion === now);
        assert.equal(h.reflector.resourceVersion(), now);
        assert.deepEqual(h.events.items, ['add a', 'synced']);
      } finally {
        await h.reflector.stop();
      }
    });
  });

  it('passes label and field selectors to the list and the watch', async () => {
    await withServer(async (server) => {
      server.store.create(PODS, 'default', pod('web-1'));
      server.store.create(PODS, 'default', pod('web-2', { app: 'web' }, 'node-2'));
      server.store.create(PODS, 'default', pod('db-1', { app: 'db' }));
      const h = makeReflector(server, {
        labelSelector: 'app=web',
        fieldSelector: 'spec.nodeName=node-1',
      });
      try {
        await running(h, server);
        assert.deepEqual(
          h.reflector.list().map((p) => p.name),
          ['web-1'],
        );
        for (const request of [
          ...server.control.requests(isPodList),
          ...server.control.requests(isPodWatch),
        ]) {
          assert.equal(request.query['labelSelector'], 'app=web');
          assert.equal(request.query['fieldSelector'], 'spec.nodeName=node-1');
        }
        server.store.mutate(PODS, 'default', 'web-1', (p) => {
          p.metadata.labels = { app: 'db' };
        });
        server.store.mutate(PODS, 'default', 'db-1', (p) => {
          p.metadata.labels = { app: 'web' };
        });
        await h.events.until((e) => e.length === 4, 'the selector transitions');
        assert.deepEqual(h.events.items.slice(2), ['delete web-1', 'add db-1']);
      } finally {
        await h.reflector.stop();
      }
    });
  });

  it('lists in pages of pageSize', async () => {
    await withServer(async (server) => {
      for (let i = 0; i < 5; i++) server.store.create(PODS, 'default', pod(`p${i}`));
      const h = makeReflector(server, { pageSize: 2 });
      try {
        await running(h, server);
        assert.equal(h.reflector.size(), 5);
        const pages = server.control.requests(isPodList);
        assert.deepEqual(
          pages.map((r) => [r.query['limit'], r.query['continue'] !== undefined]),
          [
            ['2', false],
            ['2', true],
            ['2', true],
          ],
        );
      } finally {
        await h.reflector.stop();
      }
    });
  });

  it('stop() aborts the watch and ends the loop', async () => {
    await withServer(async (server) => {
      const h = makeReflector(server);
      await running(h, server);
      await h.reflector.stop();
      await server.control.waitForWatches((open) => open.length === 0);
      server.store.create(PODS, 'default', pod('late'));
      assert.deepEqual(h.events.items, ['synced']);
      await h.reflector.start(); // a stopped reflector does not start again
      assert.equal(server.control.requests(isPodList).length, 1);
    });
  });

  it('stop() during the backoff of a failing first list unblocks start(), with real timers', async () => {
    await withServer(async (server) => {
      server.control.failNext({ match: isPodList, status: 500, times: 100 });
      const core = server.kubeConfig().makeApiClient(CoreV1Api);
      // The built-in delay, a real 60 s timer: stop() must cancel it, or node:test would not exit.
      const reflector = createReflector<unknown, Small>({
        kubeConfig: server.kubeConfig(),
        path: '/api/v1/namespaces/default/pods',
        list: () => core.listNamespacedPod({ namespace: 'default' }),
        transform: small,
        logger: pino({ level: 'silent' }),
        backoff: { initialMs: 60_000, maxMs: 60_000 },
      });
      const started = reflector.start();
      await server.control.waitForRequest((r) => isPodList(r) && r.status === 500);
      await reflector.stop();
      await started;
      assert.equal(reflector.synced(), false);
      assert.equal(server.control.requests(isPodList).length, 1);
    });
  });

  it('keeps going when a handler throws', async () => {
    await withServer(async (server) => {
      const h = makeReflector(server, {
        handlers: {
          onAdd: (p) => {
            if (p.name === 'bad') throw new Error('handler bug');
            h.events.push(`add ${p.name}`);
          },
        },
      });
      try {
        await running(h, server);
        server.store.create(PODS, 'default', pod('bad'));
        server.store.create(PODS, 'default', pod('good'));
        await h.events.until((e) => e.includes('add good'), 'the next event');
        assert.ok(h.logs.items.some((l) => l.msg === 'add handler threw'));
        assert.equal(h.reflector.size(), 2);
      } finally {
        await h.reflector.stop();
      }
    });
  });

  it('addHandlers replays the stored objects and the sync to a late handler', async () => {
    await withServer(async (server) => {
      server.store.create(PODS, 'default', pod('a'));
      const h = makeReflector(server);
      try {
        await running(h, server);
        const late: string[] = [];
        const remove = h.reflector.addHandlers({
          onAdd: (p) => late.push(`add ${p.name}`),
          onSynced: () => late.push('synced'),
        });
        assert.deepEqual(late, ['add a', 'synced']);
        remove();
        server.store.create(PODS, 'default', pod('b'));
        await h.events.until((e) => e.includes('add b'), 'the event');
        assert.deepEqual(late, ['add a', 'synced']);
      } finally {
        await h.reflector.stop();
      }
    });
  });
});

describe('withoutManagedFields', () => {
  it('drops metadata.managedFields and keeps the rest, leaving the input as it was', () => {
    const raw = {
      kind: 'SidecarSet',
      metadata: {
        name: 'logtail',
        labels: { team: 'a' },
        managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': {} } }],
      },
      spec: { containers: [{ name: 'logtail' }] },
    };
    const before = structuredClone(raw);
    assert.deepEqual(withoutManagedFields(raw), {
      kind: 'SidecarSet',
      metadata: { name: 'logtail', labels: { team: 'a' } },
      spec: { containers: [{ name: 'logtail' }] },
    });
    assert.deepEqual(raw, before);
  });
});
