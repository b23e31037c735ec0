/**
 * The pod webhook scoped to the SidecarSets (docs/adr/0012-scoped-pod-webhook.md) in a real
 * kube-apiserver: the leader writes the matchCondition and selectors, the API server accepts and
 * evaluates them, a pod no SidecarSet can match never reaches the webhook (counted in its
 * metrics), a pod one matches does, and turning scoping off removes the scope.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { stringify } from 'yaml';

import { eventually } from '../support/eventually.js';
import type { SidecarsetProcess } from './processes.js';
import { errors, lastWords } from './processes.js';
import type { Installation } from './support.js';
import { install, podWebhookScope, scopeIncludes, useControlPlane } from './support.js';

interface WebhookJson {
  name: string;
  namespaceSelector?: { matchExpressions?: { key: string; values?: string[] }[] };
}

describe('the pod webhook scoped to the SidecarSets, in a real API server', () => {
  const cluster = useControlPlane();
  const plane = cluster.plane;
  let installation: Installation;
  let serve: SidecarsetProcess;

  const podWebhook = async (): Promise<WebhookJson> => {
    const got = await plane().kubectl([
      'get',
      'mutatingwebhookconfiguration',
      'sidecarset-mutating-webhook',
      '-o',
      'json',
    ]);
    assert.equal(got.code, 0, got.stderr);
    const config = JSON.parse(got.stdout) as { webhooks: WebhookJson[] };
    const found = config.webhooks.find((w) => w.name === 'mpod.sidecarset.kruise.io');
    assert.ok(found);
    return found;
  };
  const scopeExpression = (): Promise<string | undefined> => podWebhookScope(plane());

  /** /mutate-pods requests the webhook answered, from its metrics. */
  const podReviews = async (): Promise<number> => {
    const listening = serve.logs.find((e) => e.msg === 'webhook listening');
    const text = await (await fetch(`${String(listening?.['metricsUrl'])}/metrics`)).text();
    return text
      .split('\n')
      .filter(
        (l) => l.startsWith('sidecarset_admission_requests_total{') && l.includes('"mutate-pods"'),
      )
      .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
  };

  const createPod = async (namespace: string, name: string, app: string): Promise<string[]> => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace, labels: { app } },
      spec: { containers: [{ name: 'main', image: 'main:1' }] },
    };
    const created = await plane().kubectl(['create', '-o', 'json', '-f', '-'], {
      input: stringify(pod),
    });
    assert.equal(created.code, 0, created.stderr);
    const json = JSON.parse(created.stdout) as { spec: { containers: { name: string }[] } };
    return json.spec.containers.map((c) => c.name);
  };

  before(async () => {
    installation = await install(plane());
    serve = await installation.serve();
    cluster.defer(() => serve.stop());
    await plane().createNamespace('shop');
    await plane().createNamespace('elsewhere');
  });

  it('with no SidecarSet, the API server is told to call the webhook for no pod', async () => {
    await eventually(async () => (await scopeExpression()) === 'false', 'the scope written');
    const before = await podReviews();
    assert.deepEqual(await createPod('shop', 'no-sidecarset', 'cache'), ['main']);
    assert.equal(await podReviews(), before);
  });

  it('a SidecarSet widens the scope to its namespace and selector, and only those pods reach us', async () => {
    const sidecarSet = {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'shop-agent' },
      spec: {
        namespace: 'shop',
        selector: { matchLabels: { app: 'web' } },
        containers: [{ name: 'agent', image: 'agent:1' }],
      },
    };
    const applied = await plane().kubectl(['apply', '-f', '-'], { input: stringify(sidecarSet) });
    assert.equal(applied.code, 0, applied.stderr);
    await scopeIncludes(plane(), 'shop');
    const webhook = await podWebhook();
    assert.deepEqual(
      webhook.namespaceSelector?.matchExpressions?.find(
        (e) => e.key === 'kubernetes.io/metadata.name' && e.values?.includes('shop'),
      )?.values,
      ['shop'],
    );

    const before = await podReviews();
    assert.deepEqual(await createPod('elsewhere', 'other-namespace', 'web'), ['main']);
    assert.deepEqual(await createPod('shop', 'other-app', 'db'), ['main']);
    assert.equal(await podReviews(), before, 'pods out of scope reached the webhook');
    assert.deepEqual(await createPod('shop', 'in-scope', 'web'), ['agent', 'main']);
    assert.ok((await podReviews()) > before, 'the pod in scope reached the webhook');
  });

  it('a pod created while the webhook is down is reported as missed within one resync', async () => {
    assert.equal(await serve.stop('SIGTERM'), 0, lastWords(serve));
    assert.deepEqual(await createPod('shop', 'while-down', 'web'), ['main']);
    serve = await installation.serve();
    const missedPods = async (): Promise<unknown> => {
      const got = await plane().kubectl(['get', 'sidecarset', 'shop-agent', '-o', 'json']);
      return (JSON.parse(got.stdout) as { status?: { missedPods?: number } }).status?.missedPods;
    };
    // After the restart: leadership (the old replica released the Lease), then the first check.
    await eventually(async () => (await missedPods()) === 1, 'status.missedPods 1', 90_000);
    const events = async (namespace: string, name: string): Promise<string[]> => {
      const got = await plane().kubectl([
        'get',
        'events',
        '-n',
        namespace,
        '--field-selector',
        `involvedObject.name=${name},reason=SidecarNotInjected`,
        '-o',
        'json',
      ]);
      assert.equal(got.code, 0, got.stderr);
      return (JSON.parse(got.stdout) as { items: { message: string }[] }).items.map(
        (e) => e.message,
      );
    };
    await eventually(
      async () => (await events('shop', 'while-down')).length === 1,
      'the pod event',
    );
    const [aggregated] = await events('default', 'shop-agent');
    assert.match(aggregated ?? '', /^1 pods .*shop\/while-down$/);
    const listening = serve.logs.find((e) => e.msg === 'webhook listening');
    const metrics = await (await fetch(`${String(listening?.['metricsUrl'])}/metrics`)).text();
    assert.match(metrics, /^sidecarset_missed_pods\{sidecarset="shop-agent"\} 1$/m);
    assert.equal(await missedPods(), 1, 'the pods injected before are not missed');
  });

  it('with --scope-pod-webhook false the scope is removed', async () => {
    assert.equal(await serve.stop('SIGTERM'), 0, lastWords(serve));
    serve = await installation.serve(['--scope-pod-webhook', 'false']);
    await eventually(async () => (await scopeExpression()) === undefined, 'the scope removed');
    const webhook = await podWebhook();
    assert.equal(
      webhook.namespaceSelector?.matchExpressions?.some((e) => e.values?.includes('shop')),
      false,
    );
    const before = await podReviews();
    assert.deepEqual(await createPod('elsewhere', 'unscoped', 'db'), ['main']);
    assert.ok((await podReviews()) > before, 'without a scope every pod reaches the webhook');
  });

  it('serve logged no errors', () => {
    assert.deepEqual(errors(serve), []);
  });
});
