/** /healthz, /readyz and /metrics: on the webhook's HTTPS port and on the plain metrics port. */
import type { FastifyInstance, FastifyReply } from 'fastify';

import type { Registry } from 'prom-client';

export interface HealthDeps {
  /** Ready to serve; otherwise /readyz answers 503 with `notReady`. */
  isReady: () => boolean;
  notReady: string;
  registry: Registry;
}

export function registerHealthRoutes(app: FastifyInstance, deps: HealthDeps): void {
  app.get('/healthz', () => 'ok');
  app.get('/readyz', (_request, reply) =>
    deps.isReady() ? reply.send('ok') : sendStatus(reply, 503, deps.notReady),
  );
  app.get('/metrics', async (_request, reply) => {
    const body = await deps.registry.metrics();
    return reply.type(deps.registry.contentType).send(body);
  });
}

/** An error answer shaped like a Kubernetes Status, so that clients print a clear message. */
export function sendStatus(reply: FastifyReply, code: number, message: string): FastifyReply {
  return reply.code(code).send(statusBody(code, message));
}

export function statusBody(code: number, message: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, message };
}
