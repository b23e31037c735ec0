/** `sidecarset validate`: SidecarSet manifests checked as the validating webhook would (../validate.ts). */
import type { RegisterCommand } from './context.js';
import { SIDECARSETS_HELP } from './options.js';

export const register: RegisterCommand = (program, { io, setExitCode }) => {
  program
    .command('validate')
    .description(
      'check SidecarSet manifests as the validating webhook would; exit 1 on any problem',
    )
    .requiredOption('--sidecarsets <path>', SIDECARSETS_HELP)
    .action(async (opts: { sidecarsets: string }) => {
      const { runValidate } = await import('../validate.js');
      setExitCode(await runValidate(opts, io));
    });
};
