/**
 * The serving certificate's reload (src/server/tls.ts): only whole, matching pairs are taken, and
 * a mounted Secret's atomic symlink swap is followed within a second. Real files, real TLS
 * handshakes.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Server } from 'node:tls';
import { connect, createServer } from 'node:tls';

import type { TlsPair } from '../../src/server/tls.js';
import { checkTlsPair, ensureDevCertificates, watchTlsPair } from '../../src/server/tls.js';
import { writeAtomically } from '../support/atomic-writer.js';
import { eventually } from '../support/eventually.js';

interface Material {
  cert: string;
  key: string;
  ca: string;
  fingerprint: string;
}

let root = '';
let first: Material;
let second: Material;

async function material(dir: string): Promise<Material> {
  const files = await ensureDevCertificates(dir, new Date());
  const cert = await readFile(files.certFile, 'utf8');
  return {
    cert,
    key: await readFile(files.keyFile, 'utf8'),
    ca: await readFile(files.caFile, 'utf8'),
    fingerprint: new X509Certificate(cert).fingerprint256,
  };
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'tls-'));
  first = await material(join(root, 'first'));
  second = await material(join(root, 'second'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('checkTlsPair', () => {
  it('accepts a certificate with its key', () => {
    assert.equal(checkTlsPair(first.cert, first.key).cert, first.cert);
  });

  it('refuses an empty, partial or foreign key, which createSecureContext would let through', () => {
    assert.throws(() => checkTlsPair(first.cert, ''), /key file is empty/);
    assert.throws(() => checkTlsPair(first.cert, first.key.slice(0, first.key.length / 2)));
    assert.throws(() => checkTlsPair(first.cert, second.key), /does not belong/);
  });

  it('refuses an empty or partial certificate, also a chain cut off after the first', () => {
    assert.throws(() => checkTlsPair('', first.key), /no certificate/);
    assert.throws(() => checkTlsPair(first.cert.slice(0, 200), first.key), /incomplete/);
    const cutChain = `${first.cert}\n${first.ca.slice(0, first.ca.length - 40)}`;
    assert.throws(() => checkTlsPair(cutChain, first.key), /incomplete/);
    assert.equal(checkTlsPair(`${first.cert}\n${first.ca}`, first.key).key, first.key);
  });
});

/** A TLS server whose context follows watchTlsPair, as `sidecarset serve` wires it. */
async function servedFrom(certFile: string, keyFile: string, initial: Material) {
  const server: Server = createServer({ cert: initial.cert, key: initial.key }, (socket) => {
    socket.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const reloads: TlsPair[] = [];
  const watch = watchTlsPair(certFile, keyFile, {
    onChange: (pair) => {
      server.setSecureContext({ cert: pair.cert, key: pair.key });
      reloads.push(pair);
    },
    onError: () => undefined,
  });
  return {
    reloads,
    /** The fingerprint of the certificate a new connection gets, or the handshake's error. */
    handshake: () =>
      new Promise<string>((resolve, reject) => {
        const socket = connect({
          host: '127.0.0.1',
          port,
          servername: 'localhost',
          ca: [first.ca, second.ca],
        });
        socket.once('secureConnect', () => {
          resolve(socket.getPeerCertificate().fingerprint256);
          socket.destroy();
        });
        socket.once('error', reject);
      }),
    async close() {
      await watch.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Rewrites a file in place the way a non-atomic writer does: truncate, then two writes. */
async function rewriteInPlace(file: string, text: string): Promise<void> {
  const handle = await open(file, 'w');
  await sleep(2);
  const half = Math.floor(text.length / 2);
  await handle.write(text.slice(0, half));
  await sleep(2);
  await handle.write(text.slice(half));
  await handle.close();
}

describe('watchTlsPair', () => {
  it('never serves a broken context while key and cert are rewritten in place', async () => {
    const dir = await mkdtemp(join(root, 'in-place-'));
    const certFile = join(dir, 'tls.crt');
    const keyFile = join(dir, 'tls.key');
    await writeFile(certFile, first.cert);
    await writeFile(keyFile, first.key);
    const served = await servedFrom(certFile, keyFile, first);
    const failures: unknown[] = [];
    let handshakes = 0;
    const writer = { done: false };
    const poller = (async () => {
      while (!writer.done) {
        await served.handshake().then(
          () => (handshakes += 1),
          (err: unknown) => failures.push(err),
        );
        await sleep(2);
      }
    })();
    let now = first;
    for (let round = 0; round < 16; round++) {
      now = now === first ? second : first;
      await rewriteInPlace(keyFile, now.key);
      await sleep(5);
      await rewriteInPlace(certFile, now.cert);
      await sleep(80);
    }
    const last = now;
    await eventually(async () => (await served.handshake()) === last.fingerprint, 'the last pair');
    writer.done = true;
    await poller;
    await served.close();
    assert.deepEqual(failures, []);
    // Handshakes went on through the rewrites: at least one per round, however busy the machine.
    assert.ok(handshakes >= 16, `only ${handshakes} handshakes`);
    assert.ok(served.reloads.length > 0);
  });

  it("follows a mounted Secret's atomic ..data swap within a second", async () => {
    const dir = join(await mkdtemp(join(root, 'secret-')), 'tls');
    await writeAtomically(dir, { 'tls.crt': first.cert, 'tls.key': first.key });
    const served = await servedFrom(join(dir, 'tls.crt'), join(dir, 'tls.key'), first);
    await sleep(200); // the watch's first read
    for (const next of [second, first, second]) {
      await writeAtomically(dir, { 'tls.crt': next.cert, 'tls.key': next.key });
      await eventually(
        async () => (await served.handshake()) === next.fingerprint,
        'the swapped certificate',
        1000,
        20,
      );
    }
    await served.close();
  });
});
