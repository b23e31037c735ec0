/**
 * The Node server under fastify: the TLS policy and the limits that keep a slow or hostile client
 * from holding connections and memory (docs/deploy.md, "Limits and network policy").
 */
import { createServer as createHttpServer } from 'node:http';
import type { RequestListener, Server } from 'node:http';
import type { Socket } from 'node:net';
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
  /** Open connections; idle keep-alive ones make room for new ones, else these are refused. */
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
const TLS_POLICY = {
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

/** What the connection cap did: refused a new connection, or closed an idle one to make room. */
export interface CapEvents {
  onDrop: () => void;
  onIdleClosed: () => void;
}

/**
 * A fastify `serverFactory`: HTTPS with the TLS policy when a pair is given, plain HTTP otherwise,
 * with the limits applied. `cap` hears of each connection closed because of maxConnections.
 */
export function limitedServerFactory(
  https: CertificatePair | undefined,
  limits: ServerLimits,
  cap: CapEvents,
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
    capConnections(server, limits.maxConnections, cap);
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    return server;
  };
}

/**
 * At most `cap` open connections, counted from TCP accept (TLS handshakes included). A connection
 * arriving at the cap first closes the keep-alive connection idle the longest (`onIdleClosed`),
 * and is refused (closed at once, `onDrop`) only when none is idle. server.maxConnections
 * refused it outright: idle keep-alive connections, which no read timeout covers and which stay
 * KEEP_ALIVE_MS, then filled the cap and shut out the API server and the kubelet's probes
 * (issue 23).
 *
 * Idle means: it has been answered and has no request in flight. A connection that has not sent
 * its first request yet is not idle (it may be the probe itself, between handshake and request);
 * the read timeout bounds it (Node's requestTimeout; test/server/limits.test.ts). Closing an
 * idle keep-alive connection is what its keep-alive timeout would do anyway; clients (Go's,
 * Node's) retry a request on such a connection.
 */
function capConnections(server: Server, cap: number, events: CapEvents): void {
  let open = 0;
  /** Closed to make room, their 'close' not yet heard: no longer counted. */
  let closing = 0;
  /** The HTTP-level sockets (TLS ones on HTTPS) between requests, longest idle first. */
  const idle = new Set<Socket>();
  const inFlight = new WeakMap<Socket, number>();
  // Before the TLS server's own listener, so that a refused connection gets no TLS work.
  server.prependListener('connection', (socket: Socket) => {
    if (open - closing >= cap) {
      const oldest = idle.values().next().value;
      if (oldest === undefined) {
        socket.destroy();
        events.onDrop();
        return;
      }
      idle.delete(oldest);
      closing++;
      oldest.once('close', () => closing--);
      oldest.destroy();
      events.onIdleClosed();
    }
    open++;
    socket.once('close', () => open--);
  });
  server.on('request', (request, response) => {
    const socket = request.socket;
    const before = inFlight.get(socket);
    if (before === undefined) socket.once('close', () => idle.delete(socket));
    idle.delete(socket);
    inFlight.set(socket, (before ?? 0) + 1);
    response.once('close', () => {
      const left = (inFlight.get(socket) ?? 1) - 1;
      inFlight.set(socket, left);
      if (left === 0 && !socket.destroyed) idle.add(socket);
    });
  });
}
