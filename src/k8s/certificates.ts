/**
 * Self-managed webhook certificates in a cluster, as OpenKruise's webhook controller keeps them
 * (pkg/webhook/util/controller/webhook_controller.go, sync; pkg/webhook/util/writer/secret.go):
 * the CA and serving certificate live in one Secret of the webhook's namespace, every replica
 * reads it, the first to find it missing creates it (AlreadyExists → read the winner's), the
 * first to find it expiring replaces it with a resourceVersion precondition (Conflict → read the
 * winner's), and each replica writes the CA into the caBundle of the webhook configurations when it
 * differs. The decisions are in src/server/cert-plan.ts.
 *
 * Where OpenKruise reacts to informer events, this polls every `resyncMs` with plain GETs: three
 * requests per replica and period, and RBAC of get/create/update on one Secret and get/patch on
 * the named configurations (docs/adr/0011-self-managed-certificates.md).
 */
import type { KubeConfig, V1Secret } from '@kubernetes/client-node';
import {
  AdmissionregistrationV1Api,
  ApiException,
  ApiextensionsV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';

import type {
  CertificateBundle,
  CertificatePolicy,
  ConversionHolder,
  WebhookEntry,
} from '../server/cert-plan.js';
import {
  caBundleOf,
  caBundlePatch,
  conversionCaBundlePatch,
  issueBundle,
  judgeSecretData,
  secretData,
} from '../server/cert-plan.js';
import { checkTlsPair } from '../server/tls.js';
import type { WebhookConfigurationRef } from './webhook-configuration-ref.js';
import type { TlsPair } from '../server/tls.js';

export interface CertificateManagerOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  secretName: string;
  webhookConfigurations: readonly WebhookConfigurationRef[];
  policy: CertificatePolicy;
  logger: Logger;
  /** Called with the serving pair each time it differs from the last one handed out. */
  onCertificate?: (pair: TlsPair) => void;
  now?: () => Date;
  /** How often the Secret and the caBundles are checked; default 5 s. */
  resyncMs?: number;
}

export interface CertificateManager {
  /** One pass: the Secret made or reused or renewed, the caBundles corrected. The serving pair. */
  ensure(): Promise<TlsPair>;
  /** ensure() every resyncMs until stop(); failures are logged and retried on the next pass. */
  start(): void;
  stop(): Promise<void>;
}

/** Conflicts in a row before a pass gives up (each means another replica wrote in between). */
const MAX_ATTEMPTS = 5;

export function createCertificateManager(options: CertificateManagerOptions): CertificateManager {
  const core = options.kubeConfig.makeApiClient(CoreV1Api);
  const admission = options.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const extensions = options.kubeConfig.makeApiClient(ApiextensionsV1Api);
  const now = options.now ?? (() => new Date());
  const { namespace, secretName: name, logger } = options;
  let lastFingerprint = '';
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const missingConfigs = new Set<string>();

  async function readSecret(): Promise<V1Secret | undefined> {
    try {
      return await core.readNamespacedSecret({ name, namespace });
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  /** The bundle in the Secret, after making or replacing it if needed. */
  async function settleSecret(): Promise<CertificateBundle> {
    for (let attempt = 1; ; attempt++) {
      const secret = await readSecret();
      const verdict = judgeSecretData(secret?.data, options.policy, now());
      if (verdict.use) return verdict.bundle;
      const bundle = await issueBundle(options.policy, now(), verdict.ca);
      try {
        if (secret === undefined) {
          await core.createNamespacedSecret({
            namespace,
            body: newSecret(namespace, name, bundle),
          });
        } else {
          // The resourceVersion read is the precondition: of replicas renewing at once, one wins.
          await core.replaceNamespacedSecret({
            name,
            namespace,
            body: { ...secret, data: { ...secret.data, ...secretData(bundle) } },
          });
        }
        logger.info(
          {
            secret: `${namespace}/${name}`,
            reason: verdict.reason,
            newCa: verdict.ca === undefined,
          },
          secret === undefined ? 'webhook certificate created' : 'webhook certificate replaced',
        );
        return bundle;
      } catch (err) {
        if (statusOf(err) !== 409 || attempt >= MAX_ATTEMPTS) throw err;
        logger.debug(
          { secret: `${namespace}/${name}` },
          'another replica wrote the certificate first',
        );
      }
    }
  }

  async function patchCaBundles(caBundle: string): Promise<void> {
    for (const ref of options.webhookConfigurations) {
      const key = `${ref.kind}/${ref.name}`;
      const config = await readConfiguration(ref);
      if (config === undefined) {
        if (!missingConfigs.has(key))
          logger.warn({ configuration: key }, 'webhook configuration not found');
        missingConfigs.add(key);
        continue;
      }
      missingConfigs.delete(key);
      const body =
        'spec' in config
          ? conversionCaBundlePatch(config, caBundle)
          : caBundlePatch(config.webhooks ?? [], caBundle);
      if (body.length === 0) continue;
      const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
      if (ref.kind === 'mutating') {
        await admission.patchMutatingWebhookConfiguration({ name: ref.name, body }, jsonPatch);
      } else if (ref.kind === 'validating') {
        await admission.patchValidatingWebhookConfiguration({ name: ref.name, body }, jsonPatch);
      } else {
        await extensions.patchCustomResourceDefinition({ name: ref.name, body }, jsonPatch);
      }
      logger.info({ configuration: key }, 'caBundle written');
    }
  }

  async function readConfiguration(
    ref: WebhookConfigurationRef,
  ): Promise<{ webhooks?: WebhookEntry[] } | Required<Pick<ConversionHolder, 'spec'>> | undefined> {
    try {
      if (ref.kind === 'crd') return await extensions.readCustomResourceDefinition(ref);
      return ref.kind === 'mutating'
        ? await admission.readMutatingWebhookConfiguration({ name: ref.name })
        : await admission.readValidatingWebhookConfiguration({ name: ref.name });
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  async function ensure(): Promise<TlsPair> {
    const bundle = await settleSecret();
    const pair = checkTlsPair(bundle.cert, bundle.key);
    // A renewal keeps the CA, so the caBundle stays right. Only a new CA (no Secret, a bad one,
    // or a CA itself expiring: every 10 years) leaves a few seconds in which a replica and the
    // caBundle disagree.
    const fingerprint = bundle.cert + bundle.key;
    if (fingerprint !== lastFingerprint) {
      lastFingerprint = fingerprint;
      options.onCertificate?.(pair);
    }
    await patchCaBundles(caBundleOf(bundle));
    return pair;
  }

  const resyncMs = options.resyncMs ?? 5000;
  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = ensure()
        .catch((err: unknown) => {
          logger.error({ err }, 'cannot ensure the webhook certificate; retrying');
        })
        .finally(schedule);
    }, resyncMs);
    timer.unref();
  }

  return {
    ensure,
    start: schedule,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

function newSecret(namespace: string, name: string, bundle: CertificateBundle): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace,
      labels: { 'app.kubernetes.io/name': 'sidecarset', 'app.kubernetes.io/part-of': 'sidecarset' },
    },
    type: 'Opaque',
    data: secretData(bundle),
  };
}

function statusOf(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}
