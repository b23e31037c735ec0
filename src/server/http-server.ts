/**
 * The Node server under fastify: the TLS policy and the limits that keep a slow or hostile client
 * from holding connections and memory (docs/deploy.md, "Limits and network policy").
 */
import { createServer as createHttpServer } from 'node:http';
import type { RequestListener, Server } from 'node:http';
import { Server as HttpsServer, createServer as createHttpsServer } from 'node:https';
import type { ServerOptions as HttpsServerOptions } from 'node:https';

/**
 * The API server accepts objects of up to 3 MiB; an AdmissionReview carries the object and, on
 * UPDATE, the old object, plus JSON overhead (controller-runtime sizes its limit the same way).
 */
export const BODY_LIMIT = 7 * 1024 * 1024;

export interface ServerLimits {
  /** Seconds to receive a request: TLS handshake, headers and body. */
  readTimeoutSeconds: number;
  /** Open connections; more are closed as they arrive. */
  maxConnections: number;
  /** Request-body bytes being received at once, all connections together. */
  maxInflightBodyBytes: number;
}

/**
 * The API server waits for a webhook 30 s at most (timeoutSeconds, 5 s in manifests/), and sends
 * the whole AdmissionReview at once; 10 s is plenty for a 7 MiB body. 32 MiB of bodies at once
 * is four of the largest AdmissionReviews, or thousands of ordinary pods, and keeps the parsed
 * copies well inside the Deployment's 512Mi.
 */
export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  readTimeoutSeconds: 10,
  maxConnections: 1000,
  maxInflightBodyBytes: 32 * 1024 * 1024,
};

/**
 * Mozilla's "intermediate" configuration (ssl-config.mozilla.org) without the DHE suites, which
 * Go's TLS client (the API server's) never offers: TLS 1.2 with ECDHE and AEAD ciphers only, no
 * CBC, no SHA-1; TLS 1.3 with its three suites.
 */
export const TLS_POLICY = {
  minVersion: 'TLSv1.2',
  ciphers: [
    'TLS_AES_128_GCM_SHA256',
    'TLS_AES_256_GCM_SHA384',
    'TLS_CHACHA20_POLY1305_SHA256',
    'ECDHE-ECDSA-AES128-GCM-SHA256',
    'ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-RSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305',
    'ECDHE-RSA-CHACHA20-POLY1305',
  ].join(':'),
} as const satisfies HttpsServerOptions;

/** A serving certificate (or chain) and its private key, PEM. */
export interface CertificatePair {
  cert: string;
  key: string;
}

/**
 * The options of the secure context: the pair under TLS_POLICY. The server is created from them
 * and every reload rebuilds the context from them again, because setSecureContext, like the
 * constructor, builds the context from the options it is given alone: whatever is left out falls
 * back to Node's defaults, whose ciphers include CBC and SHA-1 suites (issue 23).
 */
export function secureContextOptions(pair: CertificatePair): HttpsServerOptions {
  return { cert: pair.cert, key: pair.key, ...TLS_POLICY };
}

/**
 * Serves `pair` to the connections that `server` accepts from now on, under the same policy as
 * at start; connections already open keep their certificate. A plain-HTTP server is left alone.
 */
export function replaceCertificate(server: unknown, pair: CertificatePair): void {
  if (server instanceof HttpsServer) server.setSecureContext(secureContextOptions(pair));
}

/** How often Node looks for requests past their timeout (its default, 30 s, is the API server's whole budget). */
const CHECK_INTERVAL_MS = 1000;

/** Fastify's default, which it does not apply to a server from a serverFactory. */
const KEEP_ALIVE_MS = 72_000;

type Listener = RequestListener;

/**
 * A fastify `serverFactory`: HTTPS with the TLS policy when a pair is given, plain HTTP otherwise,
 * with the limits applied. `onDrop` hears of each connection closed because of maxConnections.
 */
export function limitedServerFactory(
  https: CertificatePair | undefined,
  limits: ServerLimits,
  onDrop: () => void,
): (handler: Listener) => Server {
  return (handler) => {
    const readMs = limits.readTimeoutSeconds * 1000;
    const options = {
      requestTimeout: readMs,
      headersTimeout: readMs,
      connectionsCheckingInterval: Math.min(CHECK_INTERVAL_MS, readMs),
    };
    const server: Server =
      https === undefined
        ? createHttpServer(options, handler)
        : createHttpsServer(
            { ...secureContextOptions(https), handshakeTimeout: readMs, ...options },
            handler,
          );
    server.maxConnections = limits.maxConnections;
    server.on('drop', onDrop);
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    return server;
  };
}
