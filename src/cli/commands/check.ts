/** `sidecarset check`: the installation's health, or a migration's preflight (../check.ts). */
import { INSTALLATION } from '../../core/api/installation-names.js';
import type { CheckOptions } from '../check.js';
import type { RegisterCommand } from './context.js';
import { addClusterOptions, outputOption } from './options.js';

export const register: RegisterCommand = (program, { io, now, setExitCode }) => {
  addClusterOptions(
    program
      .command('check')
      .description(
        'is the installation healthy? one line per check; exit 1 when one failed (like linkerd check)',
      )
      .option(
        '-n, --namespace <ns>',
        'where the webhook Deployment and the Lease are',
        INSTALLATION.namespace,
      )
      .option(
        '--pre',
        'before migrating from OpenKruise: report what will not carry over (its webhooks, pinned revisions, namespace with namespaceSelector, ...)',
      )
      .addOption(outputOption()),
  ).action(async (opts: CheckOptions) => {
    const { runCheck } = await import('../check.js');
    setExitCode(await runCheck(opts, io, now));
  });
};
