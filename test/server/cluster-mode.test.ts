/**
 * `sidecarset serve` in cluster mode: SidecarSets and Namespaces come from an API server (the fake
 * one under test/fake-apiserver) through client-node informers.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';

import jsonPatch from 'fast-json-patch';
import { parse } from 'yaml';

import type { Served } from '../../src/cli/serve.js';
import { startServe } from '../../src/cli/serve.js';
import type { Pod } from '../../src/core/api/k8s-types.js';
import type { FakeApiServer, JsonValue } from '../fake-apiserver/index.js';
import { NAMESPACES, SIDECARSETS, startFakeApiServer } from '../fake-apiserver/index.js';
import { podReview, sidecarSetReview } from '../support/admission.js';
import { httpsRequest, postJson } from '../support/https.js';

const examples = new URL('../../examples/', import.meta.url).pathname;

interface Answer {
  response: { allowed: boolean; patch?: string; status?: { message: string } };
}

async function eventually<T>(
  probe: () => Promise<T>,
  ok: (value: T) => boolean,
  what: string,
): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await probe();
    if (ok(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('sidecarset serve in cluster mode', () => {
  let api: FakeApiServer;
  let served: Served;
  let ca: string;
  let logtail: Record<string, unknown>;

  const injectedImages = async (namespace: string): Promise<string[]> => {
    const pod = parse(await readFile(join(examples, 'nginx-pod.yaml'), 'utf8')) as Pod;
    pod.metadata.namespace = namespace;
    const answer = (await postJson(`${served.url}/mutate-pods`, podReview(pod, { namespace }), ca))
      .json as Answer;
    if (answer.response.patch === undefined) return pod.spec.containers.map((c) => c.image ?? '');
    const ops = JSON.parse(
      Buffer.from(answer.response.patch, 'base64').toString(),
    ) as jsonPatch.Operation[];
    const out = jsonPatch.applyPatch(structuredClone(pod), ops).newDocument;
    return out.spec.containers.map((c) => c.image ?? '');
  };

  before(async () => {
    api = await startFakeApiServer();
    api.store.create(NAMESPACES, '', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'shop', labels: { env: 'prod' } },
    });
    logtail = parse(await readFile(join(examples, 'logtail-sidecarset.yaml'), 'utf8')) as Record<
      string,
      unknown
    >;
    api.store.create(SIDECARSETS, '', logtail as JsonValue);
    api.store.create(SIDECARSETS, '', {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'SidecarSet',
      metadata: { name: 'prod-agent' },
      spec: {
        selector: { matchLabels: { app: 'nginx' } },
        namespaceSelector: { matchLabels: { env: 'prod' } },
        containers: [{ name: 'agent', image: 'agent:1' }],
      },
    });
    const dir = await mkdtemp(join(tmpdir(), 'cluster-'));
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(kubeconfig, api.kubeConfig().exportConfig());
    served = await startServe(
      { kubeconfig, port: 0, host: '127.0.0.1', logLevel: 'error', devCertDir: dir },
      { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() },
    );
    ca = await readFile(join(dir, 'ca.crt'), 'utf8');
    await eventually(
      () => httpsRequest(`${served.url}/readyz`, { ca }),
      (r) => r.status === 200,
      'readyz',
    );
  });

  after(async () => {
    await served.close();
    await api.close();
  });

  it("injects the cluster's SidecarSets, namespaceSelector read from Namespace labels", async () => {
    assert.deepEqual(await injectedImages('shop'), [
      'log-service/logtail:0.16.16',
      'agent:1',
      'log-service/docker-log-test:latest',
    ]);
    assert.deepEqual(await injectedImages('default'), [
      'log-service/logtail:0.16.16',
      'log-service/docker-log-test:latest',
    ]);
  });

  it('the webhook and its controller read one cache: each collection is listed and watched once', async () => {
    // The controller's pod watch opens last: by then every watch of the process is open.
    await api.control.waitForWatches((open) =>
      open.some((w) => w.path.startsWith('/api/v1/pods?')),
    );
    const paths = (verb: string): string[] =>
      api.control
        .requests((r) => r.verb === verb)
        .map((r) => r.path)
        .sort();
    const expected = [
      '/api/v1/namespaces',
      '/apis/apps/v1/namespaces/sidecarset-system/controllerrevisions',
      '/api/v1/pods',
      '/apis/apps.kruise.io/v1beta1/sidecarsets',
    ].sort();
    assert.deepEqual(paths('list'), expected);
    assert.deepEqual(paths('watch'), expected);
  });

  it('follows changes to SidecarSets and Namespaces', async () => {
    api.store.mutate(SIDECARSETS, '', 'logtail-sidecarset', (obj) => {
      const spec = obj['spec'] as { containers: { image: string }[] };
      const first = spec.containers[0];
      if (first) first.image = 'log-service/logtail:0.16.18';
    });
    api.store.mutate(NAMESPACES, '', 'default', (obj) => {
      obj.metadata.labels = { ...obj.metadata.labels, env: 'prod' };
    });
    await eventually(
      () => injectedImages('default'),
      (images) =>
        images.join() === 'log-service/logtail:0.16.18,agent:1,log-service/docker-log-test:latest',
      'the update',
    );
  });

  it('recovers after its watches break', async () => {
    await api.control.waitForWatches((watches) => watches.length >= 2);
    assert.ok(api.control.closeWatches(() => true, { abrupt: true }) >= 2);
    api.store.mutate(SIDECARSETS, '', 'prod-agent', (obj) => {
      const spec = obj['spec'] as { containers: { image: string }[] };
      const first = spec.containers[0];
      if (first) first.image = 'agent:2';
    });
    await eventually(
      () => injectedImages('shop'),
      (images) => images.includes('agent:2'),
      'the informer to come back',
    );
  });

  it('validates new SidecarSets against those in the cluster', async () => {
    // As the API server does it: the mutating webhook first, then the validating one.
    const created = { ...logtail, metadata: { name: 'another' } };
    const mutated = (
      await postJson(`${served.url}/mutate-sidecarsets`, sidecarSetReview(created), ca)
    ).json as Answer;
    const ops = JSON.parse(
      Buffer.from(mutated.response.patch ?? '', 'base64').toString(),
    ) as jsonPatch.Operation[];
    const clash = jsonPatch.applyPatch(structuredClone(created), ops).newDocument;
    const answer = (
      await postJson(`${served.url}/validate-sidecarsets`, sidecarSetReview(clash), ca)
    ).json as Answer;
    assert.equal(answer.response.allowed, false);
    assert.match(
      answer.response.status?.message ?? '',
      /container logtail already exist in logtail-sidecarset/,
    );
  });
});
