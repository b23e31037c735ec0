/**
 * The README's quick start as a user runs it: the built binary, flags from the environment, a
 * curl-like request with the generated CA, then SIGTERM and a clean exit.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';

import { httpsRequest } from '../support/https.js';

const root = new URL('../../', import.meta.url).pathname;

describe('sidecarset serve as a process', () => {
  it('serves the example, reads flags from SIDECARSET_* and stops cleanly on SIGTERM', async () => {
    const certDir = await mkdtemp(join(tmpdir(), 'serve-proc-'));
    const child = spawn(process.execPath, ['bin/sidecarset.js', 'serve'], {
      cwd: root,
      env: {
        ...process.env,
        SIDECARSET_SIDECARSETS: 'examples/logtail-sidecarset.yaml',
        SIDECARSET_PORT: '0',
        SIDECARSET_HOST: '127.0.0.1',
        SIDECARSET_METRICS_PORT: '0',
        SIDECARSET_DEV_CERT_DIR: certDir,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    try {
      const listening = await new Promise<{ url: string; metricsUrl: string }>(
        (resolve, reject) => {
          const lines = createInterface({ input: child.stdout });
          lines.on('line', (line) => {
            const entry = JSON.parse(line) as { msg?: string; url?: string; metricsUrl?: string };
            if (entry.msg === 'webhook listening' && entry.url && entry.metricsUrl) {
              resolve({ url: entry.url, metricsUrl: entry.metricsUrl });
            }
          });
          void exited.then((code) => {
            reject(new Error(`exited with ${String(code)}: ${stderr}`));
          });
        },
      );
      const ca = await readFile(join(certDir, 'ca.crt'), 'utf8');
      const body = await readFile(join(root, 'examples/admission-review.json'), 'utf8');
      const answer = await httpsRequest(`${listening.url}/mutate-pods`, { body, ca });
      assert.equal(answer.status, 200);
      const review = JSON.parse(answer.text) as { response: { allowed: boolean; patch?: string } };
      assert.equal(review.response.allowed, true);
      const patch = Buffer.from(review.response.patch ?? '', 'base64').toString();
      assert.match(patch, /"name":"logtail"/);

      const metrics = await fetch(`${listening.metricsUrl}/metrics`);
      assert.equal(metrics.status, 200);
      assert.match(
        await metrics.text(),
        /sidecarset_injections_total\{sidecarset="logtail-sidecarset"\} 1/,
      );
      assert.equal((await fetch(`${listening.metricsUrl}/readyz`)).status, 200);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, stderr);
    assert.match(stderr, /SIGTERM: finishing requests in flight, then stopping/);
  });
});
