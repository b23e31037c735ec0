/** `sidecarset serve`: the admission webhook, and the controller with it (../serve.ts). */
import { Option } from 'commander';

import { DEFAULT_SERVER_LIMITS } from '../../server/http-server.js';
import type { ControllerFlags } from '../flags.js';
import {
  parseBool,
  parseByteSize,
  parseAllowListFlag,
  parseIpAddresses,
  parseList,
  parsePort,
  parsePositive,
  parseWebhookConfigurations,
} from '../flags.js';
import type { ServeOptions } from '../serve.js';
import type { RegisterCommand } from './context.js';
import {
  addControllerOptions,
  jobSidecarsOption,
  KUBECONFIG_HELP,
  maxCacheStalenessOption,
} from './options.js';

export const register: RegisterCommand = (program, { io, setExitCode }) => {
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
        'DNS names of the self-managed certificate (default: the Services sidecarset-webhook and sidecarset-conversion)',
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
    .addOption(jobSidecarsOption().env('SIDECARSET_JOB_SIDECARS'))
    .addOption(
      new Option(
        '--patch-pod-metadata-allowlist <json>',
        'the pod annotations SidecarSets may write with patchPodMetadata, as OpenKruise\'s SidecarSet_PatchPodMetadata_WhiteList: {"rules":[{"selector":…,"allowedAnnotationKeyExprs":["regexp"]}]}; without it, none (docs/security.md)',
      )
        .env('SIDECARSET_PATCH_POD_METADATA_ALLOWLIST')
        .argParser(parseAllowListFlag),
    );
  addControllerOptions(serve).action(async (opts: ServeOptions & ControllerFlags) => {
    const { runServe } = await import('../serve.js');
    setExitCode(await runServe({ ...opts, controllerOptions: opts }, io));
  });
};
