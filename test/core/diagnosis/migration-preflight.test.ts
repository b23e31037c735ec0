import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { MigrationInput } from '../../../src/core/diagnosis/migration-preflight.js';
import { preflightMigration } from '../../../src/core/diagnosis/migration-preflight.js';
import type { SidecarSet } from '../../../src/core/api/sidecarset-types.js';

const sidecarSet = (
  name: string,
  spec: SidecarSet['spec'] = {},
  labels?: Record<string, string>,
): SidecarSet => ({
  apiVersion: 'apps.kruise.io/v1beta1',
  kind: 'SidecarSet',
  metadata: { name, ...(labels === undefined ? {} : { labels }) },
  spec: { containers: [{ name: 'log', image: 'log:1' }], ...spec },
});

const states = (input: MigrationInput): Record<string, string> =>
  Object.fromEntries(preflightMigration(input).map((c) => [c.name, c.state]));

describe('migration preflight from OpenKruise', () => {
  it('passes a cluster with nothing that would not carry over', () => {
    const checks = preflightMigration({
      sidecarSets: [sidecarSet('a', { namespace: 'web' }), sidecarSet('b')],
      webhookConfigurations: [
        { kind: 'MutatingWebhookConfiguration', name: 'sidecarset-mutating-webhook' },
      ],
    });
    assert.deepEqual(
      checks.map((c) => c.state),
      ['ok', 'ok', 'ok', 'ok', 'ok'],
    );
  });

  it('fails on OpenKruise webhooks still installed, naming them', () => {
    const [webhooks] = preflightMigration({
      sidecarSets: [],
      webhookConfigurations: [
        { kind: 'MutatingWebhookConfiguration', name: 'kruise-mutating-webhook-configuration' },
        { kind: 'ValidatingWebhookConfiguration', name: 'kruise-validating-webhook-configuration' },
        { kind: 'MutatingWebhookConfiguration', name: 'istio-sidecar-injector' },
      ],
    });
    assert.ok(webhooks);
    assert.equal(webhooks.state, 'failed');
    assert.match(
      webhooks.message,
      /MutatingWebhookConfiguration kruise-mutating-webhook-configuration, ValidatingWebhookConfiguration kruise-validating/,
    );
    assert.doesNotMatch(webhooks.message, /istio/);
    assert.match(webhooks.fix ?? '', /step 2/);
  });

  it('names the SidecarSets with namespace and namespaceSelector, pins, patches, the old label', () => {
    const checks = preflightMigration({
      sidecarSets: [
        sidecarSet('z-both', { namespace: 'a', namespaceSelector: { matchLabels: { x: 'y' } } }),
        sidecarSet('a-both', { namespace: 'a', namespaceSelector: {} }),
        sidecarSet('pinned', { injectionStrategy: { revision: { customVersion: 'v1' } } }),
        sidecarSet('pinned-by-name', {
          injectionStrategy: { revision: { revisionName: 'pinned-by-name-abc' } },
        }),
        sidecarSet('policy-only', { injectionStrategy: { revision: { policy: 'Always' } } }),
        sidecarSet('patches', { patchPodMetadata: [{ annotations: { a: 'b' } }] }),
        sidecarSet('labelled', {}, { 'apps.kruise.io/sidecarset-custom-version': 'v2' }),
      ],
      webhookConfigurations: [],
    });
    const byName = new Map(checks.map((c) => [c.name, c]));
    assert.equal(byName.get('namespace and namespaceSelector')?.state, 'failed');
    assert.match(
      byName.get('namespace and namespaceSelector')?.message ?? '',
      /in a-both, z-both:/,
    );
    assert.equal(byName.get('pinned revisions')?.state, 'failed');
    assert.match(byName.get('pinned revisions')?.message ?? '', /in pinned, pinned-by-name:/);
    assert.equal(byName.get('patchPodMetadata')?.state, 'warning');
    assert.match(byName.get('patchPodMetadata')?.message ?? '', /used by patches:/);
    assert.equal(byName.get('custom version label')?.state, 'warning');
    assert.match(byName.get('custom version label')?.message ?? '', /^labelled carry/);
  });

  it("reports the manager's feature gates and environment, and the patch whitelist", () => {
    assert.deepEqual(
      states({
        sidecarSets: [],
        webhookConfigurations: [],
        kruiseManager: {
          args: [
            '--enable-leader-election',
            '--feature-gates=PodWebhook=true,ResourcesDeletionProtection=false',
          ],
          env: [{ name: 'POD_NAMESPACE' }, { name: 'KUBE_CLIENT_QPS', value: '50' }],
        },
        kruiseConfiguration: { SidecarSet_PatchPodMetadata_WhiteList: '{"rules":[]}' },
      }),
      {
        "OpenKruise's webhooks": 'ok',
        'namespace and namespaceSelector': 'ok',
        'pinned revisions': 'ok',
        patchPodMetadata: 'ok',
        'custom version label': 'ok',
        "OpenKruise manager's settings": 'warning',
        'patchPodMetadata whitelist': 'warning',
      },
    );
    const [settings] = preflightMigration({
      sidecarSets: [],
      webhookConfigurations: [],
      kruiseManager: {
        args: ['--feature-gates=A=true'],
        env: [{ name: 'KUBE_CLIENT_QPS', value: '50' }],
      },
    }).slice(-1);
    assert.match(settings?.message ?? '', /--feature-gates=A=true, KUBE_CLIENT_QPS=50/);
    assert.equal(
      states({
        sidecarSets: [],
        webhookConfigurations: [],
        kruiseManager: { args: ['--metrics-addr=:8080'], env: [{ name: 'POD_NAME' }] },
        kruiseConfiguration: {},
      })["OpenKruise manager's settings"],
      'ok',
    );
  });
});
