/**
 * `sidecarset check --pre`: before moving a cluster's SidecarSets from OpenKruise
 * (docs/migrating-from-openkruise.md), what will not carry over. A pure function of what the CLI
 * read: the SidecarSets, the names of the admission webhook configurations, and OpenKruise's
 * manager Deployment and `kruise-configuration` ConfigMap when they are there. Verdicts use the
 * shape of `sidecarset check`'s (installation-check.ts): failed blocks the move, warning changes
 * behaviour.
 */
import { SIDECARSET_CUSTOM_VERSION_LABEL } from '../api/annotations.js';
import type { SidecarSet } from '../api/sidecarset-types.js';
import type { InstallationCheck } from './installation-check.js';

export interface KruiseManager {
  /** The manager containers' args and env, all containers together. */
  args: readonly string[];
  env: readonly { name: string; value?: string }[];
}

export interface MigrationInput {
  sidecarSets: readonly SidecarSet[];
  /** Every MutatingWebhookConfiguration and ValidatingWebhookConfiguration in the cluster. */
  webhookConfigurations: readonly { kind: string; name: string }[];
  /** kruise-system/kruise-controller-manager, if it exists. */
  kruiseManager?: KruiseManager;
  /** data of kruise-system/kruise-configuration, if it exists. */
  kruiseConfiguration?: Readonly<Record<string, string>>;
}

const GUIDE = 'docs/migrating-from-openkruise.md';
/** OpenKruise's webhook configurations (kruise-mutating-webhook-configuration, ...). */
const KRUISE_WEBHOOK = /^kruise-.*webhook-configuration$/;
/** The manager's environment that is plumbing, not behaviour. */
const PLUMBING_ENV = new Set([
  'KUBE_CACHE_MUTATION_DETECTOR',
  'POD_NAMESPACE',
  'POD_NAME',
  'WEBHOOK_PORT',
]);
const PATCH_WHITELIST_KEY = 'SidecarSet_PatchPodMetadata_WhiteList';

const ok = (name: string, message: string): InstallationCheck => ({ name, state: 'ok', message });

export function preflightMigration(input: MigrationInput): InstallationCheck[] {
  return [
    kruiseWebhooks(input.webhookConfigurations),
    ...perSidecarSet(input.sidecarSets),
    ...managerSettings(input.kruiseManager, input.kruiseConfiguration),
  ];
}

function kruiseWebhooks(
  configurations: MigrationInput['webhookConfigurations'],
): InstallationCheck {
  const name = "OpenKruise's webhooks";
  const found = configurations.filter((c) => KRUISE_WEBHOOK.test(c.name));
  if (found.length === 0) return ok(name, 'none installed');
  return {
    name,
    state: 'failed',
    message: `still installed: ${found.map((c) => `${c.kind} ${c.name}`).join(', ')}; two webhooks would inject the same sidecars`,
    fix: `delete them before installing this project (${GUIDE}, step 2)`,
  };
}

function perSidecarSet(sidecarSets: readonly SidecarSet[]): InstallationCheck[] {
  const both: string[] = [];
  const pinned: string[] = [];
  const patches: string[] = [];
  const customVersionLabel: string[] = [];
  for (const ss of sidecarSets) {
    const name = ss.metadata.name ?? '';
    const { spec } = ss;
    if ((spec.namespace ?? '') !== '' && spec.namespaceSelector !== undefined) both.push(name);
    const revision = spec.injectionStrategy?.revision;
    if (
      revision !== undefined &&
      ((revision.customVersion ?? '') !== '' || (revision.revisionName ?? '') !== '')
    )
      pinned.push(name);
    if ((spec.patchPodMetadata ?? []).length > 0) patches.push(name);
    if (ss.metadata.labels?.[SIDECARSET_CUSTOM_VERSION_LABEL] !== undefined)
      customVersionLabel.push(name);
  }
  const list = (names: string[]): string => names.sort().join(', ');
  return [
    both.length === 0
      ? ok('namespace and namespaceSelector', 'no SidecarSet sets both')
      : {
          name: 'namespace and namespaceSelector',
          state: 'failed',
          message: `set together in ${list(both)}: OpenKruise lets namespace win, this project refuses the SidecarSet on its next change`,
          fix: 'keep one of the two (docs/adr/0001-injection-differences-from-openkruise.md)',
        },
    pinned.length === 0
      ? ok('pinned revisions', 'no SidecarSet pins an injection revision')
      : {
          name: 'pinned revisions',
          state: 'failed',
          message: `spec.injectionStrategy.revision in ${list(pinned)}: OpenKruise's revisions stay in kruise-system, so injection would fail (SI_ERR_REVISION_NOT_FOUND)`,
          fix: `remove spec.injectionStrategy.revision before the move (${GUIDE}, "Pinned revisions")`,
        },
    patches.length === 0
      ? ok('patchPodMetadata', 'no SidecarSet patches pod metadata')
      : {
          name: 'patchPodMetadata',
          state: 'warning',
          message: `used by ${list(patches)}: the webhook refuses them on their next change unless its allow-list lets them write their keys`,
          fix: "give the webhook OpenKruise's whitelist: --patch-pod-metadata-allowlist, Helm webhook.patchPodMetadataAllowList (docs/security.md)",
        },
    customVersionLabel.length === 0
      ? ok('custom version label', `no SidecarSet carries ${SIDECARSET_CUSTOM_VERSION_LABEL}`)
      : {
          name: 'custom version label',
          state: 'warning',
          message: `${list(customVersionLabel)} carry ${SIDECARSET_CUSTOM_VERSION_LABEL}, which this project refuses in v1beta1`,
          fix: 'write spec.customVersion (v1beta1) instead (docs/adr/0015-sidecarset-v1beta1.md)',
        },
  ];
}

function managerSettings(
  manager: KruiseManager | undefined,
  configuration: MigrationInput['kruiseConfiguration'],
): InstallationCheck[] {
  const checks: InstallationCheck[] = [];
  if (manager !== undefined) {
    const gates = manager.args.filter((a) => a.startsWith('--feature-gates'));
    const env = manager.env.filter((e) => !PLUMBING_ENV.has(e.name));
    checks.push(
      gates.length + env.length === 0
        ? ok("OpenKruise manager's settings", 'no feature gates or environment to carry over')
        : {
            name: "OpenKruise manager's settings",
            state: 'warning',
            message: `will not carry over: ${[...gates, ...env.map((e) => `${e.name}=${e.value ?? ''}`)].join(', ')}; this project has no feature gates and behaves as ${GUIDE} describes`,
            fix: `compare them with ${GUIDE}, "Before you start"`,
          },
    );
  }
  const whitelist = configuration?.[PATCH_WHITELIST_KEY];
  if (whitelist !== undefined)
    checks.push({
      name: 'patchPodMetadata whitelist',
      state: 'warning',
      message: `kruise-configuration's ${PATCH_WHITELIST_KEY} does not carry over by itself: without it, no annotation may be patched`,
      fix: 'pass its value to the webhook: --patch-pod-metadata-allowlist, Helm webhook.patchPodMetadataAllowList (docs/security.md)',
    });
  return checks;
}
