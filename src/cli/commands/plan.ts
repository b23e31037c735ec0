/** `sidecarset plan`: the next in-place upgrade round, or the whole rollout (../plan.ts). */
import type { PlanCommandOptions } from '../plan.js';
import type { RegisterCommand } from './context.js';
import { addClusterOptions, outputOption, SIDECARSETS_HELP } from './options.js';

export const register: RegisterCommand = (program, { io, now, setExitCode }) => {
  addClusterOptions(
    program
      .command('plan')
      .description(
        'show the next in-place sidecar upgrade round; --simulate plays the whole rollout',
      )
      .argument('[name]', 'a SidecarSet in the cluster, planned with its live pods')
      .option('--sidecarsets <path>', `offline: ${SIDECARSETS_HELP}`)
      .option(
        '--pods <path>',
        'offline: Pods: a file, a directory (YAML, JSON, v1 List), or - for stdin',
      )
      .addOption(outputOption())
      .option(
        '--simulate',
        'play the rollout forward wave by wave, assuming upgraded pods become ready',
        false,
      )
      .option(
        '--fail-image <image>',
        'with --simulate: sidecars on this image never become ready (repeatable); shows where the health gate pauses',
        (value: string, previous: string[]) => [...previous, value],
        [] as string[],
      ),
  ).action(async (name: string | undefined, opts: Omit<PlanCommandOptions, 'name'>) => {
    const { runPlan } = await import('../plan.js');
    setExitCode(await runPlan({ ...opts, ...(name === undefined ? {} : { name }) }, io, now()));
  });
};
