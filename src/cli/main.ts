/** The `sidecarset` command line. No side effects here beyond the streams passed in. */
import { Command, CommanderError } from 'commander';

import { SidecarSetError } from '../core/errors.js';
import * as check from './commands/check.js';
import * as checkInject from './commands/check-inject.js';
import * as completion from './commands/completion.js';
import type { CommandContext, RegisterCommand } from './commands/context.js';
import * as controller from './commands/controller.js';
import * as inject from './commands/inject.js';
import * as plan from './commands/plan.js';
import * as rollout from './commands/rollout.js';
import * as serve from './commands/serve.js';
import * as validate from './commands/validate.js';
import type { Io } from './io.js';
import { quietOnClosedPipe, UsageError } from './io.js';
import { ClusterError } from '../k8s/cluster-error.js';
import { VERSION } from '../version.js';

export type { Io } from './io.js';
export { sizeHeapForServing } from './serving-heap.js';

/** The commands, each in its own file (src/cli/commands), in the order `--help` lists them. */
const COMMANDS: readonly { register: RegisterCommand }[] = [
  inject,
  validate,
  plan,
  rollout,
  checkInject,
  check,
  completion,
  serve,
  controller,
];

export interface MainEnv {
  now?: () => Date;
}

export async function main(argv: readonly string[], io: Io, env: MainEnv = {}): Promise<number> {
  const now = env.now ?? (() => new Date());
  quietOnClosedPipe(io.stdout);
  quietOnClosedPipe(io.stderr);
  let exitCode = 0;
  const program = new Command('sidecarset')
    .description(
      'SidecarSet (apps.kruise.io/v1beta1, v1alpha1) sidecar injection and in-place upgrades',
    )
    .version(VERSION)
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    });
  const context: CommandContext = {
    io,
    now,
    setExitCode: (code) => {
      exitCode = code;
    },
  };
  for (const command of COMMANDS) command.register(program, context);

  try {
    if (argv.length === 0) {
      program.outputHelp();
      return 2;
    }
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (err) {
    return reportError(err, io);
  }
}

function reportError(err: unknown, io: Io): number {
  if (err instanceof CommanderError) {
    // Help and version exit through here too, with code 0; commander printed the message itself.
    return err.exitCode === 0 ? 0 : 2;
  }
  if (err instanceof UsageError) {
    io.stderr.write(`error: ${err.message}\n`);
    return 2;
  }
  const message =
    err instanceof SidecarSetError || err instanceof ClusterError
      ? err.message
      : `internal error: ${err instanceof Error ? err.message : String(err)}`;
  io.stderr.write(`error: ${message}\n`);
  return 1;
}
