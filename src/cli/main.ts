/** The `sidecarset` command line. No side effects here beyond the streams passed in. */
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';

import { SidecarSetError } from '../core/errors.js';
import { INSTALLATION } from '../core/api/installation-names.js';
import type { JobSidecarMode } from '../core/inject/job-sidecars.js';
import { JOB_SIDECAR_MODES } from '../core/inject/job-sidecars.js';
import type { Shell } from './completion.js';
import { completionScript, SHELLS } from './completion.js';
import type { CheckOptions } from './check.js';
import type { CheckInjectOptions } from './check-inject.js';
import type { ControllerCommandOptions } from './controller.js';
import {
  DEFAULT_CONTROLLER_FLAGS,
  parseBool,
  parseByteSize,
  parseIpAddresses,
  parseList,
  parsePort,
  parsePositive,
  parseWebhookConfigurations,
} from './flags.js';
import type { ControllerFlags } from './flags.js';
import type { Io } from './io.js';
import { quietOnClosedPipe, UsageError } from './io.js';
import type { PlanCommandOptions } from './plan.js';
import type { HistoryOptions, StatusOptions, UndoOptions } from './rollout.js';
import type { ServeOptions } from './serve.js';
import type { ClusterFlags } from '../k8s/cli-client.js';
import { ClusterError } from '../k8s/cluster-error.js';
import { DEFAULT_MAX_CACHE_STALENESS_SECONDS } from '../server/health-routes.js';
import { DEFAULT_SERVER_LIMITS } from '../server/http-server.js';
import { VERSION } from '../version.js';

