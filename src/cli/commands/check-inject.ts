/** `sidecarset check-inject`: why each SidecarSet injected a pod or not (../check-inject.ts). */
import { INSTALLATION } from '../../core/api/installation-names.js';
import type { CheckInjectOptions } from '../check-inject.js';
import type { RegisterCommand } from './context.js';
import { addClusterOptions, outputOption } from './options.js';

export const register: RegisterCommand = (program, { io, setExitCode }) => {
  addClusterOptions(
    program
      .command('check-inject')
      .description(
        'say for every SidecarSet whether it injected a pod, and why not (like istioctl x check-inject)',
      )
      .argument('<pod>', 'the pod')
      .option('-n, --namespace <ns>', "the pod's namespace (default: the context's)")
      .option(
        '--webhook-configuration <name>',
        "the pod webhook's MutatingWebhookConfiguration",
        INSTALLATION.mutatingWebhookConfiguration,
      )
      .addOption(outputOption()),
  ).action(async (pod: string, opts: CheckInjectOptions) => {
    const { runCheckInject } = await import('../check-inject.js');
    setExitCode(await runCheckInject(pod, opts, io));
  });
};
