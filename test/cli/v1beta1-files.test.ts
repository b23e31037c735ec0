/**
 * validate, inject and plan read v1beta1 files as they read v1alpha1 ones, with the same result
 * for the same SidecarSet written in either version.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { parse, stringify } from 'yaml';

import { convertSidecarSet } from '../../src/core/conversion/sidecarset-conversion.js';
import { withHashes } from '../../src/core/api/hash.js';
import type { SidecarSet } from '../../src/core/api/sidecarset-types.js';
import { grayReleasePods } from '../fixtures/plan/gray-release-pods.js';
import { runCli } from '../support/cli.js';

const examples = fileURLToPath(new URL('../../examples/', import.meta.url));
const alphaExample = join(examples, 'logtail-sidecarset.yaml');
const betaExample = join(examples, 'logtail-sidecarset-v1beta1.yaml');
const nginxPod = join(examples, 'nginx-pod.yaml');
const grayRelease = fileURLToPath(
  new URL('../fixtures/plan/gray-release-sidecarset.yaml', import.meta.url),
);

async function tempFile(name: string, text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'v1beta1-'));
  const file = join(dir, name);
  await writeFile(file, text);
  return file;
}

/** The v1alpha1 file's SidecarSet as a v1beta1 file. */
async function asV1beta1(file: string): Promise<string> {
  const object = parse(await readFile(file, 'utf8')) as unknown;
  return tempFile('v1beta1.yaml', stringify(convertSidecarSet(object, 'apps.kruise.io/v1beta1')));
}

describe('v1beta1 SidecarSet files', () => {
  it('the v1beta1 example is the v1alpha1 example with spec.customVersion', async () => {
    const alpha = parse(await readFile(alphaExample, 'utf8')) as Record<string, unknown>;
    const beta = parse(await readFile(betaExample, 'utf8')) as Record<string, unknown>;
    const back = convertSidecarSet(beta, 'apps.kruise.io/v1alpha1');
    const metadata = back['metadata'] as { labels?: Record<string, string> };
    assert.deepEqual(metadata.labels, {
      'apps.kruise.io/sidecarset-custom-version': 'logtail-0.16.16',
    });
    delete metadata.labels;
    assert.deepEqual(back, alpha);
  });

  it('validate accepts them and names v1beta1 fields in its errors', async () => {
    const ok = await runCli(['validate', '--sidecarsets', betaExample]);
    assert.equal(ok.code, 0, ok.stderr);
    const bad = await tempFile(
      'bad.yaml',
      [
        'apiVersion: apps.kruise.io/v1beta1',
        'kind: SidecarSet',
        'metadata: {name: bad, labels: {apps.kruise.io/sidecarset-custom-version: v1}}',
        'spec: {namespace: shop, selector: {matchLabels: {app: a}}, containers: [{name: c, image: c}]}',
      ].join('\n'),
    );
    const result = await runCli(['validate', '--sidecarsets', bad]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /SidecarSet "bad": spec\.namespace: Forbidden: unknown field/);
    assert.match(
      result.stderr,
      /SidecarSet "bad": metadata\.labels\[apps\.kruise\.io\/sidecarset-custom-version\]: Forbidden: in apps\.kruise\.io\/v1beta1 the custom version is spec\.customVersion/,
    );
  });

  it('inject gives the same pod for either version', async () => {
    const alpha = await runCli(['inject', '--sidecarsets', alphaExample, '-f', nginxPod]);
    const beta = await runCli(['inject', '--sidecarsets', betaExample, '-f', nginxPod]);
    assert.equal(alpha.code, 0, alpha.stderr);
    assert.equal(beta.code, 0, beta.stderr);
    assert.match(beta.stdout, /name: logtail/);
    assert.equal(beta.stdout, alpha.stdout);
  });

  it('inject matches a v1alpha1 namespace and its v1beta1 namespaceSelector alike', async () => {
    const text = (await readFile(alphaExample, 'utf8')).replace(
      'spec:\n',
      'spec:\n  namespace: shop\n',
    );
    const alpha = await tempFile('ns.yaml', text);
    const beta = await asV1beta1(alpha);
    assert.match(await readFile(beta, 'utf8'), /kubernetes.io\/metadata.name: shop/);
    const pod = parse(await readFile(nginxPod, 'utf8')) as { metadata: Record<string, unknown> };
    for (const [namespace, injected] of [
      ['shop', true],
      ['default', false],
    ] as const) {
      pod.metadata['namespace'] = namespace;
      const podFile = await tempFile('pod.yaml', stringify(pod));
      const outputs = [];
      for (const file of [alpha, beta]) {
        const result = await runCli(['inject', '--sidecarsets', file, '-f', podFile]);
        assert.equal(result.code, 0, result.stderr);
        outputs.push(result.stdout);
      }
      assert.equal(outputs[1], outputs[0]);
      assert.equal(/name: logtail/.test(outputs[0] ?? ''), injected, namespace);
    }
  });

  it('plan gives the same plan for either version', async () => {
    const beta = await asV1beta1(grayRelease);
    const alpha = parse(await readFile(grayRelease, 'utf8')) as SidecarSet;
    const pods = await tempFile(
      'pods.json',
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: grayReleasePods(withHashes(alpha), 50, 'busybox:1.35'),
      }),
    );
    const alphaPlan = await runCli([
      'plan',
      '--sidecarsets',
      grayRelease,
      '--pods',
      pods,
      '-o',
      'json',
    ]);
    const betaPlan = await runCli(['plan', '--sidecarsets', beta, '--pods', pods, '-o', 'json']);
    assert.equal(alphaPlan.code, 0, alphaPlan.stderr);
    assert.equal(betaPlan.stdout, alphaPlan.stdout);
    const plan = JSON.parse(alphaPlan.stdout) as {
      status: { matchedPods: number };
      held: unknown[];
    };
    assert.equal(plan.status.matchedPods, 50);
    assert.equal(plan.held.length, 50, 'partition 980 holds every pod');
  });
});
