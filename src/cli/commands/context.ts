/**
 * What every command of the `sidecarset` command line is given to register itself. Each file of
 * src/cli/commands holds one command's name, flags and help, and loads the code that runs it only
 * when it runs (`import()` in its action), so that `--help` and each command load only their own
 * modules.
 */
import type { Command } from 'commander';

import type { Io } from '../io.js';

export interface CommandContext {
  io: Io;
  now: () => Date;
  /** Records the exit code of the command that ran; main returns it. */
  setExitCode: (code: number) => void;
}

/** Adds one command (with its subcommands) to the program. */
export type RegisterCommand = (program: Command, context: CommandContext) => void;
