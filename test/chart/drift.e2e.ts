/**
 * The chart and manifests/ kept from drifting: both rendered (helm template, kubectl kustomize) and
 * compared object by object. Only the differences listed in docs/helm.md ("Differences from
 * manifests/") are allowed, and removed here before comparing.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import type { KubeObject, Tools } from './tools.js';
import { chartTools, helmTemplate, key, kustomize } from './tools.js';

const tools = await chartTools();
const skip = 'skip' in tools ? tools.skip : false;

/** The labels Helm's conventions add (docs/helm.md). */
const HELM_LABELS = [
  'app.kubernetes.io/instance',
  'app.kubernetes.io/managed-by',
  'app.kubernetes.io/version',
  'helm.sh/chart',
];

function withoutHelmLabels(labels: Record<string, string> | undefined): void {
  for (const label of HELM_LABELS) delete labels?.[label];
}

/** manifests/cert-manager's Issuers and Certificates have no labels; the chart's have the usual. */
const UNLABELLED_IN_KUSTOMIZE = new Set(['Issuer', 'Certificate']);

/** The `helm test` Pod, its ServiceAccount and RBAC, which manifests/ has no use for. */
const isHelmTest = (o: KubeObject): boolean =>
  o.metadata.labels?.['app.kubernetes.io/component'] === 'test';

function normalizeChart(o: KubeObject): KubeObject {
  withoutHelmLabels(o.metadata.labels);
  if (UNLABELLED_IN_KUSTOMIZE.has(o.kind)) delete o.metadata.labels;
  if (o.kind === 'CustomResourceDefinition') {
    // crds.keep: `helm uninstall` keeps the CRD; kubectl has no such annotation (docs/deploy.md).
    assert.equal(o.metadata.annotations?.['helm.sh/resource-policy'], 'keep');
    delete o.metadata.annotations['helm.sh/resource-policy'];
    if (Object.keys(o.metadata.annotations ?? {}).length === 0) delete o.metadata.annotations;
  }
  if (o.kind === 'Deployment') {
    const spec = o['spec'] as { template: { metadata: { labels?: Record<string, string> } } };
    withoutHelmLabels(spec.template.metadata.labels);
  }
  return o;
}

/**
 * The base's caBundle placeholder: the chart has no caBundle unless certificates.caBundle is set.
 * manifests/cert-manager removes it (the CA injector writes the caBundle).
 */
function withoutPlaceholder(o: KubeObject): KubeObject {
  const webhooks = o['webhooks'] as { clientConfig: { caBundle?: string } }[] | undefined;
  for (const webhook of webhooks ?? []) {
    if (!('caBundle' in webhook.clientConfig)) continue;
    assert.equal(webhook.clientConfig.caBundle, 'Q0FfQlVORExFX1BMQUNFSE9MREVS');
    delete webhook.clientConfig.caBundle;
  }
  return o;
}

function byKey(objects: readonly KubeObject[]): Map<string, KubeObject> {
  return new Map(objects.map((o) => [key(o), o]));
}

function assertSameObjects(chart: readonly KubeObject[], kustomized: readonly KubeObject[]): void {
  const fromChart = byKey(chart.filter((o) => !isHelmTest(o)).map(normalizeChart));
  const fromKustomize = byKey(kustomized.map(withoutPlaceholder));
  assert.deepEqual([...fromChart.keys()].sort(), [...fromKustomize.keys()].sort());
  for (const [k, o] of fromKustomize) assert.deepEqual(fromChart.get(k), o, k);
}

describe('the chart renders what manifests/ does', { skip }, () => {
  let t: Tools;
  before(() => {
    if (!('skip' in tools)) t = tools;
  });

  it('default values (self-managed certificate): manifests/', async () => {
    assertSameObjects(helmTemplate(t), await kustomize(t, ['.']));
  });

  it('certificates.source=secret: manifests/base', async () => {
    assertSameObjects(
      helmTemplate(t, ['certificates.source=secret']),
      await kustomize(t, ['base']),
    );
  });

  it('certificates.source=certManager: manifests/cert-manager', async () => {
    assertSameObjects(
      helmTemplate(t, ['certificates.source=certManager']),
      await kustomize(t, ['cert-manager']),
    );
  });

  it('every monitoring toggle: the monitoring and pod-monitor components', async () => {
    const toggles = ['serviceMonitor', 'podMonitor', 'prometheusRule', 'dashboard'];
    assertSameObjects(
      helmTemplate(
        t,
        toggles.map((m) => `monitoring.${m}.enabled=true`),
      ),
      await kustomize(t, ['.'], ['monitoring', 'monitoring/pod-monitor']),
    );
  });

  it('notices a difference', async () => {
    const chart = helmTemplate(t, ['webhook.timeoutSeconds=7']);
    const kustomized = await kustomize(t, ['.']);
    assert.throws(() => {
      assertSameObjects(chart, kustomized);
    }, /timeoutSeconds/);
  });
});
