/**
 * `sidecarset check`: whether an installation works (like `linkerd check`, `istioctl
 * verify-install`). Objects in, one verdict per check out; src/cli/check.ts reads the objects. The
 * checks follow what an installation creates (manifests/base, charts/sidecarset,
 * src/k8s/certificates.ts): the CRD and its conversion webhook, the two webhook configurations with
 * their caBundle and Service, the Deployment, the controller's Lease, and the SidecarSets' status.
 * Webhooks that call a URL instead of the Service (a webhook run outside the cluster, as envtest and
 * docs/local-cluster.md do) are judged by their server's /readyz; when all of them do, the
 * Deployment serves none and its readiness does not count (docs/adr/0026-webhooks-served-at-a-url.md).
 */
import { X509Certificate } from 'node:crypto';

import { ROLLOUT_PAUSED } from '../api/sidecarset-types.js';
import { INSTALLATION } from '../api/installation-names.js';
import type { SidecarSet } from '../api/sidecarset-types.js';
import { revisionHistoryFailure } from '../status/revision-failure-condition.js';

type CheckState = 'ok' | 'warning' | 'failed';

export interface InstallationCheck {
  name: string;
  state: CheckState;
  message: string;
  /** For a failure or a warning: what to do, or where to read on. */
  fix?: string;
}

/** An object that could not be read, with the API server's reason (a 403, a timeout). */
export interface Unreadable {
  unreadable: string;
}

/** What a read gave: the object, undefined when it does not exist, or why it could not be read. */
export type Read<T> = T | undefined | Unreadable;

interface ServiceReference {
  namespace?: string;
  name?: string;
}

interface ClientConfig {
  caBundle?: string;
  service?: ServiceReference;
  url?: string;
}

interface Webhook {
  name: string;
  clientConfig?: ClientConfig;
  failurePolicy?: string;
}

export interface WebhookConfiguration {
  webhooks?: Webhook[];
}

export interface Crd {
  spec?: {
    versions?: { name: string; served?: boolean; storage?: boolean }[];
    conversion?: { strategy?: string; webhook?: { clientConfig?: ClientConfig } };
  };
  status?: { conditions?: { type: string; status: string; message?: string }[] };
}

export interface Deployment {
  spec?: {
    replicas?: number;
    template?: { spec?: { containers?: { env?: { name: string; value?: string }[] }[] } };
  };
  status?: { readyReplicas?: number };
}

/** How the Deployment runs the controller: its SIDECARSET_* environment (docs/deploy.md). */
export interface ControllerSetup {
  controller: boolean;
  leaderElect: boolean;
  leaseName: string;
}

export interface Lease {
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string };
}

/** A Service with what says which of its pods take requests. */
export interface ServiceEndpoints {
  /** discovery.k8s.io/v1 EndpointSlices labelled with the Service's name. */
  endpointSlices: { endpoints?: { conditions?: { ready?: boolean } }[] }[];
  /** v1 Endpoints, read where a cluster has no EndpointSlices for the Service. */
  endpoints?: { subsets?: { addresses?: unknown[] }[] };
}

/** What GET <server>/readyz answered, the webhook's caBundle the CA trusted; or why nothing did. */
export type ReadyzAnswer = { status: number } | { error: string };

/** The server behind a webhook URL, probed once for all the webhooks that share it. */
export interface UrlServer {
  /** The key of its answer in InstallationState.urlServers. */
  key: string;
  /** scheme://host:port of the URL: its /readyz is probed. */
  origin: string;
  caBundle?: string;
}

type WebhookConfigurationKind = 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';

export interface InstallationState {
  crd: Read<Crd>;
  webhookConfigurations: {
    kind: WebhookConfigurationKind;
    name: string;
    object: Read<WebhookConfiguration>;
  }[];
  /** Every Service the webhooks name, by serviceKey (undefined: the Service does not exist). */
  services: ReadonlyMap<string, Read<ServiceEndpoints>>;
  /** What the server of every webhook URL answered, by UrlServer.key (see urlServers). */
  urlServers: ReadonlyMap<string, ReadyzAnswer>;
  deployment: { namespace: string; name: string; object: Read<Deployment> };
  lease: { namespace: string; name: string; object: Read<Lease> };
  sidecarSets: SidecarSet[] | Unreadable;
}

/** A caBundle closer than this to its expiry is a warning. */
const CA_EXPIRY_WARNING_MS = 7 * 24 * 60 * 60 * 1000;

