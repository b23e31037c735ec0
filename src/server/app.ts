/**
 * The webhook's HTTP surface (fastify): admission endpoints, health and metrics. Handlers parse
 * the envelope, call the pure decision functions on the current snapshot and wrap the answer;
 * nothing else happens here. `buildApp` does not listen.
 */
import type { ServerOptions as HttpsServerOptions } from 'node:https';

import type { FastifyError, FastifyInstance } from 'fastify';
import { LogController, fastify } from 'fastify';
import type { Logger } from 'pino';

import type { SnapshotSource } from '../cache/snapshot.js';
import { decidePod } from '../core/admission/pod-webhook.js';
import type { AdmissionRequest, AdmissionResponse } from '../core/admission/review.js';
import { parseAdmissionReview, reviewResponse } from '../core/admission/review.js';
import {
  decideSidecarSetMutation,
  decideSidecarSetValidation,
} from '../core/admission/sidecarset-webhooks.js';
import type { Snapshot } from '../cache/snapshot.js';
import type { HealthDeps } from './health-routes.js';
import { registerHealthRoutes, sendStatus } from './health-routes.js';
import type { WebhookMetrics } from './metrics.js';

/**
 * The API server accepts objects of up to 3 MiB; an AdmissionReview carries the object and, on
 * UPDATE, the old object, plus JSON overhead (controller-runtime sizes its limit the same way).
 */
export const BODY_LIMIT = 7 * 1024 * 1024;

export interface AppDeps {
  source: SnapshotSource;
  logger: Logger;
  metrics: WebhookMetrics;
  now: () => Date;
  random: () => number;
  /** TLS options; omitted for a plain-HTTP app (the separate metrics port). */
  https?: HttpsServerOptions;
}

interface Outcome {
  response: AdmissionResponse;
  result: string;
  /** Extra fields for the request's log line. */
  log?: Record<string, unknown>;
}

type Decide = (request: AdmissionRequest, snapshot: Snapshot, dryRun: boolean) => Outcome;

export function buildApp(deps: AppDeps): FastifyInstance {
  const app = fastify({
    loggerInstance: deps.logger,
    bodyLimit: BODY_LIMIT,
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    ...(deps.https ? { https: { minVersion: 'TLSv1.2', ...deps.https } } : {}),
  }) as unknown as FastifyInstance;

  // AdmissionReviews are JSON; anything else is answered 415 rather than parsed as text.
  app.removeContentTypeParser('text/plain');

  app.setErrorHandler((err: FastifyError, request, reply) => {
    const code =
      err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500
        ? err.statusCode
        : 500;
    if (code === 500) request.log.error({ err }, 'request failed');
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

  registerHealthRoutes(app, webhookHealth(deps.source, deps.metrics));

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
      // The request's line comes from a child logger that carries its uid. pino serializes a
      // child's bindings when it is made, a few µs: so it is made only when the line is written.
      // (request.log is a child of deps.logger, at its level: no route sets a logLevel.)
      if (deps.logger.isLevelEnabled('info')) {
        request.log.child({ uid: admissionRequest.uid }).info(
          {
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
    const decision = decidePod(request, snapshot, { now: deps.now(), random: deps.random });
    if (!dryRun)
      for (const name of decision.injected) deps.metrics.injections.inc({ sidecarset: name });
    return {
      response: decision.response,
      result: decision.outcome,
      log: { injected: decision.injected, ...(decision.reason ? { reason: decision.reason } : {}) },
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
    );
    return { response: decision.response, result: decision.outcome };
  });

  return app;
}

/** The webhook is ready once its SidecarSet cache has synced. */
export function webhookHealth(source: SnapshotSource, metrics: WebhookMetrics): HealthDeps {
  return {
    isReady: () => source.isSynced(),
    notReady: 'the SidecarSet cache has not synced yet',
    registry: metrics.registry,
  };
}
