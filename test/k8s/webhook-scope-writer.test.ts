/**
 * The scope writer and keeper against the fake API server, with the real client-node: the scope
 * written once and not again while it is right, a 409 read again, a refused level followed by a
 * wider one, a SidecarSet change written shortly after, the scope removed when scoping is off.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';

import { pino } from 'pino';

import { SCOPE_CONDITION_NAME, webhookScopes } from '../../src/core/scope/cel.js';
import type { SidecarSet } from '../../src/core/api/sidecarset-types.js';
import { createScopeKeeper } from '../../src/controller/scope-keeper.js';
import type { ScopeWriter } from '../../src/k8s/webhook-scope-writer.js';
import { createScopeWriter } from '../../src/k8s/webhook-scope-writer.js';
import { startFakeApiServer, waitForStore } from '../fake-apiserver/index.js';
import type { FakeApiServer, JsonObject } from '../fake-apiserver/index.js';
import { CERT_RESOURCES, MUTATING } from '../support/cert-resources.js';
import { makeSidecarSet } from '../support/factories.js';

const NAME = 'sidecarset-mutating-webhook';
const logger = pino({ level: process.env['DBG'] ? 'debug' : 'silent' });
let server: FakeApiServer;

before(async () => {
  server = await startFakeApiServer({ resources: CERT_RESOURCES });
});
after(async () => {
  await server.close();
});
beforeEach(() => {
  if (server.store.get(MUTATING, '', NAME)) server.store.delete(MUTATING, '', NAME);
  server.store.create(MUTATING, '', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: NAME },
    webhooks: [
      {
        name: 'mpod.sidecarset.kruise.io',
        clientConfig: { url: 'https://127.0.0.1:1/mutate-pods' },
      },
    ],
  });
});

const writer = (): ReturnType<typeof createScopeWriter> =>
  createScopeWriter({ kubeConfig: server.kubeConfig(), configurationName: NAME, logger });

function podWebhook(): JsonObject {
  const config = server.store.get(MUTATING, '', NAME) as JsonObject;
  const webhooks = config['webhooks'] as JsonObject[];
  return webhooks.find((w) => w['name'] === 'mpod.sidecarset.kruise.io') as JsonObject;
}

function condition(): string | undefined {
  const conditions = (podWebhook()['matchConditions'] ?? []) as {
    name: string;
    expression: string;
  }[];
  return conditions.find((c) => c.name === SCOPE_CONDITION_NAME)?.expression;
}

const patches = (): number =>
  server.control.requests((r) => r.method === 'PATCH' && r.resource === MUTATING.resource).length;

const shop = [makeSidecarSet('a', { namespace: 'shop' })];

describe('createScopeWriter', () => {
  it('writes the narrowest scope once, then nothing while it is right', async () => {
    const before = patches();
    const written = await writer().write(webhookScopes(shop));
    assert.equal(written?.precision, 'selectors');
    assert.match(condition() ?? '', /request.namespace == "shop"/);
    await writer().write(webhookScopes(shop));
    assert.equal(patches() - before, 1);
  });

  it('reads again after a 409 and falls back to a wider level after a 422', async () => {
    server.control.failNext({
      match: (r) => r.method === 'PATCH' && r.resource === MUTATING.resource,
      status: 409,
    });
    server.control.failNext({
      match: (r) => r.method === 'PATCH' && r.resource === MUTATING.resource,
      status: 422,
    });
    const written = await writer().write(webhookScopes(shop));
    assert.equal(written?.precision, 'label-keys');
    assert.ok(condition() !== undefined);
  });

  it('tries the same level again after a 422 from webhooks changed in between', async () => {
    // Just before our PATCH lands, another writer puts a webhook in front of ours: the patch's
    // `test` of the name at that index fails, which the API server answers with 422 too.
    let changed = false;
    server.control.failNext({
      match: (r) => {
        if (changed || r.method !== 'PATCH' || r.resource !== MUTATING.resource) return false;
        changed = true;
        const config = server.store.get(MUTATING, '', NAME) as JsonObject;
        const webhooks = config['webhooks'] as JsonObject[];
        const other = { name: 'other.example.com', clientConfig: { url: 'https://x/other' } };
        server.store.update(MUTATING, '', NAME, { ...config, webhooks: [other, ...webhooks] });
        return false;
      },
      status: 500,
    });
    const before = patches();
    const written = await writer().write(webhookScopes(shop));
    assert.ok(changed);
    assert.equal(written?.precision, 'selectors', 'not widened');
    assert.equal(patches() - before, 2);
    const webhooks = (server.store.get(MUTATING, '', NAME) as JsonObject)[
      'webhooks'
    ] as JsonObject[];
    assert.equal(webhooks.length, 2);
    assert.match(condition() ?? '', /request.namespace == "shop"/);
  });

  it('removes the scope when given none, and says so when the configuration is missing', async () => {
    await writer().write(webhookScopes(shop));
    assert.equal(await writer().write(undefined), undefined);
    assert.equal(condition(), undefined);
    server.store.delete(MUTATING, '', NAME);
    assert.equal(await writer().write(webhookScopes(shop)), undefined);
  });

  it('writes nothing once its signal is aborted (leadership lost)', async () => {
    const before = patches();
    const lost = new AbortController();
    lost.abort(new Error('leadership lost'));
    await assert.rejects(writer().write(webhookScopes(shop), lost.signal), /leadership lost/);
    assert.equal(patches(), before);
    assert.equal(condition(), undefined);
  });
});

describe('createScopeKeeper', () => {
  it('writes on leading and shortly after each change', async () => {
    let sets: SidecarSet[] = [];
    const keeper = createScopeKeeper({
      writer: writer(),
      sidecarSets: () => sets,
      enabled: true,
      logger,
      debounceMs: 10,
    });
    const leadership = new AbortController();
    keeper.lead(leadership.signal);
    await waitForStore(server.store, () => (condition() === 'false' ? true : undefined));
    sets = shop;
    keeper.changed();
    await waitForStore(server.store, () => (condition()?.includes('"shop"') ? true : undefined));
    leadership.abort();
  });

  it('removes a scope when disabled', async () => {
    await writer().write(webhookScopes(shop));
    const keeper = createScopeKeeper({
      writer: writer(),
      sidecarSets: () => shop,
      enabled: false,
      logger,
    });
    const leadership = new AbortController();
    keeper.lead(leadership.signal);
    await waitForStore(server.store, () => (condition() === undefined ? true : undefined));
    leadership.abort();
  });

  it('hands its leadership to the write under way, and writes no more once it ends', async () => {
    const signals: (AbortSignal | undefined)[] = [];
    const hung: ScopeWriter = {
      // An API server that does not answer: the write ends only when its signal aborts.
      write: (_levels, signal) => {
        signals.push(signal);
        return new Promise((_resolve, reject) => {
          signal?.addEventListener('abort', () => {
            reject(signal.reason as Error);
          });
        });
      },
      webhookSelectors: () => ({}),
    };
    const keeper = createScopeKeeper({
      writer: hung,
      sidecarSets: () => shop,
      enabled: true,
      logger,
      debounceMs: 1,
      resyncMs: 5,
    });
    const leadership = new AbortController();
    keeper.lead(leadership.signal);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(signals, [leadership.signal], 'one write, given the leadership signal');
    leadership.abort();
    keeper.changed();
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(signals.length, 1, 'no write after leadership ended');
  });
});
