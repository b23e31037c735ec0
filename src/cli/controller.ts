/** `sidecarset controller`: the upgrade controller alone, with health and metrics over HTTP. */
import type { FastifyInstance } from 'fastify';
import { fastify } from 'fastify';
import { pino } from 'pino';
import { Registry } from 'prom-client';

import type { Controller } from '../controller/controller.js';
import {
  DEFAULT_MAX_CACHE_STALENESS_SECONDS,
  registerHealthRoutes,
  staleCachesReason,
} from '../server/health-routes.js';
import { registerCacheFailingMetric } from '../server/cache-failing-metric.js';
import { registerProcessMetrics } from '../server/process-metrics.js';
import type { Io } from './io.js';
import { closeOnSignal } from './io.js';
import type { ControllerFlags } from './flags.js';
import { clusterKubeConfig, launchController } from './serve-cluster.js';

export interface ControllerCommandOptions extends ControllerFlags {
  kubeconfig?: string;
  metricsPort?: number;
  host: string;
  logLevel: string;
  /** Seconds a cache may fail to list or watch before /readyz answers 503; 0 never. */
  maxCacheStaleness?: number;
}

/**
 * Why the controller is not ready: its caches have not synced, or one has failed to list or
 * watch for longer than `maxSeconds`, as for `serve` (src/server/app.ts, webhookHealth).
 */
export function controllerNotReady(
  controller: Pick<Controller, 'synced' | 'failing'>,
  maxSeconds: number,
  nowMs: () => number = Date.now,
): () => string | undefined {
  return () => {
    if (!controller.synced()) return 'the controller caches have not synced yet';
    return staleCachesReason(
      'the controller caches are',
      controller.failing(),
      nowMs(),
      maxSeconds,
    );
  };
}

export async function runController(options: ControllerCommandOptions, io: Io): Promise<number> {
  const logger = pino({ level: options.logLevel, base: { service: 'sidecarset' } }, io.stdout);
  const registry = new Registry();
  registerProcessMetrics(registry);
  const controller = launchController(
    clusterKubeConfig(options.kubeconfig, registry),
    options,
    logger,
    registry,
  );
  registerCacheFailingMetric(registry, () => controller.failing());
  let app: FastifyInstance | undefined;
  if (options.metricsPort !== undefined) {
    app = fastify({ loggerInstance: logger }) as unknown as FastifyInstance;
    registerHealthRoutes(app, {
      notReady: controllerNotReady(
        controller,
        options.maxCacheStaleness ?? DEFAULT_MAX_CACHE_STALENESS_SECONDS,
      ),
      registry,
    });
    await app.listen({ port: options.metricsPort, host: options.host });
  }
  closeOnSignal(io, 'stopping the controller', async () => {
    await app?.close();
    await controller.stop();
  });
  return 0;
}
