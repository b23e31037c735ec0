/** /healthz, /readyz and /metrics: on the webhook's HTTPS port and on the plain metrics port. */
import type { FastifyInstance, FastifyReply } from 'fastify';

import type { SnapshotSource } from '../cache/snapshot.js';
import type { WebhookMetrics } from './metrics.js';

export function registerHealthRoutes(
  app: FastifyInstance,
  deps: { source: SnapshotSource; metrics: WebhookMetrics },
): void {
  app.get('/healthz', () => 'ok');
  app.get('/readyz', (_request, reply) =>
    deps.source.isSynced()
      ? reply.send('ok')
      : sendStatus(reply, 503, 'the SidecarSet cache has not synced yet'),
  );
  app.get('/metrics', async (_request, reply) => {
    const body = await deps.metrics.registry.metrics();
    return reply.type(deps.metrics.registry.contentType).send(body);
  });
}

/** An error answer shaped like a Kubernetes Status, so that clients print a clear message. */
export function sendStatus(reply: FastifyReply, code: number, message: string): FastifyReply {
  return reply
    .code(code)
    .send({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, message });
}
