/**
 * A SidecarSet's targetContainersNameRegex runs with RE2's linear-time matching in the webhook
 * (src/core/encoding/go-regexp.ts): `sidecarset serve` on a random port with real TLS answers a
 * pod whose container name would make a backtracking engine run for minutes, and its /healthz
 * stays answered. Before, neither answered within 8 seconds.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';

import { stringify } from 'yaml';

import type { Served } from '../../src/cli/serve.js';
import { startServe } from '../../src/cli/serve.js';
import { podReview } from '../support/admission.js';
import { httpsRequest, postJson } from '../support/https.js';

const TRAP = `${'a'.repeat(30)}!`;

describe('a catastrophic-backtracking pattern in the pod webhook', { timeout: 60_000 }, () => {
  let dir = '';
  let served: Served;
  let ca = '';

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'redos-'));
    await writeFile(
      join(dir, 'sidecarset.yaml'),
      stringify({
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name: 'sized-agent' },
        spec: {
          selector: { matchLabels: { app: 'trap' } },
          containers: [
            {
              name: 'agent',
              image: 'agent:1',
              resourcesPolicy: {
                targetContainersMode: 'sum',
                targetContainersNameRegex: '^(a+)+$',
                resourcesExpr: { limits: { cpu: 'cpu/2' } },
              },
            },
          ],
        },
      }),
    );
    const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() };
    served = await startServe(
      {
        sidecarsets: join(dir, 'sidecarset.yaml'),
        port: 0,
        host: '127.0.0.1',
        logLevel: 'warn',
        devCertDir: join(dir, 'certs'),
      },
      io,
    );
    ca = await readFile(join(dir, 'certs', 'ca.crt'), 'utf8');
  });

  after(async () => {
    await served.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers the review, sizing the sidecar from the containers the pattern matches', async () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'trap', namespace: 'default', labels: { app: 'trap' } },
      spec: {
        containers: [
          { name: TRAP, image: 'app:1', resources: { limits: { cpu: '4' } } },
          { name: 'aaa', image: 'app:1', resources: { limits: { cpu: '2' } } },
        ],
      },
    };
    const { status, json } = await postJson(`${served.url}/mutate-pods`, podReview(pod), ca);
    assert.equal(status, 200);
    const { response } = json as { response: { allowed: boolean; patch: string } };
    assert.equal(response.allowed, true);
    const ops = JSON.parse(Buffer.from(response.patch, 'base64').toString()) as {
      path: string;
      value: { name: string; resources?: unknown };
    }[];
    const agent = ops.find((op) => op.path === '/spec/containers/0');
    // Only `aaa` matches: half of its 2 CPUs.
    assert.deepEqual(agent?.value.resources, { limits: { cpu: '1' } });
    const healthz = await httpsRequest(`${served.url}/healthz`, { ca });
    assert.equal(healthz.status, 200);
  });
});
