/** `sidecarset controller`: the upgrade controller alone, with health and metrics over HTTP. */
import type { FastifyInstance } from 'fastify';
import { fastify } from 'fastify';
import { pino } from 'pino';
import { Registry } from 'prom-client';

import { registerHealthRoutes } from '../server/health-routes.js';
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
  let app: FastifyInstance | undefined;
  if (options.metricsPort !== undefined) {
    app = fastify({ loggerInstance: logger }) as unknown as FastifyInstance;
    registerHealthRoutes(app, {
      notReady: () =>
        controller.synced() ? undefined : 'the controller caches have not synced yet',
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
