/** `sidecarset rollout` and its subcommands, like kubectl rollout (../rollout.ts). */
import type { Command } from 'commander';
import { Option } from 'commander';

import type { ClusterFlags } from '../../k8s/cli-client.js';
import { DEFAULT_CONTROLLER_FLAGS, parseNonNegative, parsePositive } from '../flags.js';
import type { HistoryOptions, StatusOptions, UndoOptions } from '../rollout.js';
import type { RegisterCommand } from './context.js';
import { addClusterOptions, outputOption } from './options.js';

export const register: RegisterCommand = (program, { io, now, setExitCode }) => {
  const rollout = program
    .command('rollout')
    .description("manage a SidecarSet's in-place rollout in the cluster (like kubectl rollout)");
  addClusterOptions(
    rollout
      .command('status')
      .description('show the rollout: progress, and the pods held back and why')
      .argument('<name>', 'the SidecarSet')
      .option('-w, --watch', 'follow the rollout until it is done', false)
      .addOption(
        new Option('--timeout <seconds>', 'with -w: give up after this long (0: never)')
          .argParser(parseNonNegative)
          .default(0),
      )
      .addOption(outputOption()),
  ).action(async (name: string, opts: StatusOptions) => {
    const { runRolloutStatus } = await import('../rollout.js');
    setExitCode(await runRolloutStatus(name, opts, io, now));
  });
  addRevisionNamespace(
    addClusterOptions(
      rollout
        .command('history')
        .description("list the SidecarSet's revisions (ControllerRevisions)")
        .argument('<name>', 'the SidecarSet')
        .addOption(
          new Option('--revision <n>', 'print the sidecars that revision records').argParser(
            parsePositive,
          ),
        )
        .addOption(outputOption()),
    ),
  ).action(async (name: string, opts: HistoryOptions) => {
    const { runRolloutHistory } = await import('../rollout.js');
    setExitCode(await runRolloutHistory(name, opts, io));
  });
  addRevisionNamespace(
    addClusterOptions(
      rollout
        .command('undo')
        .description(
          "write a revision's sidecars back into the spec; the controller rolls pods back in place",
        )
        .argument('<name>', 'the SidecarSet')
        .addOption(
          new Option(
            '--to-revision <n>',
            'the revision (default: the one before the current)',
          ).argParser(parseNonNegative),
        )
        .option('--dry-run', 'say which revision it would go back to, write nothing', false),
    ),
  ).action(async (name: string, opts: UndoOptions) => {
    const { runRolloutUndo } = await import('../rollout.js');
    setExitCode(await runRolloutUndo(name, opts, io));
  });
  addClusterOptions(
    rollout
      .command('pause')
      .description('stop upgrading pods (sets spec.updateStrategy.paused)')
      .argument('<name>', 'the SidecarSet'),
  ).action(async (name: string, opts: ClusterFlags) => {
    const { runRolloutPause } = await import('../rollout.js');
    setExitCode(await runRolloutPause(name, opts, io));
  });
  addClusterOptions(
    rollout
      .command('resume')
      .description("go on upgrading pods: lifts rollout pause and the controller's own pause")
      .argument('<name>', 'the SidecarSet'),
  ).action(async (name: string, opts: ClusterFlags) => {
    const { runRolloutResume } = await import('../rollout.js');
    setExitCode(await runRolloutResume(name, opts, io, now));
  });
};

function addRevisionNamespace(command: Command): Command {
  return command.addOption(
    new Option(
      '--revision-namespace <ns>',
      'where the controller keeps the ControllerRevisions (its --leader-election-namespace)',
    ).default(DEFAULT_CONTROLLER_FLAGS.leaderElectionNamespace),
  );
}
