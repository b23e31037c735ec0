/**
 * The server's TLS policy and limits, exercised with real sockets: ciphers a client offers, slow
 * and stalled requests, more connections than allowed, more request bodies than the budget.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Agent } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from 'node:tls';
import type { ConnectionOptions, TLSSocket } from 'node:tls';

import type { ServeOptions, Served } from '../../src/cli/serve.js';
import { startServe } from '../../src/cli/serve.js';
import { ensureDevCertificates } from '../../src/server/tls.js';
import { writeAtomically } from '../support/atomic-writer.js';
import { eventually } from '../support/eventually.js';
import { httpsRequest } from '../support/https.js';

const examples = new URL('../../examples/', import.meta.url).pathname;

interface Server {
  served: Served;
  ca: string | string[];
  port: number;
  metric: (line: RegExp) => Promise<number>;
}

async function startWith(
  limits: Pick<
    ServeOptions,
    'readTimeout' | 'maxConnections' | 'maxInflightBodyBytes' | 'cert' | 'key'
  >,
  /** The CAs of the certificates given by --cert, which has no development CA. */
  cas?: string[],
): Promise<Server> {
  const devCertDir = await mkdtemp(join(tmpdir(), 'limits-'));
  const stdout = new PassThrough();
  stdout.resume();
  const served = await startServe(
    {
      sidecarsets: join(examples, 'logtail-sidecarset.yaml'),
      port: 0,
      host: '127.0.0.1',
      metricsPort: 0,
      logLevel: 'error',
      devCertDir,
      ...limits,
    },
    { stdin: new PassThrough(), stdout, stderr: new PassThrough() },
  );
  const ca = cas ?? (await readFile(join(devCertDir, 'ca.crt'), 'utf8'));
  // Read on the metrics port, so that reading them takes no connection of the webhook's.
  const metric = async (line: RegExp): Promise<number> => {
    const text = await (await fetch(`${served.metricsUrl ?? ''}/metrics`)).text();
    return Number(line.exec(text)?.[1] ?? 0);
  };
  return { served, ca, port: Number(new URL(served.url).port), metric };
}

/** A TLS connection, or the error that ended the handshake. */
async function tlsConnect(
  server: Server,
  options: ConnectionOptions = {},
): Promise<TLSSocket | Error> {
  const socket = connect({
    host: '127.0.0.1',
    port: server.port,
    servername: 'localhost',
    ca: server.ca,
    ...options,
  });
  return new Promise((resolve) => {
    socket.once('secureConnect', () => {
      resolve(socket);
    });
    socket.once('error', (err: Error) => {
      resolve(err);
    });
    socket.once('close', () => {
      resolve(new Error('closed before the handshake'));
    });
  });
}

async function connected(server: Server, options: ConnectionOptions = {}): Promise<TLSSocket> {
  const socket = await tlsConnect(server, options);
  if (socket instanceof Error) throw socket;
  return socket;
}

/** Everything the server sends until it closes the connection, and how long that took. */
async function untilClosed(socket: TLSSocket): Promise<{ text: string; ms: number }> {
  const startedAt = Date.now();
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.on('error', () => undefined);
  if (!socket.closed) await once(socket, 'close');
  return { text: Buffer.concat(chunks).toString(), ms: Date.now() - startedAt };
}

function postHead(length: number): string {
  return (
    'POST /mutate-pods HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
    `Content-Length: ${length}\r\n\r\n`
  );
}

const MiB = 1024 * 1024;

type Limits = Pick<ServeOptions, 'readTimeout' | 'maxConnections'>;

const READ_TIMEOUTS = /^sidecarset_shed_total\{reason="read-timeout"\} (\d+)$/m;
const BYTES_IN_FLIGHT = /^sidecarset_request_body_bytes_in_flight (\d+)$/m;

/** A server with these limits (and a 1 MiB body budget) for the tests of one describe block. */
function serverWith(limits: Limits): () => Server {
  let started: Server | undefined;
  before(async () => {
    started = await startWith({ ...limits, maxInflightBodyBytes: MiB });
  });
  after(async () => {
    await started?.served.close();
  });
  return () => {
    if (started === undefined) throw new Error('the server has not started');
    return started;
  };
}