export type { Io } from './io.js';

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
        const { runInject } = await import('./inject.js');
        exitCode = await runInject(opts, io, now());
      },
    );

  program
    .command('validate')
    .description(
      'check SidecarSet manifests as the validating webhook would; exit 1 on any problem',
    )
    .requiredOption('--sidecarsets <path>', SIDECARSETS_HELP)
    .action(async (opts: { sidecarsets: string }) => {
      const { runValidate } = await import('./validate.js');
      exitCode = await runValidate(opts, io);
    });

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
    const { runPlan } = await import('./plan.js');
    exitCode = await runPlan({ ...opts, ...(name === undefined ? {} : { name }) }, io, now());
  });

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
    const { runRolloutStatus } = await import('./rollout.js');
    exitCode = await runRolloutStatus(name, opts, io, now);
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
    const { runRolloutHistory } = await import('./rollout.js');
    exitCode = await runRolloutHistory(name, opts, io);
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
    const { runRolloutUndo } = await import('./rollout.js');
    exitCode = await runRolloutUndo(name, opts, io);
  });
  addClusterOptions(
    rollout
      .command('pause')
      .description('stop upgrading pods (sets spec.updateStrategy.paused)')
      .argument('<name>', 'the SidecarSet'),
  ).action(async (name: string, opts: ClusterFlags) => {
    const { runRolloutPause } = await import('./rollout.js');
    exitCode = await runRolloutPause(name, opts, io);
  });
  addClusterOptions(
    rollout
      .command('resume')
      .description("go on upgrading pods: lifts rollout pause and the controller's own pause")
      .argument('<name>', 'the SidecarSet'),
  ).action(async (name: string, opts: ClusterFlags) => {
    const { runRolloutResume } = await import('./rollout.js');
    exitCode = await runRolloutResume(name, opts, io, now);
  });

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
    const { runCheckInject } = await import('./check-inject.js');
    exitCode = await runCheckInject(pod, opts, io);
  });

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
    const { runCheck } = await import('./check.js');
    exitCode = await runCheck(opts, io, now);
  });

  program
    .command('completion')
    .description('print a shell completion script (bash: source it; zsh: save it as _sidecarset)')
    .addArgument(new Argument('<shell>', 'bash or zsh').choices(SHELLS))
    .action((shell: Shell) => {
      io.stdout.write(completionScript(program, shell));
    });

  const serve = program
    .command('serve')
    .description('run the admission webhook over HTTPS (every flag also reads SIDECARSET_<FLAG>)')
    .addOption(
      new Option(
        '--sidecarsets <path>',
        'files mode: SidecarSet manifests, reloaded on change',
      ).env('SIDECARSET_SIDECARSETS'),
    )
    .addOption(
      new Option('--namespaces <file>', 'files mode: Namespace objects for namespaceSelector').env(
        'SIDECARSET_NAMESPACES',
      ),
    )
    .addOption(
      new Option('--kubeconfig <file>', `cluster mode: ${KUBECONFIG_HELP}`).env(
        'SIDECARSET_KUBECONFIG',
      ),
    )
    .addOption(
      new Option('--port <port>', 'HTTPS port')
        .env('SIDECARSET_PORT')
        .default(9443)
        .argParser(parsePort),
    )
    .addOption(
      new Option('--host <host>', 'address to listen on').env('SIDECARSET_HOST').default('0.0.0.0'),
    )
    .addOption(
      new Option('--cert <file>', 'serving certificate (PEM), reloaded on change').env(
        'SIDECARSET_CERT',
      ),
    )
    .addOption(new Option('--key <file>', 'private key of --cert (PEM)').env('SIDECARSET_KEY'))
    .addOption(
      new Option('--metrics-port <port>', 'also serve /metrics, /healthz, /readyz over plain HTTP')
        .env('SIDECARSET_METRICS_PORT')
        .argParser(parsePort),
    )
    .addOption(
      new Option('--log-level <level>', 'pino log level')
        .env('SIDECARSET_LOG_LEVEL')
        .choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace'])
        .default('info'),
    )
    .addOption(
      new Option(
        '--dev-cert-dir <dir>',
        'where the development certificate goes without --cert/--key',
      )
        .env('SIDECARSET_DEV_CERT_DIR')
        .default('certs/dev'),
    )
    .addOption(
      new Option(
        '--cert-secret <name>',
        'cluster mode without --cert/--key: the Secret where the webhook keeps its own certificate (default in a pod: sidecarset-webhook-certs)',
      ).env('SIDECARSET_CERT_SECRET'),
    )
    .addOption(
      new Option(
        '--webhook-configurations <list>',
        'mutating/NAME,validating/NAME,crd/NAME whose caBundle the self-managed certificate keeps (crd: the conversion webhook; default the two webhook configurations and the SidecarSet CRD)',
      )
        .env('SIDECARSET_WEBHOOK_CONFIGURATIONS')
        .argParser(parseWebhookConfigurations),
    )
    .addOption(
      new Option(
        '--cert-dns-names <list>',
        'DNS names of the self-managed certificate (default: the Service sidecarset-webhook)',
      )
        .env('SIDECARSET_CERT_DNS_NAMES')
        .argParser(parseList),
    )
    .addOption(
      new Option('--cert-ip-addresses <list>', 'IP addresses of the self-managed certificate')
        .env('SIDECARSET_CERT_IP_ADDRESSES')
        .argParser(parseIpAddresses),
    )
    .addOption(
      new Option('--controller [bool]', 'also run the upgrade controller (cluster mode)')
        .env('SIDECARSET_CONTROLLER')
        .argParser(parseBool)
        .default(true),
    )
    .addOption(
      new Option(
        '--read-timeout <seconds>',
        'time to receive a request (TLS handshake, headers, body); slower ones get 408',
      )
        .env('SIDECARSET_READ_TIMEOUT')
        .argParser(parsePositive)
        .default(DEFAULT_SERVER_LIMITS.readTimeoutSeconds),
    )
    .addOption(
      new Option(
        '--max-connections <n>',
        'open connections per port; at the cap the longest-idle keep-alive connection is closed to make room, else a new one is refused',
      )
        .env('SIDECARSET_MAX_CONNECTIONS')
        .argParser(parsePositive)
        .default(DEFAULT_SERVER_LIMITS.maxConnections),
    )
    .addOption(maxCacheStalenessOption())
    .addOption(
      new Option(
        '--max-inflight-body-bytes <size>',
        'request-body bytes received at once (e.g. 32Mi); requests beyond get 503',
      )
        .env('SIDECARSET_MAX_INFLIGHT_BODY_BYTES')
        .argParser(parseByteSize)
        .default(DEFAULT_SERVER_LIMITS.maxInflightBodyBytes),
    )
    .addOption(jobSidecarsOption().env('SIDECARSET_JOB_SIDECARS'));
  addControllerOptions(serve).action(async (opts: ServeOptions & ControllerFlags) => {
    const { runServe } = await import('./serve.js');
    exitCode = await runServe({ ...opts, controllerOptions: opts }, io);
  });

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
    const { runController } = await import('./controller.js');
    exitCode = await runController(opts, io);
  });

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

/** Where a kubeconfig is looked for, in order (src/k8s/kubeconfig.ts). */
const KUBECONFIG_HELP = 'kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)';
const SIDECARSETS_HELP = 'SidecarSet manifests: a file, a directory, or - for stdin';