const TROUBLESHOOTING = 'docs/troubleshooting.md';
const FIX = {
  install: 'install it: kubectl apply -k manifests, or the Helm chart (docs/deploy.md)',
  certificate: `see "Certificate problems" in ${TROUBLESHOOTING}`,
  webhookDown: `see "The webhook is down" in ${TROUBLESHOOTING}`,
  rollout: `see "A rollout does not move" in ${TROUBLESHOOTING}`,
  injection: `see "A sidecar is not injected" in ${TROUBLESHOOTING}`,
  urlDown:
    'the webhooks run outside the cluster: start the process that serves them (docs/local-cluster.md); this command probes from where it runs, the API server calls from its own network',
  revisions:
    'create the namespace of --leader-election-namespace, or grant the controller get, create, patch and delete of controllerrevisions there (manifests/base/rbac/revisions-role.yaml)',
  failOpen:
    'intended by default (docs/adr/0004-webhook-failure-policy.md); manifests/components/pod-webhook-fail makes it fail closed',
} as const;

export function checkInstallation(state: InstallationState, now: Date): InstallationCheck[] {
  const webhookChecks = state.webhookConfigurations.flatMap((config) =>
    checkWebhookConfiguration(config, state, now),
  );
  return [
    ...checkCrd(state.crd, state, now),
    ...webhookChecks,
    checkDeployment(state.deployment, urlOnly(state)),
    checkLease(state.lease, state.deployment.object, now),
    ...checkSidecarSets(state.sidecarSets),
  ];
}

/** True when no check failed (warnings allowed): the exit code of `sidecarset check`. */
export function passed(checks: readonly InstallationCheck[]): boolean {
  return checks.every((c) => c.state !== 'failed');
}

/** The Services the CRD's conversion webhook and the admission webhooks call. */
export function referencedServices(
  crd: Read<Crd>,
  configurations: readonly Read<WebhookConfiguration>[],
): ServiceReference[] {
  const byKey = new Map<string, ServiceReference>();
  for (const service of clientConfigs(crd, configurations).map((c) => c?.service)) {
    if (service !== undefined && !byKey.has(serviceKey(service))) {
      byKey.set(serviceKey(service), service);
    }
  }
  return [...byKey.values()];
}

/** The servers the webhook URLs name (a Service taking precedence), each once per caBundle. */
export function urlServers(
  crd: Read<Crd>,
  configurations: readonly Read<WebhookConfiguration>[],
): UrlServer[] {
  const byKey = new Map<string, UrlServer>();
  for (const config of clientConfigs(crd, configurations)) {
    const server = config?.service === undefined ? urlServer(config) : undefined;
    if (server !== undefined && !byKey.has(server.key)) byKey.set(server.key, server);
  }
  return [...byKey.values()];
}

/** The clientConfig of the CRD's conversion webhook and of every admission webhook read. */
function clientConfigs(
  crd: Read<Crd>,
  configurations: readonly Read<WebhookConfiguration>[],
): (ClientConfig | undefined)[] {
  return [
    readable(crd)?.spec?.conversion?.webhook?.clientConfig,
    ...configurations.flatMap((c) => (readable(c)?.webhooks ?? []).map((w) => w.clientConfig)),
  ];
}

function urlServer(config: ClientConfig | undefined): UrlServer | undefined {
  if (config?.url === undefined) return undefined;
  let origin: string;
  try {
    origin = new URL(config.url).origin;
  } catch {
    return undefined;
  }
  const caBundle = config.caBundle ?? '';
  return { key: `${origin} ${caBundle}`, origin, ...(caBundle === '' ? {} : { caBundle }) };
}

/**
 * The origins of the webhook URLs when every webhook, the CRD's conversion webhook included, calls
 * a URL and none the Service: the in-cluster Deployment serves none of them then. Undefined when
 * one calls a Service, or an object could not be read (a mix keeps the Deployment's rules).
 */
function urlOnly(state: InstallationState): string[] | undefined {
  const configurations = state.webhookConfigurations.map((c) => readable(c.object));
  const conversion = readable(state.crd)?.spec?.conversion?.webhook?.clientConfig;
  if (conversion === undefined || configurations.some((c) => (c?.webhooks ?? []).length === 0)) {
    return undefined;
  }
  const origins = clientConfigs(state.crd, configurations).map((c) =>
    c?.service === undefined ? urlServer(c)?.origin : undefined,
  );
  return origins.every((o) => o !== undefined) ? [...new Set(origins)] : undefined;
}

export function serviceKey(service: ServiceReference): string {
  return `${service.namespace ?? ''}/${service.name ?? ''}`;
}

/**
 * A SidecarSet whose spec the controller has not looked at yet. A moment after an update that is
 * normal; the command reads again after a short wait before it warns.
 */
