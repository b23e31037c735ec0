/**
 * The cluster's SidecarSets, Namespaces and ControllerRevisions, listed and watched once per
 * process and read by both the webhook (src/cache/cluster-source.ts) and the upgrade controller,
 * as controller-runtime's manager gives its webhooks and controllers one cache. One cache is one
 * truth: two watches of the same collection can lag each other, and the controller must never
 * evict a pod for a revision that the webhook, which injects the replacement, has not seen yet.
 * Each user starts and stops it; the watches end when the last user stops.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';

import type { SidecarSet } from '../core/api/sidecarset-types.js';
import type { StoredRevision } from '../core/revisions/history.js';
import type { CachedNamespace } from './collections.js';
import {
  NAMESPACES_PATH,
  SIDECARSETS_PATH,
  cachedNamespace,
  listNamespaces,
  listSidecarSets,
} from './collections.js';
import type { Backoff, Reflector } from './reflector.js';
import { createReflector, withoutManagedFields } from './reflector.js';
import { DEFAULT_REVISION_NAMESPACE, createRevisionReflector } from './revisions.js';

export interface SharedCachesOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  /** Where the SidecarSets' ControllerRevisions live (default sidecarset-system). */
  revisionNamespace?: string;
  backoff?: Backoff;
}

export class SharedCaches {
  /** As stored: not validated or defaulted (users do that). */
  readonly sidecarSets: Reflector<SidecarSet>;
  readonly namespaces: Reflector<CachedNamespace>;
  readonly revisions: Reflector<StoredRevision>;
  private users = 0;

  constructor(options: SharedCachesOptions) {
    const { kubeConfig } = options;
    const common = {
      kubeConfig,
      logger: options.logger.child({ component: 'caches' }),
      ...(options.backoff ? { backoff: options.backoff } : {}),
    };
    this.sidecarSets = createReflector({
      ...common,
      path: SIDECARSETS_PATH,
      list: listSidecarSets(kubeConfig),
      transform: (raw) => withoutManagedFields(raw) as unknown as SidecarSet,
    });
    this.namespaces = createReflector({
      ...common,
      path: NAMESPACES_PATH,
      list: listNamespaces(kubeConfig),
      transform: cachedNamespace,
    });
    this.revisions = createRevisionReflector({
      ...common,
      namespace: options.revisionNamespace ?? DEFAULT_REVISION_NAMESPACE,
    });
  }

  /** Starts the watches for one more user; resolves once all three caches have synced. */
  async start(): Promise<void> {
    this.users++;
    await Promise.all(this.all().map((r) => r.start()));
  }

  /** One user is done; the last one stops the watches. */
  async stop(): Promise<void> {
    if (this.users === 0) return;
    this.users--;
    if (this.users === 0) await Promise.all(this.all().map((r) => r.stop()));
  }

  synced(): boolean {
    return this.all().every((r) => r.synced());
  }

  /** The caches by the names /readyz and `check` report (src/k8s/failing-caches.ts). */
  named(): Record<string, Reflector<unknown>> {
    return {
      SidecarSets: this.sidecarSets,
      Namespaces: this.namespaces,
      ControllerRevisions: this.revisions,
    };
  }

  private all(): Reflector<unknown>[] {
    return Object.values(this.named());
  }
}
