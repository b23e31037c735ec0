/**
 * Writes the pod webhook's scope into its MutatingWebhookConfiguration
 * (docs/adr/0012-scoped-pod-webhook.md): GET, then a JSON patch of only the scope's fields
 * (src/core/scope/configuration-patch.ts). A 409 (someone else wrote in between: the caBundle
 * writer, a re-apply) reads again. A 422 is either the API server refusing the scope (the
 * expression too long or too costly), which falls back to the next, wider level, or a failed
 * `test` of the patch because the webhooks were changed in between, which the API server also
 * answers with 422: told apart by reading again, a changed resourceVersion means the latter and the
 * same level is tried again. RBAC: get and patch on the one configuration.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  AdmissionregistrationV1Api,
  ApiException,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';

import type { ScopedConfiguration } from '../core/scope/configuration-patch.js';
import { installerSelectors, scopePatch } from '../core/scope/configuration-patch.js';
import type { WebhookSelectors } from '../core/matching/missed-pods.js';
import type { WebhookScope } from '../core/scope/webhook-scope.js';
import { withSignal } from './abortable.js';

export interface ScopeWriter {
  /**
   * Gives the pod webhook the first of `levels` the API server accepts (undefined: removes any
   * scope). Resolves with the level now in place, or undefined when none is (no configuration,
   * or scoping removed). `signal` aborts the requests under way and rejects (leadership lost).
   */
  write(
    levels: readonly WebhookScope[] | undefined,
    signal?: AbortSignal,
  ): Promise<WebhookScope | undefined>;
  /** The pod webhook's own selectors, as last read (src/core/matching/missed-pods.ts needs them). */
  webhookSelectors(): WebhookSelectors;
}

/** Conflicts in a row before a write gives up until the next sync. */
const MAX_ATTEMPTS = 5;

export function createScopeWriter(options: {
  kubeConfig: KubeConfig;
  configurationName: string;
  logger: Logger;
}): ScopeWriter {
  const api = options.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const name = options.configurationName;
  const log = options.logger.child({ configuration: `mutating/${name}` });
  let missing = false;
  let selectors: WebhookSelectors = {};

  async function read(signal: AbortSignal): Promise<ScopedConfiguration | undefined> {
    try {
      const config = (await api.readMutatingWebhookConfiguration(
        { name },
        withSignal(signal),
      )) as ScopedConfiguration;
      missing = false;
      selectors = installerSelectors(config);
      return config;
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
      if (!missing) log.warn('the pod webhook configuration is not found; its scope is not kept');
      missing = true;
      return undefined;
    }
  }

  /** Whether the configuration is no longer at `resourceVersion` (or is gone). */
  async function changedSince(
    resourceVersion: string | undefined,
    signal: AbortSignal,
  ): Promise<boolean> {
    const config = await read(signal);
    return config?.metadata?.resourceVersion !== resourceVersion;
  }

  return {
    async write(levels, signal = new AbortController().signal) {
      const wanted = levels ?? [undefined];
      let level = 0;
      for (let attempt = 1; level < wanted.length; attempt++) {
        signal.throwIfAborted();
        const config = await read(signal);
        if (config === undefined) return undefined;
        const scope = wanted[level];
        const readVersion = config.metadata?.resourceVersion;
        const body = scopePatch(config, scope);
        if (body.length === 0) return scope;
        try {
          await api.patchMutatingWebhookConfiguration(
            { name, body },
            setHeaderOptions('Content-Type', PatchStrategy.JsonPatch, withSignal(signal)),
          );
          log.info(
            { precision: scope?.precision ?? 'none' },
            scope === undefined ? 'pod webhook scope removed' : 'pod webhook scope written',
          );
          return scope;
        } catch (err) {
          const status = statusOf(err);
          if (status === 409 && attempt < MAX_ATTEMPTS) continue;
          if (
            status === 422 &&
            attempt < MAX_ATTEMPTS &&
            (await changedSince(readVersion, signal))
          ) {
            continue;
          }
          if (status !== 422 || scope === undefined) throw err;
          log.warn(
            { precision: scope.precision, err },
            'the API server refused this scope; trying a wider one',
          );
          level++;
        }
      }
      throw new Error('the API server refused every scope, even the widest');
    },
    webhookSelectors: () => selectors,
  };
}

function statusOf(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}
