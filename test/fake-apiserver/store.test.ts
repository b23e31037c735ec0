import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from './errors.js';
import { isJsonObject } from './json.js';
import {
  LEASES,
  NAMESPACES,
  PODS,
  SIDECARSETS,
  defineResource,
  DEFAULT_RESOURCES,
} from './resources.js';
import { ObjectStore } from './store.js';
import type { StoreEvent } from './store.js';
import { PATCH_TYPES } from './types.js';
import type { KubeObject } from './types.js';

function newStore(options: ConstructorParameters<typeof ObjectStore>[0] = {}): ObjectStore {
  let uid = 0;
  const store = new ObjectStore({
    now: () => new Date('2024-05-01T10:00:00.123Z'),
    newUid: () => `uid-${++uid}`,
    ...options,
  });
  store.create(NAMESPACES, '', { metadata: { name: 'default' } });
  return store;
}

function pod(
  name: string,
  image = 'app:1',
  labels: Record<string, string> = { app: 'web' },
): KubeObject {
  return {
    metadata: { name, labels },
    spec: {
      containers: [
        { name: 'app', image },
        { name: 'log', image: 'log:1' },
      ],
    },
  };
}

function sidecarSet(name: string): KubeObject {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: { containers: [{ name: 'logtail', image: 'logtail:1' }] },
    status: { matchedPods: 5, updatedPods: 0, readyPods: 0 },
  };
}

