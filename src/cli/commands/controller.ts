/** `sidecarset controller`: the in-place upgrade controller alone (../controller.ts). */
import { Option } from 'commander';

import type { ControllerCommandOptions } from '../controller.js';
import { parsePort } from '../flags.js';
import type { RegisterCommand } from './context.js';
import { addControllerOptions, KUBECONFIG_HELP, maxCacheStalenessOption } from './options.js';

export const register: RegisterCommand = (program, { io, setExitCode }) => {
  const controller = program
    .command('controller')
    .description(
      'run only the in-place upgrade controller (every flag also reads SIDECARSET_<FLAG>)',
    )
    .addOption(new Option('--kubeconfig <file>', KUBECONFIG_HELP).env('SIDECARSET_KUBECONFIG'))
    .addOption(
      new Option('--metrics-port <port>', 'serve /metrics, /healthz, /readyz over plain HTTP')
        .env('SIDECARSET_METRICS_PORT')
        .argParser(parsePort),
    )
    .addOption(
      new Option('--host <host>', 'address of the metrics port')
        .env('SIDECARSET_HOST')
        .default('0.0.0.0'),
    )
    .addOption(
      new Option('--log-level <level>', 'pino log level')
        .env('SIDECARSET_LOG_LEVEL')
        .choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace'])
        .default('info'),
    )
    .addOption(maxCacheStalenessOption());
  addControllerOptions(controller).action(async (opts: ControllerCommandOptions) => {
    const { runController } = await import('../controller.js');
    setExitCode(await runController(opts, io));
  });
};
