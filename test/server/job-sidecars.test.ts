/**
 * --job-sidecars reaches the pod webhook: `sidecarset serve` on a random port with real TLS, asked
 * about a Job's pod (docs/adr/0021-job-sidecars.md).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';

import { parse } from 'yaml';

import type { ServeOptions } from '../../src/cli/serve.js';
import { startServe } from '../../src/cli/serve.js';
import type { Pod } from '../../src/core/api/k8s-types.js';
import { podReview } from '../support/admission.js';
import { postJson } from '../support/https.js';

const examples = new URL('../../examples/', import.meta.url).pathname;

/** The pod the Job controller would create from examples/job.yaml. */
async function jobPod(): Promise<Pod> {
  const job = parse(await readFile(join(examples, 'job.yaml'), 'utf8')) as {
    spec: { template: { metadata: Pod['metadata']; spec: Pod['spec'] } };
  };
  const { metadata, spec } = job.spec.template;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...metadata, name: 'nightly-report-x7k2p', namespace: 'default' },
    spec,
  };
}

/** The paths the webhook's JSON patch writes under /spec. */
async function specPatchPaths(options: Partial<ServeOptions>): Promise<string[]> {
  const devCertDir = await mkdtemp(join(tmpdir(), 'serve-'));
  const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() };
  const served = await startServe(
    {
      sidecarsets: join(examples, 'job-sidecarset.yaml'),
      port: 0,
      host: '127.0.0.1',
      logLevel: 'warn',
      devCertDir,
      ...options,
    },
    io,
  );
  try {
    const ca = await readFile(join(devCertDir, 'ca.crt'), 'utf8');
    const { status, json } = await postJson(
      `${served.url}/mutate-pods`,
      podReview(await jobPod()),
      ca,
    );
    assert.equal(status, 200);
    const { response } = json as { response: { allowed: boolean; patch: string } };
    assert.equal(response.allowed, true);
    const ops = JSON.parse(Buffer.from(response.patch, 'base64').toString()) as {
      path: string;
      value: unknown;
    }[];
    const init = ops.find((op) => op.path === '/spec/initContainers');
    if (init !== undefined) {
      assert.deepEqual(
        (init.value as { name: string; restartPolicy?: string }[]).map((c) => [
          c.name,
          c.restartPolicy,
        ]),
        [['log-shipper', 'Always']],
      );
    }
    return ops.map((op) => op.path).filter((path) => path.startsWith('/spec/'));
  } finally {
    await served.close();
  }
}

describe('sidecarset serve --job-sidecars', () => {
  it('native (the default): the sidecar becomes a native sidecar of the Job pod', async () => {
    assert.deepEqual(await specPatchPaths({}), ['/spec/initContainers']);
  });

  it('container: the sidecar goes into spec.containers, as before', async () => {
    assert.deepEqual(await specPatchPaths({ jobSidecars: 'container' }), ['/spec/containers/0']);
  });
});
