/**
 * The webhook's HTTP surface (fastify): admission endpoints, health and metrics. Handlers parse
 * the envelope, call the pure decision functions on the current snapshot and wrap the answer;
 * nothing else happens here. `buildApp` does not listen.
 */
import { STATUS_CODES, maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';

import type { FastifyError, FastifyInstance } from 'fastify';
import { LogController, fastify } from 'fastify';
import type { Logger } from 'pino';

import type { SnapshotSource } from '../cache/snapshot.js';
import { decidePod } from '../core/admission/pod-webhook.js';
import type { AdmissionRequest, AdmissionResponse } from '../core/admission/review.js';
import { parseAdmissionReview, reviewResponse } from '../core/admission/review.js';
import type { JobSidecarMode } from '../core/inject/job-sidecars.js';
import type { PatchMetadataAllowList } from '../core/validation/patch-metadata-allowlist.js';
import {
  decideSidecarSetMutation,
  decideSidecarSetValidation,
} from '../core/admission/sidecarset-webhooks.js';
import type { Snapshot } from '../cache/snapshot.js';
import { reviewConversion } from '../core/conversion/conversion-review.js';
import { registerBodyBudget } from './body-budget.js';
import type { HealthDeps } from './health-routes.js';
import {
  DEFAULT_MAX_CACHE_STALENESS_SECONDS,
  registerHealthRoutes,
  sendStatus,
  staleCachesReason,
  statusBody,
} from './health-routes.js';
import type { CertificatePair, ServerLimits } from './http-server.js';
import { BODY_LIMIT, DEFAULT_SERVER_LIMITS, limitedServerFactory } from './http-server.js';
import { limitMetricsOf } from './limit-metrics.js';
import type { WebhookMetrics } from './metrics.js';

export interface AppDeps {
  source: SnapshotSource;
  logger: Logger;
  metrics: WebhookMetrics;
  now: () => Date;
  random: () => number;
  /** What becomes of sidecars that stop with a Job (--job-sidecars); default native. */
  jobSidecars?: JobSidecarMode;
  /** What patchPodMetadata may write (--patch-pod-metadata-allowlist); none: nothing. */
  patchMetadataAllowList?: PatchMetadataAllowList;
  /** The serving certificate (served under the TLS policy of http-server.ts). */
  https: CertificatePair;
  limits?: ServerLimits;
  /**
   * /readyz answers 503 once a cache's list or watch has failed for longer than this many seconds
   * (--max-cache-staleness); 0 never does. Default DEFAULT_MAX_CACHE_STALENESS_SECONDS.
   */
  maxCacheStalenessSeconds?: number;
  /**
   * Called before each admission's log line, so that the lines of one event-loop turn can reach
   * the logger's destination in one write (serve passes log-batching.ts's writeLinesTogether).
   */
  beforeLogLine?: () => void;
}

interface Outcome {
  response: AdmissionResponse;
  result: string;
  /** Extra fields for the request's log line. */
  log?: Record<string, unknown>;
  /** The line's level when not info. */
  level?: 'warn' | 'error';
}

type Decide = (request: AdmissionRequest, snapshot: Snapshot, dryRun: boolean) => Outcome;

export function buildApp(deps: AppDeps): FastifyInstance {
  const limits = deps.limits ?? DEFAULT_SERVER_LIMITS;
  const app = limitedFastify(deps.logger, deps.metrics, limits, deps.https);
  const { shed, bodyBytesInFlight } = limitMetricsOf(deps.metrics.registry);
  registerBodyBudget(app, limits.maxInflightBodyBytes, {
    onChange: (delta) => {
      bodyBytesInFlight.inc(delta);
    },
    onShed: () => {
      shed.inc({ reason: 'body-budget' });
    },
  });

  // AdmissionReviews are JSON; anything else is answered 415 rather than parsed as text.
  app.removeContentTypeParser('text/plain');

  app.setErrorHandler((err: FastifyError, request, reply) => {
    const code =
      err.statusCode !== undefined &&
      ((err.statusCode >= 400 && err.statusCode < 500) || err.statusCode === 503)
        ? err.statusCode
        : 500;
    if (code === 500) request.log.error({ err }, 'request failed');
    if (code === 503) {
      request.log.warn({ reason: err.message }, 'request refused');
      // The body is not read: the connection cannot carry another request.
      void reply.header('retry-after', '1').header('connection', 'close');
    }
    const message =
      err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? `Content-Type must be application/json, not ${request.headers['content-type'] ?? 'missing'}`
        : err.message;
    deps.metrics.requests.inc({
      endpoint: (request.routeOptions.url ?? '/unknown').slice(1),
      decision: 'invalid',
      result: String(code),
    });
    return sendStatus(reply, code, message);
  });

  registerHealthRoutes(app, webhookHealth(deps));

  const beforeLogLine = deps.beforeLogLine ?? ((): void => undefined);
  const admission = (endpoint: string, decide: Decide): void => {
    app.post(`/${endpoint}`, async (request, reply) => {
      const started = process.hrtime.bigint();
      const parsed = parseAdmissionReview(request.body);
      if (!parsed.ok) {
        deps.metrics.requests.inc({ endpoint, decision: 'invalid', result: 'bad-review' });
        return sendStatus(reply, 400, `invalid AdmissionReview: ${parsed.message}`);
      }
      if (!deps.source.isSynced()) {
        deps.metrics.requests.inc({ endpoint, decision: 'invalid', result: 'not-ready' });
        return sendStatus(reply, 503, 'the SidecarSet cache has not synced yet');
      }
      const { request: admissionRequest } = parsed;
      const outcome = decide(
        admissionRequest,
        deps.source.read(),
        admissionRequest.dryRun === true,
      );
      const decision = outcome.response.allowed ? 'allowed' : 'denied';
      deps.metrics.requests.inc({ endpoint, decision, result: outcome.result });
      deps.metrics.duration.observe({ endpoint }, Number(process.hrtime.bigint() - started) / 1e9);
      // The uid is a field of the line, first, where a child logger's binding would print it: a
      // child of request.log (itself a child, made per request) turned request.log into a
      // prototype on every request, 20 µs a line, a tenth of the decision on a realistic pod.
      // (request.log is a child of deps.logger, at its level: no route sets a logLevel.)
      const level = outcome.level ?? 'info';
      if (deps.logger.isLevelEnabled(level)) {
        beforeLogLine();
        request.log[level](
          {
            uid: admissionRequest.uid,
            endpoint,
            operation: admissionRequest.operation,
            namespace: admissionRequest.namespace,
            name: admissionRequest.name,
            dryRun: admissionRequest.dryRun,
            decision,
            result: outcome.result,
            ...(outcome.response.status ? { message: outcome.response.status.message } : {}),
            ...outcome.log,
          },
          'admission',
        );
      }
      return reply.send(reviewResponse(parsed.apiVersion, outcome.response));
    });
  };

  admission('mutate-pods', (request, snapshot, dryRun) => {
    const decision = decidePod(request, snapshot, {
      now: deps.now(),
      random: deps.random,
      ...(deps.jobSidecars === undefined ? {} : { jobSidecars: deps.jobSidecars }),
    });
    if (!dryRun)
      for (const name of decision.injected) deps.metrics.injections.inc({ sidecarset: name });
    const { problem } = decision;
    return {
      response: decision.response,
      result: decision.outcome,
      log: {
        injected: decision.injected,
        ...(decision.reason ? { reason: decision.reason } : {}),
        ...(problem ? { problem: problem.message } : {}),
        ...(problem?.err instanceof Error ? { err: problem.err } : {}),
      },
      ...(problem ? { level: problem.level } : {}),
    };
  });
  admission('mutate-sidecarsets', (request) => {
    const decision = decideSidecarSetMutation(request);
    return { response: decision.response, result: decision.outcome };
  });
  admission('validate-sidecarsets', (request, snapshot) => {
    const decision = decideSidecarSetValidation(
      request,
      snapshot.sidecarSets.all,
      snapshot.revisions,
      deps.patchMetadataAllowList,
    );
    return { response: decision.response, result: decision.outcome };
  });

  registerConversion(app, deps);

  return app;
}

/**
 * /convert: the SidecarSet CRD's conversion webhook (docs/adr/0015-sidecarset-v1beta1.md). Pure
 * conversion, so it answers before the SidecarSet cache has synced: the API server needs it to
 * read or write v1alpha1 at all, the controller's own start included.
 */
function registerConversion(app: FastifyInstance, deps: AppDeps): void {
  const endpoint = 'convert';
  app.post(`/${endpoint}`, async (request, reply) => {
    const started = process.hrtime.bigint();
    const outcome = reviewConversion(request.body);
    if (!outcome.ok) {
      deps.metrics.requests.inc({ endpoint, decision: 'invalid', result: 'bad-review' });
      return sendStatus(reply, 400, `invalid ConversionReview: ${outcome.message}`);
    }
    const { response } = outcome.review;
    const success = response.result.status === 'Success';
    deps.metrics.requests.inc({
      endpoint,
      decision: success ? 'allowed' : 'denied',
      result: success ? 'converted' : 'failed',
    });
    deps.metrics.duration.observe({ endpoint }, Number(process.hrtime.bigint() - started) / 1e9);
    if (!success) {
      request.log.warn(
        { endpoint, uid: response.uid, message: response.result.message },
        'conversion failed',
      );
    } else if (deps.logger.isLevelEnabled('debug')) {
      request.log.debug({ endpoint, uid: response.uid, objects: outcome.converted }, 'conversion');
    }
    return reply.send(outcome.review);
  });
}

/** The plain-HTTP app of the metrics port: /metrics, /healthz, /readyz, under the same limits. */
export function buildHealthApp(
  deps: Pick<AppDeps, 'source' | 'logger' | 'metrics' | 'limits' | 'maxCacheStalenessSeconds'> &
    Partial<Pick<AppDeps, 'now'>>,
): FastifyInstance {
  const app = limitedFastify(deps.logger, deps.metrics, deps.limits ?? DEFAULT_SERVER_LIMITS);
  registerHealthRoutes(app, webhookHealth(deps));
  return app;
}

/**
 * On close, Node ends the connections idle at that moment, but not one that has sent no request
 * yet: no request timeout runs on it, so it held the close forever, past close-with-grace's 25 s
 * (a client left one open in test/e2e/install.e2e.ts, against kube-apiserver). Every request in
 * flight has arrived within the read timeout, so whatever is still open `graceMs` into the close
 * is closed (test/server/limits.test.ts).
 */
function closeLeftoverConnections(app: FastifyInstance, graceMs: number): void {
  let timer: NodeJS.Timeout | undefined;
  app.addHook('preClose', (done) => {
    timer = setTimeout(() => {
      app.server.closeAllConnections();
    }, graceMs);
    timer.unref();
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    clearTimeout(timer);
    done();
  });
}

/**
 * Fastify on a server with the limits (http-server.ts). A connection cut off by them is counted,
 * logged at warn, and told why in a Status when it can still be written to.
 */
function limitedFastify(
  logger: Logger,
  metrics: WebhookMetrics,
  limits: ServerLimits,
  https?: CertificatePair,
): FastifyInstance {
  const { shed } = limitMetricsOf(metrics.registry);
  let droppedSinceLog = 0;
  let lastLog = 0;
  const onDrop = (): void => {
    shed.inc({ reason: 'max-connections' });
    // A flood of connections must not become a flood of log lines: one a second at most.
    droppedSinceLog++;
    if (Date.now() - lastLog < 1000) return;
    lastLog = Date.now();
    logger.warn(
      { maxConnections: limits.maxConnections, refused: droppedSinceLog },
      'connections refused: too many open connections (--max-connections)',
    );
    droppedSinceLog = 0;
  };
  const app = fastify({
    loggerInstance: logger,
    bodyLimit: BODY_LIMIT,
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    ...(https ? { https } : {}),
    serverFactory: limitedServerFactory(https, limits, {
      onDrop,
      onIdleClosed: () => {
        shed.inc({ reason: 'idle-keep-alive' });
      },
    }),
    clientErrorHandler: (err: NodeJS.ErrnoException, socket: Socket) => {
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      const timedOut = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
      const [code, message] = timedOut
        ? [
            408,
            `the request was not received within ${limits.readTimeoutSeconds} s (--read-timeout)`,
          ]
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? [431, `the request headers are larger than ${maxHeaderSize} bytes`]
          : [400, `malformed HTTP request: ${err.code ?? err.message}`];
      if (timedOut) shed.inc({ reason: 'read-timeout' });
      logger.warn({ remoteAddress: socket.remoteAddress, code: err.code }, message);
      if (socket.writable) {
        const body = JSON.stringify(statusBody(code, message));
        socket.write(
          `HTTP/1.1 ${code} ${STATUS_CODES[code] ?? ''}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
            `Connection: close\r\n\r\n${body}`,
        );
      }
      socket.destroy();
    },
  }) as unknown as FastifyInstance;
  closeLeftoverConnections(app, limits.readTimeoutSeconds * 1000);
  return app;
}

/**
 * The webhook is ready once its SidecarSet cache has synced, and as long as none of its caches
 * has been failing to list or watch for longer than `maxCacheStalenessSeconds`: an API server
 * that restarts or refuses us leaves it answering from an old state. Only readiness says so;
 * liveness stays ok, since a restart would not bring the API server back.
 */
function webhookHealth(
  deps: Pick<AppDeps, 'source' | 'metrics' | 'maxCacheStalenessSeconds'> &
    Partial<Pick<AppDeps, 'now'>>,
): HealthDeps {
  const { source } = deps;
  const maxSeconds = deps.maxCacheStalenessSeconds ?? DEFAULT_MAX_CACHE_STALENESS_SECONDS;
  const now = deps.now ?? ((): Date => new Date());
  return {
    notReady: () => {
      if (!source.isSynced()) return 'the SidecarSet cache has not synced yet';
      const failing = source.failing?.() ?? [];
      return staleCachesReason('the SidecarSet cache is', failing, now().getTime(), maxSeconds);
    },
    registry: deps.metrics.registry,
  };
}
