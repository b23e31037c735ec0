import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import jsonPatch from 'fast-json-patch';

import type { ScopedConfiguration } from '../../../src/core/scope/configuration-patch.js';
import {
  SCOPE_ANNOTATION,
  isPodWebhook,
  scopePatch,
} from '../../../src/core/scope/configuration-patch.js';
import { SCOPE_CONDITION_NAME, webhookScopes } from '../../../src/core/scope/cel.js';
import type { WebhookScope } from '../../../src/core/scope/webhook-scope.js';
import { makeSidecarSet } from '../../support/factories.js';

const INSTALLER_NS = {
  matchExpressions: [{ key: 'sidecarset.kruise.io/injection', operator: 'NotIn', values: ['off'] }],
};

function configuration(): ScopedConfiguration {
  return {
    metadata: { resourceVersion: '7' },
    webhooks: [
      {
        name: 'msidecarset.sidecarset.kruise.io',
        clientConfig: { service: { path: '/mutate-sidecarsets' } },
      },
      {
        name: 'mpod.sidecarset.kruise.io',
        clientConfig: { service: { path: '/mutate-pods' } },
        matchConditions: [{ name: 'theirs', expression: 'true' }],
        namespaceSelector: structuredClone(INSTALLER_NS),
      },
    ],
  };
}

function applied(
  config: ScopedConfiguration,
  scope: WebhookScope | undefined,
): ScopedConfiguration {
  const ops = scopePatch(config, scope);
  return jsonPatch.applyPatch(structuredClone(config), ops as jsonPatch.Operation[]).newDocument;
}

const inShop = webhookScopes([
  makeSidecarSet('a', { namespace: 'shop', selector: { matchLabels: { app: 'web' } } }),
])[0] as WebhookScope;
const inPay = webhookScopes([
  makeSidecarSet('b', { namespace: 'pay', selector: { matchLabels: { app: 'api' } } }),
])[0] as WebhookScope;

describe('scopePatch', () => {
  it('writes our condition and requirements on the pod webhook only, guarded and versioned', () => {
    const config = configuration();
    const ops = scopePatch(config, inShop);
    assert.deepEqual(ops.slice(0, 2), [
      { op: 'replace', path: '/metadata/resourceVersion', value: '7' },
      { op: 'test', path: '/webhooks/1/name', value: 'mpod.sidecarset.kruise.io' },
    ]);
    const after = applied(config, inShop);
    const pod = after.webhooks?.[1];
    assert.ok(pod);
    assert.deepEqual(
      pod.matchConditions?.map((c) => c.name),
      ['theirs', SCOPE_CONDITION_NAME],
    );
    assert.deepEqual(pod.namespaceSelector?.matchExpressions, [
      ...INSTALLER_NS.matchExpressions,
      { key: 'kubernetes.io/metadata.name', operator: 'In', values: ['shop'] },
    ]);
    assert.deepEqual(pod.objectSelector, {
      matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }],
    });
    assert.deepEqual(after.webhooks?.[0], config.webhooks?.[0]);
    assert.deepEqual(scopePatch(after, inShop), [], 'nothing to write the second time');
  });

  it('replaces what it added before and keeps what the installer has', () => {
    const once = applied(configuration(), inShop);
    const twice = applied(once, inPay);
    const pod = twice.webhooks?.[1];
    assert.ok(pod);
    assert.deepEqual(pod.namespaceSelector?.matchExpressions, [
      ...INSTALLER_NS.matchExpressions,
      { key: 'kubernetes.io/metadata.name', operator: 'In', values: ['pay'] },
    ]);
    assert.equal(pod.matchConditions?.length, 2);
    assert.match(JSON.stringify(pod.matchConditions), /pay/);
  });

  it('removes all it added, and its annotation, when scoping is off', () => {
    const original = configuration();
    const off = applied(applied(original, inShop), undefined);
    // The API server defaults an absent objectSelector to {}: the same thing.
    const [sidecarSets, pods] = original.webhooks ?? [];
    assert.deepEqual(off.webhooks, [sidecarSets, { ...pods, objectSelector: {} }]);
    assert.equal(off.metadata?.annotations?.[SCOPE_ANNOTATION], undefined);
    assert.deepEqual(scopePatch(original, undefined), []);
  });

  it('adds the annotation to existing annotations and survives a corrupt one', () => {
    const config = configuration();
    config.metadata = {
      resourceVersion: '1',
      annotations: { other: 'x', [SCOPE_ANNOTATION]: '{' },
    };
    const after = applied(config, inShop);
    const annotations = after.metadata?.annotations ?? {};
    assert.equal(annotations['other'], 'x');
    assert.match(annotations[SCOPE_ANNOTATION] ?? '', /mpod/);
    const odd = configuration();
    odd.metadata = {
      annotations: {
        [SCOPE_ANNOTATION]: '{"mpod.sidecarset.kruise.io":{"objectSelector":3},"x":1}',
      },
    };
    assert.deepEqual(applied(odd, inShop).webhooks?.[1]?.objectSelector, {
      matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }],
    });
    const array = configuration();
    array.metadata = { annotations: { [SCOPE_ANNOTATION]: '[]' } };
    assert.notEqual(scopePatch(array, inShop).length, 0);
  });

  it('finds the pod webhook by its service path or URL path', () => {
    assert.equal(
      isPodWebhook({ name: 'x', clientConfig: { url: 'https://h:1/mutate-pods' } }),
      true,
    );
    assert.equal(isPodWebhook({ name: 'x', clientConfig: { url: 'https://h:1/other' } }), false);
    assert.equal(isPodWebhook({ name: 'x' }), false);
  });
});
