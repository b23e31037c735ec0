/** Flags that several commands share, defined once so that they read the same everywhere. */
import type { Command } from 'commander';
import { Option } from 'commander';

import { JOB_SIDECAR_MODES } from '../../core/inject/job-sidecars.js';
import { DEFAULT_MAX_CACHE_STALENESS_SECONDS } from '../../server/health-routes.js';
import { DEFAULT_CONTROLLER_FLAGS, parseBool, parseNonNegative, parsePositive } from '../flags.js';

/** Where a kubeconfig is looked for, in order (src/k8s/kubeconfig.ts). */
export const KUBECONFIG_HELP = 'kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)';
export const SIDECARSETS_HELP = 'SidecarSet manifests: a file, a directory, or - for stdin';

/** Of `serve` and `controller` alike (src/server/health-routes.ts). */
export function maxCacheStalenessOption(): Option {
  return new Option(
    '--max-cache-staleness <seconds>',
    '/readyz answers 503 once a cluster cache has failed to list or watch for longer (0: never)',
  )
    .env('SIDECARSET_MAX_CACHE_STALENESS')
    .argParser(parseNonNegative)
    .default(DEFAULT_MAX_CACHE_STALENESS_SECONDS);
}

/** The upgrade controller's flags, of `serve` and `controller` alike. */
export function addControllerOptions(command: Command): Command {
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
export function addClusterOptions(command: Command): Command {
  return command
    .option('--kubeconfig <file>', KUBECONFIG_HELP)
    .option('--context <name>', 'the kubeconfig context to use');
}

/** -o table, json or yaml: how a command that reads the cluster prints what it found. */
export function outputOption(): Option {
  return new Option('-o, --output <format>', 'output format')
    .choices(['table', 'json', 'yaml'])
    .default('table');
}

/** Shared by `serve` and `inject`, which shows what the webhook would do (docs/adr/0021-job-sidecars.md). */
export function jobSidecarsOption(): Option {
  return new Option(
    '--job-sidecars <mode>',
    'sidecars with KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true in Never/OnFailure pods: native (init containers with restartPolicy Always, stopped when the pod is done; Kubernetes 1.29+) or container (spec.containers, as OpenKruise without its node daemon)',
  )
    .choices(JOB_SIDECAR_MODES)
    .default('native');
}
