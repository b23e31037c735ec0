/** /healthz, /readyz and /metrics: on the webhook's HTTPS port and on the plain metrics port. */
import type { FastifyInstance, FastifyReply } from 'fastify';

import type { Registry } from 'prom-client';

import type { FailingCache } from '../cache/snapshot.js';

/**
 * By default a failing cache never makes /readyz answer 503: every replica shares the cause, and a
 * webhook with no ready replica injects nothing (docs/adr/0037-stale-caches-stay-ready.md).
 */
export const DEFAULT_MAX_CACHE_STALENESS_SECONDS = 0;

export interface HealthDeps {
  /**
   * Why the process is not ready to serve, which /readyz answers with 503; undefined when ready.
   * /healthz (liveness) never reads it: a restart would not make a stale cache fresh.
   */
  notReady: () => string | undefined;
  registry: Registry;
}

/**
 * Why /readyz answers 503 when caches have failed to list or watch for longer than
 * --max-cache-staleness (`maxSeconds`; 0 never): they answer from an old state. `what` names
 * them, as the subject of "stale".
 */
export function staleCachesReason(
  what: string,
  failing: readonly FailingCache[],
  nowMs: number,
  maxSeconds: number,
): string | undefined {
  const maxMs = maxSeconds * 1000;
  const stale = maxMs <= 0 ? [] : failing.filter((c) => nowMs - c.sinceMs > maxMs);
  if (stale.length === 0) return undefined;
  const each = stale.map(
    (c) =>
      `${c.name}: list/watch failing for ${Math.round((nowMs - c.sinceMs) / 1000)} s (${c.reason})`,
  );
  return `${what} stale, over --max-cache-staleness ${maxSeconds} s: ${each.join('; ')}`;
}

export function registerHealthRoutes(app: FastifyInstance, deps: HealthDeps): void {
  app.get('/healthz', () => 'ok');
  app.get('/readyz', (_request, reply) => {
    const reason = deps.notReady();
    return reason === undefined ? reply.send('ok') : sendStatus(reply, 503, reason);
  });
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