export function behind(ss: SidecarSet): boolean {
  const generation = ss.metadata.generation;
  return generation !== undefined && (ss.status?.observedGeneration ?? 0) < generation;
}

function checkCrd(read: Read<Crd>, state: InstallationState, now: Date): InstallationCheck[] {
  const name = 'CustomResourceDefinition sidecarsets.apps.kruise.io';
  const crd = readable(read);
  if (crd === undefined) return [missing(name, read, FIX.install)];
  const established = crd.status?.conditions?.find((c) => c.type === 'Established');
  const versions = crd.spec?.versions ?? [];
  const served = (v: string) => versions.some((x) => x.name === v && x.served === true);
  const stored = versions.find((x) => x.storage === true)?.name;
  const problems = [
    ...(established?.status === 'True'
      ? []
      : [`not Established${established?.message ? `: ${established.message}` : ''}`]),
    ...(served('v1beta1') ? [] : ['does not serve v1beta1']),
    ...(served('v1alpha1') ? [] : ['does not serve v1alpha1']),
    ...(stored === 'v1beta1' ? [] : [`stores ${stored ?? 'no version'}, not v1beta1`]),
  ];
  const main =
    problems.length === 0
      ? ok(name, 'Established; serves v1beta1 (stored) and v1alpha1')
      : failed(name, problems.join('; '), `apply the CRD of this release again (${FIX.install})`);
  const conversion = crd.spec?.conversion;
  const webhookName = 'CRD conversion webhook';
  if (conversion?.strategy !== 'Webhook' || conversion.webhook?.clientConfig === undefined) {
    return [
      main,
      failed(
        webhookName,
        `conversion strategy is ${conversion?.strategy ?? 'None'}: v1alpha1 SidecarSets are not converted`,
        `apply the CRD of this release again (${FIX.install})`,
      ),
    ];
  }
  const clientConfig = conversion.webhook.clientConfig;
  return [
    main,
    checkCaBundle(`${webhookName}: caBundle`, clientConfig.caBundle, now),
    checkService(`${webhookName}: service`, clientConfig, state),
  ];
}

function checkWebhookConfiguration(
  config: InstallationState['webhookConfigurations'][number],
  state: InstallationState,
  now: Date,
): InstallationCheck[] {
  const name = `${config.kind} ${config.name}`;
  const found = readable(config.object);
  if (found === undefined) return [missing(name, config.object, FIX.install)];
  const webhooks = found.webhooks ?? [];
  if (webhooks.length === 0) return [failed(name, 'has no webhooks', FIX.install)];
  return webhooks.flatMap((webhook) => {
    const prefix = `webhook ${webhook.name}`;
    const clientConfig = webhook.clientConfig ?? {};
    return [
      checkCaBundle(`${prefix}: caBundle`, clientConfig.caBundle, now),
      checkService(`${prefix}: service`, clientConfig, state),
      webhook.failurePolicy === 'Ignore'
        ? warning(
            `${prefix}: failurePolicy`,
            'Ignore: while the webhook is unreachable, pods are created without their sidecars',
            FIX.failOpen,
          )
        : ok(`${prefix}: failurePolicy`, webhook.failurePolicy ?? 'Fail'),
    ];
  });
}

function checkCaBundle(name: string, caBundle: string | undefined, now: Date): InstallationCheck {
  if (caBundle === undefined || caBundle === '') {
    return failed(
      name,
      'empty: the API server cannot verify the webhook, every call fails',
      `the webhook writes it within seconds of starting (self-managed certificate); ${FIX.certificate}`,
    );
  }
  const pem = Buffer.from(caBundle, 'base64').toString('utf8');
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) {
    return failed(
      name,
      'not a PEM certificate (the placeholder of manifests/base?)',
      FIX.certificate,
    );
  }
  let certificates: X509Certificate[];
  try {
    certificates = blocks.map((block) => new X509Certificate(block));
  } catch (err) {
    return failed(name, `cannot be parsed: ${messageOf(err)}`, FIX.certificate);
  }
  const first = certificates.reduce((a, b) =>
    Date.parse(b.validTo) < Date.parse(a.validTo) ? b : a,
  );
  const notAfter = new Date(first.validTo);
  const subject = first.subject.replace(/\n/g, ', ');
  const left = notAfter.getTime() - now.getTime();
  if (certificates.some((c) => Date.parse(c.validFrom) > now.getTime())) {
    return failed(name, `${subject} is not valid yet`, FIX.certificate);
  }
  if (left <= 0) {
    return failed(name, `${subject} expired at ${notAfter.toISOString()}`, FIX.certificate);
  }
  if (left < CA_EXPIRY_WARNING_MS) {
    return warning(name, `${subject} expires at ${notAfter.toISOString()}`, FIX.certificate);
  }
  return ok(name, `${subject}, valid until ${notAfter.toISOString()}`);
}

