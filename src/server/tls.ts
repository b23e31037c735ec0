/**
 * The serving certificate: read from files and reloaded when they change on disk (cert-manager
 * rotation, Secret updates), or generated for development (a CA plus a localhost certificate).
 */
import { X509Certificate, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createSecureContext } from 'node:tls';

import type { FSWatcher } from 'chokidar';
import { watch } from 'chokidar';
import { generate } from 'selfsigned';

export interface TlsPair {
  cert: string;
  key: string;
  notAfter: Date;
}

/** Reads a certificate and its key; rejects a pair that does not belong together. */
export async function readTlsPair(certFile: string, keyFile: string): Promise<TlsPair> {
  const [cert, key] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
  return checkTlsPair(cert, key);
}

export function checkTlsPair(cert: string, key: string): TlsPair {
  const x509 = new X509Certificate(cert);
  createSecureContext({ cert, key }); // throws when the key does not match the certificate
  return { cert, key, notAfter: new Date(x509.validTo) };
}

export interface TlsWatch {
  close(): Promise<void>;
}

/**
 * Calls onChange with the new pair whenever the files change and hold a valid pair. Kubernetes
 * updates mounted Secrets by swapping a symlinked directory, so the directories are watched, and
 * a periodic re-read covers file systems that do not report changes.
 */
export function watchTlsPair(
  certFile: string,
  keyFile: string,
  handlers: { onChange: (pair: TlsPair) => void; onError: (err: unknown) => void },
  pollMs = 60_000,
): TlsWatch {
  let last = '';
  let checking = Promise.resolve();
  const check = (): void => {
    checking = checking.then(async () => {
      try {
        const pair = await readTlsPair(certFile, keyFile);
        const fingerprint = pair.cert + pair.key;
        if (last !== '' && fingerprint !== last) handlers.onChange(pair);
        last = fingerprint;
      } catch (err) {
        handlers.onError(err);
      }
    });
  };
  check();
  const dirs = [...new Set([dirname(certFile), dirname(keyFile)])];
  const watcher: FSWatcher = watch(dirs, { ignoreInitial: true, depth: 1 });
  watcher.on('all', check);
  const timer = setInterval(check, pollMs);
  timer.unref();
  return {
    async close() {
      clearInterval(timer);
      await watcher.close();
      await checking;
    },
  };
}

export interface DevCertificates {
  caFile: string;
  certFile: string;
  keyFile: string;
  reused: boolean;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * A development CA and a certificate for localhost signed by it, under `dir`. Certificates already
 * there are reused while valid for another day, so the `curl --cacert` line keeps working across
 * restarts.
 */
export async function ensureDevCertificates(dir: string, now: Date): Promise<DevCertificates> {
  const files = {
    caFile: join(dir, 'ca.crt'),
    certFile: join(dir, 'tls.crt'),
    keyFile: join(dir, 'tls.key'),
  };
  try {
    const pair = await readTlsPair(files.certFile, files.keyFile);
    const ca = new X509Certificate(await readFile(files.caFile, 'utf8'));
    const valid = pair.notAfter.getTime() - now.getTime() > DAY_MS;
    if (valid && new X509Certificate(pair.cert).verify(ca.publicKey))
      return { ...files, reused: true };
  } catch {
    // missing or unusable: make new ones
  }
  const notAfter = new Date(now.getTime() + 365 * DAY_MS);
  // A name of its own: TLS clients find the issuer by name, and may trust several of these CAs.
  const caName = `sidecarset development CA ${randomBytes(4).toString('hex')}`;
  const ca = await generate([{ name: 'commonName', value: caName }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate: now,
    notAfterDate: notAfter,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      {
        name: 'keyUsage',
        keyCertSign: true,
        cRLSign: true,
        digitalSignature: true,
        critical: true,
      },
    ],
  });
  const serving = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate: now,
    notAfterDate: notAfter,
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  await mkdir(dir, { recursive: true });
  await writeFile(files.caFile, ca.cert);
  await writeFile(files.certFile, serving.cert);
  await writeFile(files.keyFile, serving.private, { mode: 0o600 });
  return { ...files, reused: false };
}
