/** `sidecarset completion`: a shell completion script of the whole program (../completion.ts). */
import { Argument } from 'commander';

import type { Shell } from '../completion.js';
import { completionScript, SHELLS } from '../completion.js';
import type { RegisterCommand } from './context.js';

export const register: RegisterCommand = (program, { io }) => {
  program
    .command('completion')
    .description('print a shell completion script (bash: source it; zsh: save it as _sidecarset)')
    .addArgument(new Argument('<shell>', 'bash or zsh').choices(SHELLS))
    .action((shell: Shell) => {
      io.stdout.write(completionScript(program, shell));
    });
};
