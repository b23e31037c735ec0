/**
 * The README's quick start as a user runs it: the built binary, flags from the environment, a
 * curl-like request with the generated CA, then SIGTERM and a clean exit.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { connect } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { ensureDevCertificates } from '../../src/server/tls.js';
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
        SIDECARSET_READ_TIMEOUT: '7',
        SIDECARSET_MAX_CONNECTIONS: '50',
        SIDECARSET_MAX_INFLIGHT_BODY_BYTES: '16Mi',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    try {
      const listening = await new Promise<{ url: string; metricsUrl: string; limits: unknown }>(
        (resolve, reject) => {
          const lines = createInterface({ input: child.stdout });
          lines.on('line', (line) => {
            const entry = JSON.parse(line) as {
              msg?: string;
              url?: string;
              metricsUrl?: string;
              limits?: unknown;
            };
            if (entry.msg === 'webhook listening' && entry.url && entry.metricsUrl) {
              resolve({ url: entry.url, metricsUrl: entry.metricsUrl, limits: entry.limits });
            }
          });
          void exited.then((code) => {
            reject(new Error(`exited with ${String(code)}: ${stderr}`));
          });
        },
      );
      assert.deepEqual(listening.limits, {
        readTimeoutSeconds: 7,
        maxConnections: 50,
        maxInflightBodyBytes: 16 * 1024 * 1024,
      });
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
      const text = await metrics.text();
      assert.match(text, /sidecarset_injections_total\{sidecarset="logtail-sidecarset"\} 1/);
      // V8's young generation kept small (src/cli/serving-heap.ts): at most two semi-spaces of
      // 4 MiB, where V8 would have grown it to 16 (Node 20) or 32 MiB (Node 24) by now.
      const young = /nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)/.exec(text)?.[1];
      assert.ok(Number(young) <= 8 * 1024 * 1024, `young generation: ${young} bytes`);
      assert.equal((await fetch(`${listening.metricsUrl}/readyz`)).status, 200);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, stderr);
    assert.match(stderr, /SIGTERM: finishing requests in flight, then stopping/);
  });

  describe('exits non-zero after a fatal start-up error, stopping what it started', () => {
    /** Runs `serve` with the flags; its exit code and stderr, or a failure if it is still up. */
    const exitOf = async (args: string[]): Promise<{ code: number | null; stderr: string }> => {
      const child = spawn(process.execPath, ['bin/sidecarset.js', 'serve', ...args], {
        cwd: root,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      assert.notEqual(code, null, `still running after 15 s: ${stderr}`);
      return { code, stderr };
    };
    const busyPort = async (): Promise<{ port: number; close: () => void }> => {
      const blocker = createServer();
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
      return { port: (blocker.address() as AddressInfo).port, close: () => blocker.close() };
    };
    const devCerts = async (): Promise<string[]> => {
      const dev = await ensureDevCertificates(
        await mkdtemp(join(tmpdir(), 'serve-proc-')),
        new Date(),
      );
      return ['--cert', dev.certFile, '--key', dev.keyFile];
    };

    it('a byte budget smaller than the largest AdmissionReview is a usage error', async () => {
      const args = ['--sidecarsets', 'examples/logtail-sidecarset.yaml', '--port', '0'];
      const { code, stderr } = await exitOf([...args, '--max-inflight-body-bytes', '1Mi']);
      assert.equal(code, 2, stderr);
      assert.match(stderr, /--max-inflight-body-bytes.*at least 7340032 bytes/);
    });

    it('files mode: the port is in use', async () => {
      const blocker = await busyPort();
      try {
        const args = ['--sidecarsets', 'examples/logtail-sidecarset.yaml', '--host', '127.0.0.1'];
        const { code, stderr } = await exitOf([
          ...args,
          '--port',
          String(blocker.port),
          ...(await devCerts()),
        ]);
        assert.equal(code, 1, stderr);
        assert.match(stderr, /EADDRINUSE/);
      } finally {
        blocker.close();
      }
    });

    it('files mode with --cert/--key: an invalid SidecarSet', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'serve-proc-'));
      await writeFile(
        join(dir, 'ss.yaml'),
        'apiVersion: apps.kruise.io/v1alpha1\nkind: SidecarSet\nmetadata: {name: s}\nspec: {}\n',
      );
      const args = ['--sidecarsets', dir, '--port', '0', '--host', '127.0.0.1'];
      const { code, stderr } = await exitOf([...args, ...(await devCerts())]);
      assert.equal(code, 1, stderr);
      assert.match(stderr, /invalid SidecarSets:\n.*ss\.yaml: SidecarSet "s"/);
    });

    it('cluster mode: informers and the controller started, then the port is in use', async () => {
      // An API server that is not there: the informers and the controller retry until stopped.
      const dir = await mkdtemp(join(tmpdir(), 'serve-proc-'));
      const kubeconfig = join(dir, 'kubeconfig');
      await writeFile(
        kubeconfig,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
          'users: [{name: u, user: {token: t}}]',
          'contexts: [{name: x, context: {cluster: c, user: u}}]',
          'current-context: x',
          '',
        ].join('\n'),
      );
      const blocker = await busyPort();
      try {
        const args = [
          '--kubeconfig',
          kubeconfig,
          '--host',
          '127.0.0.1',
          '--port',
          String(blocker.port),
        ];
        const { code, stderr } = await exitOf([...args, ...(await devCerts())]);
        assert.equal(code, 1, stderr);
        assert.match(stderr, /EADDRINUSE/);
      } finally {
        blocker.close();
      }
    });
  });

  it('keeps its memory while 100 clients each send most of a 7 MB body and stall', async () => {
    const rssOf = async (pid: number): Promise<number> => {
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? NaN) * 1024;
    };
    const certDir = await mkdtemp(join(tmpdir(), 'serve-proc-'));
    const child = spawn(
      process.execPath,
      ['bin/sidecarset.js', 'serve', '--sidecarsets', 'examples/logtail-sidecarset.yaml'],
      {
        cwd: root,
        env: {
          ...process.env,
          SIDECARSET_PORT: '0',
          SIDECARSET_HOST: '127.0.0.1',
          SIDECARSET_DEV_CERT_DIR: certDir,
          SIDECARSET_READ_TIMEOUT: '4',
        },
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const sockets: ReturnType<typeof connect>[] = [];
    try {
      const url = await new Promise<string>((resolve) => {
        createInterface({ input: child.stdout }).on('line', (line) => {
          const entry = JSON.parse(line) as { msg?: string; url?: string };
          if (entry.msg === 'webhook listening' && entry.url) resolve(entry.url);
        });
      });
      const pid = child.pid ?? 0;
      const ca = await readFile(join(certDir, 'ca.crt'), 'utf8');
      const baseline = await rssOf(pid);
      const body = Buffer.alloc(6_900_000, 32);
      let closed = 0;
      for (let i = 0; i < 100; i++) {
        const socket = connect({
          host: '127.0.0.1',
          port: Number(new URL(url).port),
          servername: 'localhost',
          ca,
        });
        socket.on('error', () => undefined);
        socket.on('close', () => closed++);
        socket.resume(); // reads the answer and the server's close
        socket.write(
          'POST /mutate-pods HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
            'Content-Length: 7000000\r\n\r\n',
        );
        socket.write(body);
        sockets.push(socket);
      }
      let peak = 0;
      for (let i = 0; i < 30; i++) {
        peak = Math.max(peak, await rssOf(pid));
        await sleep(100);
      }
      // Before the limits, this took the process from about 250 to 850 MB, and it stayed.
      assert.ok(peak - baseline < 150 * 1024 * 1024, `RSS grew ${(peak - baseline) / 2 ** 20} MiB`);
      for (let i = 0; i < 100 && closed < 100; i++) await sleep(100);
      assert.equal(closed, 100, `${closed} of 100 closed after --read-timeout`);
    } finally {
      for (const socket of sockets) socket.destroy();
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0);
  });
});