function checkService(
  name: string,
  clientConfig: ClientConfig,
  state: InstallationState,
): InstallationCheck {
  if (clientConfig.service === undefined) {
    return clientConfig.url === undefined
      ? failed(name, 'names neither a Service nor a URL', FIX.install)
      : checkUrl(name, clientConfig.url, urlServer(clientConfig), state.urlServers);
  }
  const key = serviceKey(clientConfig.service);
  const read = state.services.get(key);
  const service = readable(read);
  if (service === undefined) return missing(`${name} ${key}`, read, FIX.webhookDown);
  const ready = readyEndpoints(service);
  return ready === 0
    ? failed(name, `${key} has no ready endpoints: no webhook replica is ready`, FIX.webhookDown)
    : ok(name, `${key} has ${ready} ready endpoint${ready === 1 ? '' : 's'}`);
}

/** A webhook outside the cluster: ready when its server's /readyz answers 200 over the caBundle. */
function checkUrl(
  name: string,
  url: string,
  server: UrlServer | undefined,
  answers: InstallationState['urlServers'],
): InstallationCheck {
  const calls = `calls ${url}`;
  if (server === undefined) return failed(name, `${calls}: not a valid URL`, FIX.install);
  const answer = answers.get(server.key);
  if (answer === undefined) {
    return warning(name, `${calls}; ${server.origin}/readyz not probed`, FIX.urlDown);
  }
  if ('error' in answer) {
    return failed(
      name,
      `${calls}; ${server.origin}/readyz unreachable from here: ${answer.error}`,
      FIX.urlDown,
    );
  }
  return answer.status === 200
    ? ok(name, `${calls}; ${server.origin}/readyz answers 200 (outside the cluster)`)
    : failed(
        name,
        `${calls}; ${server.origin}/readyz answers ${answer.status}: not ready`,
        FIX.webhookDown,
      );
}

/** Ready addresses of the EndpointSlices, else of the Endpoints. */
export function readyEndpoints(service: ServiceEndpoints): number {
  if (service.endpointSlices.length > 0) {
    return service.endpointSlices
      .flatMap((s) => s.endpoints ?? [])
      .filter((e) => e.conditions?.ready !== false).length;
  }
  return (service.endpoints?.subsets ?? []).reduce((n, s) => n + (s.addresses?.length ?? 0), 0);
}

/** `urlOnly`: the servers of the webhook URLs when no webhook calls the Service (see urlOnly). */
function checkDeployment(
  deployment: InstallationState['deployment'],
  urlOnly: string[] | undefined,
): InstallationCheck {
  const name = `Deployment ${deployment.namespace}/${deployment.name}`;
  const found = readable(deployment.object);
  if (found === undefined) return missing(name, deployment.object, FIX.install);
  const desired = found.spec?.replicas ?? 1;
  const ready = found.status?.readyReplicas ?? 0;
  const counted = `${ready}/${desired} replicas ready`;
  if (urlOnly !== undefined) {
    return ok(name, `${counted}, not in use: every webhook calls ${urlOnly.join(', ')}`);
  }
  if (ready === 0) return failed(name, counted, FIX.webhookDown);
  if (ready < desired) return warning(name, counted, FIX.webhookDown);
  return ok(name, counted);
}

/**
 * The controller's settings from the Deployment's environment, as `serve` reads them: the
 * controller runs unless SIDECARSET_CONTROLLER is false, elects a leader only when
 * SIDECARSET_LEADER_ELECT is true (manifests/ and the chart set it). Without a readable Deployment,
 * the settings of the manifests.
 */
export function controllerSetup(deployment: Read<Deployment>): ControllerSetup {
  const found = readable(deployment);
  const defaults = { controller: true, leaderElect: true, leaseName: INSTALLATION.lease };
  if (found === undefined) return defaults;
  const env = new Map(
    (found.spec?.template?.spec?.containers ?? [])
      .flatMap((c) => c.env ?? [])
      .map((e) => [e.name, e.value] as const),
  );
  const bool = (value: string | undefined) => value === 'true' || value === '1';
  const controller = env.get('SIDECARSET_CONTROLLER');
  return {
    controller: controller === undefined || bool(controller),
    leaderElect: bool(env.get('SIDECARSET_LEADER_ELECT')),
    leaseName: env.get('SIDECARSET_LEASE_NAME') ?? defaults.leaseName,
  };
}

