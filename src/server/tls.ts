/**
 * The serving certificate: read from files and reloaded when they change on disk (cert-manager
 * rotation, Secret updates), or generated for development (a CA plus a localhost certificate).
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';

import { watchPaths } from '../cache/watch-paths.js';
import { issueBundle } from './cert-plan.js';

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

/**
 * Rejects anything but whole certificates and the private key of the first one.
 * createSecureContext alone is not enough: it accepts an empty key (a file read while it is
 * rewritten) and serves a context without one, whose handshakes fail (issue 15).
 */
export function checkTlsPair(cert: string, key: string): TlsPair {
  const blocks = pemBlocks(cert, 'CERTIFICATE');
  const [leaf] = blocks.map((block) => new X509Certificate(block));
  if (leaf === undefined) throw new Error('the certificate file holds no certificate');
  if (key.trim() === '') throw new Error('the key file is empty');
  if (!leaf.checkPrivateKey(createPrivateKey(key))) {
    throw new Error('the key does not belong to the certificate');
  }
  createSecureContext({ cert, key }); // whatever else OpenSSL refuses
  return { cert, key, notAfter: new Date(leaf.validTo) };
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/** The PEM blocks of `label` in `text`; throws on a block cut off by a file still being written. */
function pemBlocks(text: string, label: string): string[] {
  const blocks = [...text.matchAll(PEM_BLOCK)];
  if (text.split('-----BEGIN ').length - 1 !== blocks.length) {
    throw new Error(`the ${label.toLowerCase()} file holds an incomplete PEM block`);
  }
  return blocks.filter((m) => m[1] === label).map((m) => m[0]);
}

export interface TlsWatch {
  close(): Promise<void>;
}

export interface TlsWatchHandlers {
  onChange: (pair: TlsPair) => void;
  /** The files hold no valid pair a second after they last changed (or cannot be watched). */
  onError: (err: unknown) => void;
  /** The files just changed and hold no valid pair yet: one is most likely half-way written. */
  onPending?: (err: unknown) => void;
}

/**
 * Calls onChange with the new pair whenever the files change and hold a valid pair, within a
 * fraction of a second also when they sit behind a mounted Secret's `..data` symlink (see
 * src/cache/watch-paths.ts). A pair read halfway through a rewrite is refused and read again
 * on the next change, or a second later in case that change came before the read.
 *
 * A writer that is not atomic (the key, then the certificate) leaves a mismatched pair between
 * its two writes: that is onPending, not an error (issue 23: one error line per rotation). Only
 * a pair still invalid at the read a second after the last change goes to onError.
 */
export function watchTlsPair(
  certFile: string,
  keyFile: string,
  handlers: TlsWatchHandlers,
  pollMs = 60_000,
): TlsWatch {
  let last = '';
  let checking = Promise.resolve();
  let retry: NodeJS.Timeout | undefined;
  const check = (isRetry = false): void => {
    clearTimeout(retry);
    checking = checking.then(async () => {
      try {
        const pair = await readTlsPair(certFile, keyFile);
        const fingerprint = pair.cert + pair.key;
        if (last !== '' && fingerprint !== last) handlers.onChange(pair);
        last = fingerprint;
      } catch (err) {
        if (isRetry) {
          handlers.onError(err);
          return;
        }
        handlers.onPending?.(err);
        retry = setTimeout(check, RETRY_MS, true);
        retry.unref();
      }
    });
  };
  check();
  const watcher = watchPaths(
    [certFile, keyFile],
    () => {
      check();
    },
    { pollMs, onError: handlers.onError },
  );
  return {
    async close() {
      watcher.close();
      await checking;
      clearTimeout(retry);
    },
  };
}

const RETRY_MS = 1000;

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
  // A CA of its own (src/server/cert-plan.ts): TLS clients find the issuer by name, and may trust
  // several of these CAs.
  const bundle = await issueBundle(
    {
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1', '::1'],
      renewBeforeMs: DAY_MS,
      validityMs: 365 * DAY_MS,
      caValidityMs: 365 * DAY_MS,
    },
    now,
  );
  await mkdir(dir, { recursive: true });
  await writeFile(files.caFile, bundle.caCert);
  await writeFile(files.certFile, bundle.cert);
  await writeFile(files.keyFile, bundle.key, { mode: 0o600 });
  return { ...files, reused: false };
}