/** CBC suites (with SHA-1 or SHA-256 MACs), which the policy leaves out. */
const CBC_SUITES = [
  'ECDHE-ECDSA-AES128-SHA',
  'ECDHE-ECDSA-AES256-SHA',
  'ECDHE-ECDSA-AES128-SHA256',
];

async function assertRefusesCbc(server: Server): Promise<void> {
  for (const ciphers of CBC_SUITES) {
    const result = await tlsConnect(server, { ciphers, maxVersion: 'TLSv1.2' });
    if (!(result instanceof Error)) result.destroy();
    assert.ok(result instanceof Error, `${ciphers} was accepted`);
    assert.match(result.message, /handshake failure|no shared cipher|closed before/i, ciphers);
  }
}

async function assertRefusesTls11(server: Server): Promise<void> {
  const result = await tlsConnect(server, {
    minVersion: 'TLSv1',
    maxVersion: 'TLSv1.1',
    ciphers: 'DEFAULT:@SECLEVEL=0',
  });
  if (!(result instanceof Error)) result.destroy();
  assert.ok(result instanceof Error, 'TLS 1.1 was accepted');
}

describe('TLS policy', () => {
  const server = serverWith({ readTimeout: 10, maxConnections: 100 });

  it('refuses TLS 1.2 CBC suites, SHA-1 or not', async () => {
    await assertRefusesCbc(server());
  });

  it('accepts the intermediate TLS 1.2 suites and TLS 1.3', async () => {
    for (const ciphers of ['ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-CHACHA20-POLY1305']) {
      const socket = await connected(server(), { ciphers, maxVersion: 'TLSv1.2' });
      assert.equal(socket.getProtocol(), 'TLSv1.2');
      assert.equal(socket.getCipher().name, ciphers);
      socket.destroy();
    }
    const socket = await connected(server(), { minVersion: 'TLSv1.3' });
    assert.equal(socket.getProtocol(), 'TLSv1.3');
    socket.destroy();
  });

  it('refuses TLS 1.1', async () => {
    await assertRefusesTls11(server());
  });

  it('is the same after the certificate files are rotated and reloaded (issue 23)', async () => {
    const root = await mkdtemp(join(tmpdir(), 'rotate-'));
    const [a, b] = await Promise.all(
      ['a', 'b'].map(async (name) => {
        const files = await ensureDevCertificates(join(root, name), new Date());
        const cert = await readFile(files.certFile, 'utf8');
        return {
          files: { 'tls.crt': cert, 'tls.key': await readFile(files.keyFile, 'utf8') },
          ca: await readFile(files.caFile, 'utf8'),
          fingerprint: new X509Certificate(cert).fingerprint256,
        };
      }),
    );
    if (a === undefined || b === undefined) throw new Error('two pairs were made');
    const live = join(root, 'live');
    await writeAtomically(live, a.files);
    const rotated = await startWith({ cert: join(live, 'tls.crt'), key: join(live, 'tls.key') }, [
      a.ca,
      b.ca,
    ]);
    try {
      await assertRefusesCbc(rotated);
      await assertRefusesTls11(rotated);
      await writeAtomically(live, b.files);
      await eventually(async () => {
        const socket = await connected(rotated);
        const served = socket.getPeerCertificate().fingerprint256;
        socket.destroy();
        return served === b.fingerprint;
      }, 'the rotated certificate');
      await assertRefusesCbc(rotated);
      await assertRefusesTls11(rotated);
      const socket = await connected(rotated, { minVersion: 'TLSv1.3' });
      assert.equal(socket.getProtocol(), 'TLSv1.3');
      socket.destroy();
    } finally {
      await rotated.served.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('limits', () => {
  const server = serverWith({ readTimeout: 1, maxConnections: 100 });

  it('cuts off a request whose body stalls, with a 408 Status, within the read timeout', async () => {
    const socket = await connected(server());
    socket.write(postHead(1000) + '{"apiVersion":');
    const { text, ms } = await untilClosed(socket);
    assert.match(text, /^HTTP\/1\.1 408 /);
    assert.match(text, /"kind":"Status".*not received within 1 s \(--read-timeout\)/);
    assert.ok(ms < 2500, `closed after ${ms} ms`);
  });

  it('answers headers over 16 KiB with a 431 Status and closes the connection', async () => {
    const socket = await connected(server());
    socket.write(
      `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    const { text } = await untilClosed(socket);
    assert.match(text, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    assert.match(text, /"kind":"Status".*larger than 16384 bytes/);
  });

  it('cuts off a slowloris sending its headers a byte at a time', async () => {
    const socket = await connected(server());
    const closed = untilClosed(socket);
    const head = postHead(10);
    for (let i = 0; i < head.length && !socket.closed; i++) {
      socket.write(head[i] ?? '');
      await sleep(100);
    }
    const { ms } = await closed;
    assert.ok(ms < 2500, `closed after ${ms} ms`);
  });

  it('closes a connection that completes the handshake but never sends a request', async () => {
    const before = await server().metric(READ_TIMEOUTS);
    const socket = await connected(server());
    const { ms } = await untilClosed(socket);
    assert.ok(ms < 2500, `closed after ${ms} ms`);
    assert.equal(await server().metric(READ_TIMEOUTS), before + 1);
  });

  it('closes a connection that never completes the TLS handshake', async () => {
    const { connect: tcpConnect } = await import('node:net');
    const raw = tcpConnect(server().port, '127.0.0.1');
    await once(raw, 'connect');
    const startedAt = Date.now();
    raw.on('error', () => undefined);
    raw.resume();
    await once(raw, 'close');
    assert.ok(Date.now() - startedAt < 2500);
  });

  it('refuses a body the budget cannot take at once, with a 503 Status; a cut-off body gives its share back', async () => {
    const stalled = await connected(server());
    stalled.write(postHead(700_000) + ' '.repeat(100_000));
    const cut = untilClosed(stalled);
    for (let i = 0; i < 50 && (await server().metric(BYTES_IN_FLIGHT)) === 0; i++) await sleep(20);
    assert.equal(await server().metric(BYTES_IN_FLIGHT), 700_000);

    const refused = await httpsRequest(`${server().served.url}/mutate-pods`, {
      body: ' '.repeat(700_000),
      ca: server().ca,
    });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers['retry-after'], '1');
    assert.match(refused.text, /"kind":"Status".*--max-inflight-body-bytes/);

    await cut;
    for (let i = 0; i < 50 && (await server().metric(BYTES_IN_FLIGHT)) > 0; i++) await sleep(20);
    assert.equal(await server().metric(BYTES_IN_FLIGHT), 0);
    const served = await httpsRequest(`${server().served.url}/mutate-pods`, {
      body: `{${' '.repeat(700_000)}}`,
      ca: server().ca,
    });
    assert.equal(served.status, 400, 'read and answered (an empty object is no AdmissionReview)');
    assert.ok(
      (await server().metric(/^sidecarset_shed_total\{reason="body-budget"\} (\d+)$/m)) >= 1,
    );
    assert.ok(
      (await server().metric(/^sidecarset_shed_total\{reason="read-timeout"\} (\d+)$/m)) >= 1,
    );
  });
});

const IDLE_CLOSED = /^sidecarset_shed_total\{reason="idle-keep-alive"\} (\d+)$/m;
const SHED_CONNECTIONS = /^sidecarset_shed_total\{reason="max-connections"\} (\d+)$/m;

/** A keep-alive client of its own (one connection), which has made one request and now idles. */
async function idleKeepAlive(server: Server): Promise<Agent> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const answer = await httpsRequest(`${server.served.url}/healthz`, { ca: server.ca, agent });
  assert.equal(answer.status, 200);
  return agent;
}

/** A request on a connection of its own whose body stalls half-way: in flight until released. */
async function inFlight(server: Server): Promise<{ socket: TLSSocket; release: () => void }> {
  const body = await readFile(join(examples, 'admission-review.json'), 'utf8');
  const socket = await connected(server);
  socket.write(postHead(Buffer.byteLength(body)) + body.slice(0, 10));
  return {
    socket,
    release: () => socket.write(body.slice(10)),
  };
}

describe('connection cap', () => {
  const server = serverWith({ readTimeout: 10, maxConnections: 5 });

  it('refuses connections beyond --max-connections and serves again once one closes', async () => {
    const shedBefore = await server().metric(SHED_CONNECTIONS);
    const open = await Promise.all(Array.from({ length: 5 }, () => connected(server())));
    const refused = await tlsConnect(server());
    assert.ok(refused instanceof Error, 'the sixth connection was accepted');
    assert.equal(await server().metric(SHED_CONNECTIONS), shedBefore + 1);
    open[0]?.destroy();
    await sleep(100);
    const health = await httpsRequest(`${server().served.url}/healthz`, { ca: server().ca });
    assert.equal(health.status, 200);
    for (const socket of open) socket.destroy();
  });

  it('closes idle keep-alive connections to make room: probes and reviews are served at the cap (issue 23)', async () => {
    const [idleBefore, shedBefore] = [
      await server().metric(IDLE_CLOSED),
      await server().metric(SHED_CONNECTIONS),
    ];
    const idle = await Promise.all(Array.from({ length: 5 }, () => idleKeepAlive(server())));
    try {
      const started = Date.now();
      const probe = await httpsRequest(`${server().served.url}/readyz`, { ca: server().ca });
      assert.equal(probe.status, 200);
      const review = await httpsRequest(`${server().served.url}/mutate-pods`, {
        body: await readFile(join(examples, 'admission-review.json')),
        ca: server().ca,
      });
      assert.equal(review.status, 200, review.text);
      assert.ok(Date.now() - started < 2000, `served after ${Date.now() - started} ms`);
      // The probe's connection made room; it closed after its answer, leaving room for the review.
      assert.ok((await server().metric(IDLE_CLOSED)) > idleBefore, 'an idle connection closed');
      assert.equal(await server().metric(SHED_CONNECTIONS), shedBefore, 'none refused');
    } finally {
      for (const agent of idle) agent.destroy();
    }
  });

  it('never closes a connection with a request in flight to make room', async () => {
    await sleep(100); // the previous test's connections are closed
    const shedBefore = await server().metric(SHED_CONNECTIONS);
    const busy = await Promise.all(Array.from({ length: 4 }, () => inFlight(server())));
    const idle = await idleKeepAlive(server());
    try {
      const health = await httpsRequest(`${server().served.url}/healthz`, { ca: server().ca });
      assert.equal(health.status, 200, 'the idle connection made room');
      // Five requests in flight now (the fifth on a raw connection): nothing is idle.
      const fifth = await inFlight(server());
      busy.push(fifth);
      const refused = await tlsConnect(server());
      assert.ok(refused instanceof Error, 'a connection was accepted with five requests in flight');
      assert.equal(await server().metric(SHED_CONNECTIONS), shedBefore + 1);
      for (const request of busy) {
        const closed = untilClosed(request.socket);
        request.release();
        request.socket.end();
        const { text } = await closed;
        assert.match(text, /^HTTP\/1\.1 200 OK\r\n/, 'the request in flight was answered');
      }
    } finally {
      idle.destroy();
      for (const request of busy) request.socket.destroy();
    }
  });
});

describe('close', () => {
  it('does not wait for a connection that never sent a request', async () => {
    const server = await startWith({ readTimeout: 1 });
    const socket = await tlsConnect(server);
    if (socket instanceof Error) throw socket;
    try {
      let closed = false;
      const closing = server.served.close().then(() => (closed = true));
      await Promise.race([closing, sleep(20_000, undefined, { ref: false })]);
      assert.ok(closed, 'the server closed');
    } finally {
      socket.destroy();
    }
  });
});