function rejects(fn: () => unknown, code: number, reason: string): ApiError {
  try {
    fn();
  } catch (err: unknown) {
    assert.ok(err instanceof ApiError, `expected an ApiError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    assert.equal(err.reason, reason);
    return err;
  }
  assert.fail(`expected ${code} ${reason}`);
}

describe('ObjectStore', () => {
  it('stamps uid, creationTimestamp, generation 1 and a global, increasing resourceVersion', () => {
    const store = newStore();
    const a = store.create(PODS, 'default', pod('a'));
    const l = store.create(LEASES, 'default', { metadata: { name: 'l' }, spec: {} });
    const b = store.create(PODS, 'default', pod('b'));
    assert.equal(a.metadata.uid, 'uid-2');
    assert.equal(a.metadata.creationTimestamp, '2024-05-01T10:00:00Z');
    assert.equal(a.metadata.generation, 1);
    assert.equal(a.apiVersion, 'v1');
    assert.equal(a.kind, 'Pod');
    assert.deepEqual(
      [a, l, b].map((o) => Number(o.metadata.resourceVersion)),
      [2, 3, 4],
    );
    assert.equal(store.resourceVersion(), 4);
    assert.equal(store.list(PODS).resourceVersion, '4');
  });

  it('answers 409 AlreadyExists, supports generateName and requires the namespace', () => {
    const store = newStore();
    store.create(PODS, 'default', pod('a'));
    const err = rejects(() => store.create(PODS, 'default', pod('a')), 409, 'AlreadyExists');
    assert.equal(err.message, 'pods "a" already exists');
    const generated = store.create(PODS, 'default', {
      metadata: { generateName: 'web-' },
      spec: { containers: [] },
    });
    assert.match(generated.metadata.name ?? '', /^web-[a-z0-9]{5}$/);
    rejects(() => store.create(PODS, 'missing', pod('x')), 404, 'NotFound');
    rejects(() => store.create(PODS, 'default', { metadata: {} }), 422, 'Invalid');
  });

  it('bumps generation on spec changes only, never on status writes, and skips no-op writes', () => {
    const store = newStore();
    const created = store.create(SIDECARSETS, '', sidecarSet('s'));
    assert.equal(
      created['status'],
      undefined,
      'create drops status on a resource with a status subresource',
    );
    const labelled = store.patch(SIDECARSETS, '', 's', {
      type: PATCH_TYPES.merge,
      body: { metadata: { labels: { a: 'b' } } },
    });
    assert.equal(labelled.metadata.generation, 1);
    const status = store.patch(
      SIDECARSETS,
      '',
      's',
      {
        type: PATCH_TYPES.merge,
        body: { status: { matchedPods: 3, updatedPods: 0, readyPods: 0 } },
      },
      { subresource: 'status' },
    );
    assert.equal(status.metadata.generation, 1);
    assert.deepEqual(status['status'], { matchedPods: 3, updatedPods: 0, readyPods: 0 });
    const spec = store.patch(SIDECARSETS, '', 's', {
      type: PATCH_TYPES.json,
      body: [{ op: 'replace', path: '/spec/containers/0/image', value: 'logtail:2' }],
    });
    assert.equal(spec.metadata.generation, 2);
    const before = store.resourceVersion();
    const same = store.patch(SIDECARSETS, '', 's', {
      type: PATCH_TYPES.merge,
      body: { metadata: { labels: { a: 'b' } } },
    });
    assert.equal(store.resourceVersion(), before, 'a write that changes nothing commits nothing');
    assert.equal(same.metadata.resourceVersion, spec.metadata.resourceVersion);
  });

  it('keeps .status on main-resource writes and .spec/.metadata on status writes', () => {
    const store = newStore();
    store.create(SIDECARSETS, '', sidecarSet('s'));
    store.patch(
      SIDECARSETS,
      '',
      's',
      {
        type: PATCH_TYPES.merge,
        body: { status: { matchedPods: 1, updatedPods: 0, readyPods: 0 } },
      },
      { subresource: 'status' },
    );
    const current = store.get(SIDECARSETS, '', 's');
    assert.ok(current);
    const update: KubeObject = {
      ...current,
      spec: { containers: [] },
      status: { matchedPods: 99, updatedPods: 0, readyPods: 0 },
    };
    const afterMain = store.update(SIDECARSETS, '', 's', update);
    assert.deepEqual(afterMain['status'], { matchedPods: 1, updatedPods: 0, readyPods: 0 });
    assert.deepEqual(afterMain['spec'], { containers: [] });
    const statusWrite: KubeObject = {
      ...afterMain,
      metadata: { ...afterMain.metadata, labels: { ignored: 'yes' } },
      spec: { ignored: true },
      status: { matchedPods: 7, updatedPods: 0, readyPods: 0 },
    };
    const afterStatus = store.update(SIDECARSETS, '', 's', statusWrite, { subresource: 'status' });
    assert.deepEqual(afterStatus['status'], { matchedPods: 7, updatedPods: 0, readyPods: 0 });
    assert.deepEqual(afterStatus['spec'], { containers: [] });
    assert.equal(afterStatus.metadata.labels, undefined);
    assert.equal(afterStatus.metadata.generation, afterMain.metadata.generation);
  });

  it('answers 409 Conflict for a stale resourceVersion on update, patch and delete', () => {
    const store = newStore();
    const first = store.create(PODS, 'default', pod('a'));
    store.patch(PODS, 'default', 'a', {
      type: PATCH_TYPES.merge,
      body: { metadata: { labels: { v: '2' } } },
    });
    const stale = { ...first, metadata: { ...first.metadata, labels: { v: '3' } } };
    const err = rejects(() => store.update(PODS, 'default', 'a', stale), 409, 'Conflict');
    assert.match(
      err.message,
      /^Operation cannot be fulfilled on pods "a": the object has been modified/,
    );
    rejects(
      () =>
        store.patch(PODS, 'default', 'a', {
          type: PATCH_TYPES.merge,
          body: {
            metadata: { resourceVersion: first.metadata.resourceVersion ?? '', labels: { v: '4' } },
          },
        }),
      409,
      'Conflict',
    );
    rejects(
      () =>
        store.patch(PODS, 'default', 'a', {
          type: PATCH_TYPES.json,
          body: [
            {
              op: 'replace',
              path: '/metadata/resourceVersion',
              value: first.metadata.resourceVersion ?? '',
            },
          ],
        }),
      409,
      'Conflict',
    );
    rejects(
      () =>
        store.delete(PODS, 'default', 'a', {
          preconditions: { resourceVersion: first.metadata.resourceVersion ?? '' },
        }),
      409,
      'Conflict',
    );
    const unconditional = {
      ...first,
      metadata: { ...first.metadata, resourceVersion: '', labels: { v: '5' } },
    };
    assert.equal(store.update(PODS, 'default', 'a', unconditional).metadata.labels?.['v'], '5');
  });

  it('requires resourceVersion on PUT of a custom resource, and refuses strategic merge patch for it', () => {
    const store = newStore();
    store.create(SIDECARSETS, '', sidecarSet('s'));
    rejects(() => store.update(SIDECARSETS, '', 's', sidecarSet('s')), 422, 'Invalid');
    rejects(
      () => store.patch(SIDECARSETS, '', 's', { type: PATCH_TYPES.strategic, body: { spec: {} } }),
      415,
      'UnsupportedMediaType',
    );
  });

  it('lets a pod update change container images but no other spec field (422)', () => {
    const store = newStore();
    store.create(PODS, 'default', pod('a'));
    const ok = store.patch(PODS, 'default', 'a', {
      type: PATCH_TYPES.json,
      body: [{ op: 'replace', path: '/spec/containers/1/image', value: 'log:2' }],
    });
    assert.equal(ok.metadata.generation, 2);
    const err = rejects(
      () =>
        store.patch(PODS, 'default', 'a', {
          type: PATCH_TYPES.json,
          body: [{ op: 'add', path: '/spec/containers/1/env', value: [{ name: 'A', value: 'b' }] }],
        }),
      422,
      'Invalid',
    );
    assert.match(err.message, /pod updates may not change fields other than/);
  });

  it('merges containers by name under strategic merge patch', () => {
    const store = newStore();
    store.create(PODS, 'default', pod('a'));
    const patched = store.patch(PODS, 'default', 'a', {
      type: PATCH_TYPES.strategic,
      body: { spec: { containers: [{ name: 'log', image: 'log:2' }] } },
    });
    assert.deepEqual(patched['spec'], {
      containers: [
        { name: 'app', image: 'app:1' },
        { name: 'log', image: 'log:2' },
      ],
    });
    const merged = store.patch(PODS, 'default', 'a', {
      type: PATCH_TYPES.merge,
      body: { metadata: { annotations: { x: 'y' } } },
    });
    assert.deepEqual(merged.metadata.annotations, { x: 'y' });
  });

  it('answers 422 when a JSON patch test fails, and 400 for a malformed JSON patch', () => {
    const store = newStore();
    store.create(PODS, 'default', pod('a'));
    rejects(
      () =>
        store.patch(PODS, 'default', 'a', {
          type: PATCH_TYPES.json,
          body: [{ op: 'test', path: '/spec/containers/0/image', value: 'nope' }],
        }),
      422,
      'Invalid',
    );
    rejects(
      () => store.patch(PODS, 'default', 'a', { type: PATCH_TYPES.json, body: { op: 'x' } }),
      400,
      'BadRequest',
    );
  });

  it('filters lists by namespace, labels and fields, sorted, with limit and continue', () => {
    const store = newStore();
    store.create(NAMESPACES, '', { metadata: { name: 'other' } });
    store.create(PODS, 'default', pod('b', 'app:1', { app: 'web', tier: 'front' }));
    store.create(PODS, 'default', pod('a', 'app:1', { app: 'db' }));
    store.create(PODS, 'other', pod('c'));
    store.mutate(PODS, 'default', 'b', (p) => {
      p['spec'] = { ...(isJsonObject(p['spec']) ? p['spec'] : {}), nodeName: 'node-1' };
    });
    const names = (items: KubeObject[]): string[] =>
      items.map((i) => `${i.metadata.namespace ?? ''}/${i.metadata.name ?? ''}`);
    assert.deepEqual(names(store.list(PODS).items), ['default/a', 'default/b', 'other/c']);
    assert.deepEqual(names(store.list(PODS, { namespace: 'default' }).items), [
      'default/a',
      'default/b',
    ]);
    assert.deepEqual(names(store.list(PODS, { labelSelector: 'app=web' }).items), [
      'default/b',
      'other/c',
    ]);
    assert.deepEqual(names(store.list(PODS, { labelSelector: 'app in (db,x)' }).items), [
      'default/a',
    ]);
    assert.deepEqual(names(store.list(PODS, { labelSelector: 'app,!tier' }).items), [
      'default/a',
      'other/c',
    ]);
    assert.deepEqual(names(store.list(PODS, { labelSelector: 'app notin (web)' }).items), [
      'default/a',
    ]);
    assert.deepEqual(names(store.list(PODS, { labelSelector: 'tier!=front' }).items), [
      'default/a',
      'other/c',
    ]);
    assert.deepEqual(names(store.list(PODS, { fieldSelector: 'spec.nodeName=node-1' }).items), [
      'default/b',
    ]);
    assert.deepEqual(names(store.list(PODS, { fieldSelector: 'spec.nodeName=' }).items), [
      'default/a',
      'other/c',
    ]);
    assert.deepEqual(
      names(store.list(PODS, { fieldSelector: 'metadata.name=c,metadata.namespace=other' }).items),
      ['other/c'],
    );
    rejects(() => store.list(PODS, { fieldSelector: 'spec.hostname=x' }), 400, 'BadRequest');
    rejects(() => store.list(PODS, { labelSelector: 'a in (' }), 400, 'BadRequest');
    const page1 = store.list(PODS, { limit: 2 });
    assert.deepEqual(names(page1.items), ['default/a', 'default/b']);
    assert.ok(page1.continue !== undefined);
    const page2 = store.list(PODS, { limit: 2, continue: page1.continue });
    assert.deepEqual(names(page2.items), ['other/c']);
    assert.equal(page2.continue, undefined);
  });

  it('keeps a bounded history: events after a version, 410 Expired before it or after compaction', () => {
    const store = newStore({ historyLimit: 3 });
    for (const name of ['a', 'b', 'c', 'd']) store.create(PODS, 'default', pod(name));
    assert.equal(store.oldestWatchableVersion(), 2);
    assert.deepEqual(
      store.eventsAfter(3).map((e) => e.object.metadata.name),
      ['c', 'd'],
    );
    const err = rejects(() => store.eventsAfter(1), 410, 'Expired');
    assert.equal(err.message, 'too old resource version: 1 (2)');
    store.compact();
    assert.deepEqual(store.eventsAfter(store.resourceVersion()), []);
    rejects(() => store.eventsAfter(4), 410, 'Expired');
  });

  it('notifies subscribers of every change with frozen objects; DELETED carries a new version', () => {
    const store = newStore();
    const seen: StoreEvent[] = [];
    const unsubscribe = store.subscribe((e) => seen.push(e));
    store.create(PODS, 'default', pod('a'));
    store.mutate(PODS, 'default', 'a', (p) => {
      p['status'] = { phase: 'Running' };
    });
    store.delete(PODS, 'default', 'a');
    unsubscribe();
    store.create(PODS, 'default', pod('b'));
    assert.deepEqual(
      seen.map((e) => [e.type, e.resourceVersion, e.object.metadata.resourceVersion]),
      [
        ['ADDED', 2, '2'],
        ['MODIFIED', 3, '3'],
        ['DELETED', 4, '4'],
      ],
    );
    assert.ok(Object.isFrozen(seen[0]?.object));
    assert.deepEqual(seen[1]?.object['status'], { phase: 'Running' });
    assert.equal(store.get(PODS, 'default', 'a'), undefined);
  });

  it('labels namespaces with their name and registers extra resources in one line', () => {
    const store = new ObjectStore({
      resources: [
        ...DEFAULT_RESOURCES,
        defineResource({
          group: 'apps',
          version: 'v1',
          resource: 'deployments',
          kind: 'Deployment',
        }),
      ],
    });
    const ns = store.create(NAMESPACES, '', { metadata: { name: 'team-a' } });
    assert.equal(ns.metadata.labels?.['kubernetes.io/metadata.name'], 'team-a');
    assert.deepEqual(ns['status'], { phase: 'Active' });
    const d = store.create({ group: 'apps', version: 'v1', resource: 'deployments' }, 'team-a', {
      metadata: { name: 'd' },
    });
    assert.equal(d.apiVersion, 'apps/v1');
    assert.equal(d.kind, 'Deployment');
  });
});
