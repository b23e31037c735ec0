/** `sidecarset inject`: what the pod admission webhook would do to manifests (../inject.ts). */
import { Option } from 'commander';

import type { JobSidecarMode } from '../../core/inject/job-sidecars.js';
import type { RegisterCommand } from './context.js';
import { jobSidecarsOption, SIDECARSETS_HELP } from './options.js';

export const register: RegisterCommand = (program, { io, now, setExitCode }) => {
  program
    .command('inject')
    .description(
      'print objects as the pod admission webhook would leave them (like istioctl kube-inject)',
    )
    .requiredOption('--sidecarsets <path>', SIDECARSETS_HELP)
    .option('--namespaces <file>', 'Namespace objects for namespaceSelector, or - for stdin')
    .requiredOption('-f, --filename <file>', 'a Pod or workload manifest, or - for stdin')
    .addOption(
      new Option('-o, --output <format>', 'output format')
        .choices(['yaml', 'json'])
        .default('yaml'),
    )
    .option('--explain', 'print on stderr, per SidecarSet, whether it matched and why not', false)
    .addOption(jobSidecarsOption())
    .action(
      async (opts: {
        sidecarsets: string;
        namespaces?: string;
        filename: string;
        output: 'yaml' | 'json';
        explain: boolean;
        jobSidecars: JobSidecarMode;
      }) => {
        const { runInject } = await import('../inject.js');
        setExitCode(await runInject(opts, io, now()));
      },
    );
};