function checkLease(
  lease: InstallationState['lease'],
  deployment: Read<Deployment>,
  now: Date,
): InstallationCheck {
  const name = `Lease ${lease.namespace}/${lease.name}`;
  const setup = controllerSetup(deployment);
  if (!setup.controller) {
    return ok(name, 'not used: the Deployment runs no controller (SIDECARSET_CONTROLLER false)');
  }
  if (!setup.leaderElect) {
    const replicas = readable(deployment)?.spec?.replicas ?? 1;
    return replicas > 1
      ? warning(
          name,
          `not used: leader election is off (SIDECARSET_LEADER_ELECT) and ${replicas} replicas all reconcile`,
          'set SIDECARSET_LEADER_ELECT to true (Helm: controller.leaderElection.enabled)',
        )
      : ok(name, 'not used: leader election is off, one replica reconciles');
  }
  const found = readable(lease.object);
  const noLeader = `no controller reconciles SidecarSets; ${FIX.rollout}`;
  if (found === undefined) {
    return missing(name, lease.object, `the controller takes it once it runs; ${noLeader}`);
  }
  const holder = found.spec?.holderIdentity ?? '';
  if (holder === '') return failed(name, 'has no holder', noLeader);
  const renewed = Date.parse(found.spec?.renewTime ?? '');
  const duration = found.spec?.leaseDurationSeconds ?? 0;
  if (Number.isNaN(renewed)) return failed(name, `held by ${holder}, never renewed`, noLeader);
  const ago = Math.round((now.getTime() - renewed) / 1000);
  if (ago > duration) {
    return failed(
      name,
      `held by ${holder}, last renewed ${ago}s ago, beyond its leaseDurationSeconds (${duration}; by this machine's clock)`,
      noLeader,
    );
  }
  return ok(name, `held by ${holder}, renewed ${Math.max(ago, 0)}s ago`);
}

function checkSidecarSets(sidecarSets: SidecarSet[] | Unreadable): InstallationCheck[] {
  const name = 'SidecarSets';
  if (isUnreadable(sidecarSets)) {
    return [failed(name, `cannot be listed: ${sidecarSets.unreadable}`, FIX.install)];
  }
  const count = ok(name, `${sidecarSets.length} in the cluster`);
  return [count, ...sidecarSets.flatMap(checkSidecarSet)];
}

function checkSidecarSet(ss: SidecarSet): InstallationCheck[] {
  const name = `SidecarSet ${ss.metadata.name ?? ''}`;
  const paused = ss.status?.conditions?.find(
    (c) => c.type === ROLLOUT_PAUSED && c.status === 'True',
  );
  const missed = ss.status?.missedPods ?? 0;
  const revisions = revisionHistoryFailure(ss.status?.conditions);
  return [
    ...(revisions === undefined ? [] : [warning(name, revisions, FIX.revisions)]),
    ...(paused === undefined
      ? []
      : [
          warning(
            name,
            `rollout paused (${paused.reason ?? ROLLOUT_PAUSED}${paused.message ? `: ${paused.message}` : ''})`,
            FIX.rollout,
          ),
        ]),
    ...(missed > 0
      ? [
          warning(
            name,
            `${missed} pod${missed === 1 ? '' : 's'} created without its sidecars (status.missedPods)`,
            FIX.injection,
          ),
        ]
      : []),
    ...(behind(ss)
      ? [
          warning(
            name,
            `the controller has not observed generation ${ss.metadata.generation ?? 0} (status.observedGeneration ${ss.status?.observedGeneration ?? 0})`,
            FIX.rollout,
          ),
        ]
      : []),
  ];
}

function missing<T>(name: string, read: Read<T>, fix: string): InstallationCheck {
  return isUnreadable(read)
    ? failed(name, `cannot be read: ${read.unreadable}`, fix)
    : failed(name, 'not found', fix);
}

function readable<T>(read: Read<T>): T | undefined {
  return read === undefined || isUnreadable(read) ? undefined : read;
}

export function isUnreadable(value: unknown): value is Unreadable {
  return typeof value === 'object' && value !== null && 'unreadable' in value;
}

function ok(name: string, message: string): InstallationCheck {
  return { name, state: 'ok', message };
}

function warning(name: string, message: string, fix: string): InstallationCheck {
  return { name, state: 'warning', message, fix };
}

function failed(name: string, message: string, fix: string): InstallationCheck {
  return { name, state: 'failed', message, fix };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