/** Of `serve` and `controller` alike (src/server/health-routes.ts). */
function maxCacheStalenessOption(): Option {
  return new Option(
    '--max-cache-staleness <seconds>',
    '/readyz answers 503 once a cluster cache has failed to list or watch for longer (0: never)',
  )
    .env('SIDECARSET_MAX_CACHE_STALENESS')
    .argParser(parseNonNegative)
    .default(DEFAULT_MAX_CACHE_STALENESS_SECONDS);
}

function addControllerOptions(command: Command): Command {
  const d = DEFAULT_CONTROLLER_FLAGS;
  return command
    .addOption(
      new Option(
        '--leader-elect [bool]',
        'reconcile only while holding the Lease (several replicas)',
      )
        .env('SIDECARSET_LEADER_ELECT')
        .argParser(parseBool)
        .default(d.leaderElect),
    )
    .addOption(
      new Option(
        '--leader-election-namespace <ns>',
        'namespace of the Lease and of the SidecarSet ControllerRevisions',
      )
        .env('SIDECARSET_LEADER_ELECTION_NAMESPACE')
        .default(d.leaderElectionNamespace),
    )
    .addOption(
      new Option('--lease-name <name>', 'name of the Lease')
        .env('SIDECARSET_LEASE_NAME')
        .default(d.leaseName),
    )
    .addOption(
      new Option('--workers <n>', 'SidecarSets reconciled in parallel')
        .env('SIDECARSET_WORKERS')
        .argParser(parsePositive)
        .default(d.workers),
    )
    .addOption(
      new Option(
        '--qps <n>',
        'pod upgrades per second (each upgrade or hot-upgrade flip of one pod)',
      )
        .env('SIDECARSET_QPS')
        .argParser(parsePositive)
        .default(d.qps),
    )
    .addOption(
      new Option('--burst <n>', 'pod upgrades allowed at once above --qps')
        .env('SIDECARSET_BURST')
        .argParser(parsePositive)
        .default(d.burst),
    )
    .addOption(
      new Option('--dry-run [bool]', 'plan and log upgrades, write nothing, send no events')
        .env('SIDECARSET_DRY_RUN')
        .argParser(parseBool)
        .default(d.dryRun),
    )
    .addOption(
      new Option(
        '--pod-events [bool]',
        'also send each upgraded pod its own events (default false: only the SidecarSet gets events, aggregated)',
      )
        .env('SIDECARSET_POD_EVENTS')
        .argParser(parseBool)
        .default(d.podEvents),
    )
    .addOption(
      new Option(
        '--scope-pod-webhook [bool]',
        'keep the pod webhook scoped to the pods a SidecarSet can match (false: remove the scope)',
      )
        .env('SIDECARSET_SCOPE_POD_WEBHOOK')
        .argParser(parseBool)
        .default(d.scopePodWebhook),
    )
    .addOption(
      new Option(
        '--pod-webhook-configuration <name>',
        'the MutatingWebhookConfiguration whose pod webhook is scoped',
      )
        .env('SIDECARSET_POD_WEBHOOK_CONFIGURATION')
        .default(d.podWebhookConfiguration),
    );
}

/** --kubeconfig and --context, as kubectl has them. */
function addClusterOptions(command: Command): Command {
  return command
    .option('--kubeconfig <file>', KUBECONFIG_HELP)
    .option('--context <name>', 'the kubeconfig context to use');
}

function addRevisionNamespace(command: Command): Command {
  return command.addOption(
    new Option(
      '--revision-namespace <ns>',
      'where the controller keeps the ControllerRevisions (its --leader-election-namespace)',
    ).default(DEFAULT_CONTROLLER_FLAGS.leaderElectionNamespace),
  );
}

function outputOption(): Option {
  return new Option('-o, --output <format>', 'output format')
    .choices(['table', 'json', 'yaml'])
    .default('table');
}

/** Shared by `serve` and `inject`, which shows what the webhook would do (docs/adr/0021-job-sidecars.md). */
function jobSidecarsOption(): Option {
  return new Option(
    '--job-sidecars <mode>',
    'sidecars with KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true in Never/OnFailure pods: native (init containers with restartPolicy Always, stopped when the pod is done; Kubernetes 1.29+) or container (spec.containers, as OpenKruise without its node daemon)',
  )
    .choices(JOB_SIDECAR_MODES)
    .default('native');
}

function parseNonNegative(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected an integer ≥ 0');
  return n;
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
