/**
 * SidecarSet ControllerRevisions in the cluster (OpenKruise pkg/control/sidecarcontrol/history_control.go): apps/v1
 * ControllerRevisions labelled kruise.io/sidecarset-name in the controller's namespace. A
 * reflector keeps them for the controller (registration) and the webhook (injection pinning and
 * validation); the writer creates, renumbers, relabels and deletes them.
 */
import type { KubeConfig, KubernetesObject, V1ControllerRevision } from '@kubernetes/client-node';
import { ApiException, AppsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { Logger } from 'pino';

import { SIDECARSET_NAME_LABEL } from '../core/api/annotations.js';
import { V1BETA1 } from '../core/api/sidecarset-types.js';
import type { RevisionLookup } from '../core/inject/revision.js';
import type { NewRevision, StoredRevision } from '../core/revisions/history.js';
import { INSTALLATION } from '../core/api/installation-names.js';
import { canonicalData, toSidecarSetRevision } from '../core/revisions/history.js';
import type { SidecarSet, SidecarSetRevision } from '../core/api/sidecarset-types.js';
import type { Backoff, Reflector, ReflectorHandlers } from './reflector.js';
import { createReflector } from './reflector.js';

/** The ControllerRevisions are kept in the installation's namespace unless told otherwise. */
export const DEFAULT_REVISION_NAMESPACE = INSTALLATION.namespace;

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

function controllerRevisionsPath(namespace: string): string {
  return `/apis/apps/v1/namespaces/${namespace}/controllerrevisions`;
}

/** A listed (typed) or watched (plain JSON) ControllerRevision as planning reads it. */
export function storedRevision(raw: KubernetesObject): StoredRevision {
  const cr = raw as V1ControllerRevision;
  return {
    name: cr.metadata?.name ?? '',
    revision: cr.revision,
    data: canonicalData(cr.data),
    labels: { ...cr.metadata?.labels },
    annotations: { ...cr.metadata?.annotations },
  };
}

export interface RevisionReflectorOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  logger: Logger;
  handlers?: ReflectorHandlers<StoredRevision>;
  backoff?: Backoff;
}

/** Every SidecarSet revision in the namespace (those carrying kruise.io/sidecarset-name). */
export function createRevisionReflector(
  options: RevisionReflectorOptions,
): Reflector<StoredRevision> {
  const apps = options.kubeConfig.makeApiClient(AppsV1Api);
  const { namespace } = options;
  return createReflector({
    kubeConfig: options.kubeConfig,
    path: controllerRevisionsPath(namespace),
    labelSelector: SIDECARSET_NAME_LABEL,
    list: (params) =>
      apps.listNamespacedControllerRevision({
        namespace,
        ...params,
        labelSelector: SIDECARSET_NAME_LABEL,
      }),
    transform: storedRevision,
    logger: options.logger,
    ...(options.handlers ? { handlers: options.handlers } : {}),
    ...(options.backoff ? { backoff: options.backoff } : {}),
  });
}

/** The stored revisions of one SidecarSet. */
export function revisionsOf(
  reflector: Reflector<StoredRevision>,
  sidecarSetName: string,
): StoredRevision[] {
  return reflector.list().filter((r) => r.labels[SIDECARSET_NAME_LABEL] === sidecarSetName);
}

/** What injection and validation read: the revisions grouped by SidecarSet, built once. */
export function revisionLookup(revisions: readonly StoredRevision[]): RevisionLookup {
  const bySidecarSet = new Map<string, SidecarSetRevision[]>();
  for (const stored of revisions) {
    const revision = toSidecarSetRevision(stored);
    if (revision === undefined) continue;
    const list = bySidecarSet.get(revision.sidecarSetName) ?? [];
    list.push(revision);
    bySidecarSet.set(revision.sidecarSetName, list);
  }
  return (name) => bySidecarSet.get(name) ?? [];
}

export type CreateOutcome = { kind: 'created' } | { kind: 'exists'; sameData: boolean };

export interface RevisionWriter {
  /** Creates the revision; an existing one of that name is reported, with whether data agrees. */
  create(revision: NewRevision, owner: SidecarSet): Promise<CreateOutcome>;
  renumber(name: string, revision: number): Promise<void>;
  setLabel(name: string, key: string, value: string): Promise<void>;
  /** Deletes the revision; one already gone is fine. */
  delete(name: string): Promise<void>;
}

export function createRevisionWriter(kubeConfig: KubeConfig, namespace: string): RevisionWriter {
  const apps = kubeConfig.makeApiClient(AppsV1Api);
  return {
    async create(revision, owner) {
      const uid = owner.metadata.uid;
      const body: V1ControllerRevision = {
        apiVersion: 'apps/v1',
        kind: 'ControllerRevision',
        metadata: {
          name: revision.name,
          namespace,
          labels: revision.labels,
          annotations: revision.annotations,
          ...(uid
            ? {
                ownerReferences: [
                  {
                    apiVersion: V1BETA1,
                    kind: 'SidecarSet',
                    name: owner.metadata.name ?? '',
                    uid,
                    controller: true,
                    blockOwnerDeletion: true,
                  },
                ],
              }
            : {}),
        },
        data: JSON.parse(revision.data) as unknown,
        revision: revision.revision,
      };
      try {
        await apps.createNamespacedControllerRevision({ namespace, body });
        return { kind: 'created' };
      } catch (err) {
        if (!(err instanceof ApiException) || err.code !== 409) throw err;
      }
      const existing = await apps.readNamespacedControllerRevision({
        name: revision.name,
        namespace,
      });
      return { kind: 'exists', sameData: canonicalData(existing.data) === revision.data };
    },
    async renumber(name, revision) {
      await apps.patchNamespacedControllerRevision(
        { name, namespace, body: { revision } },
        mergePatch,
      );
    },
    async setLabel(name, key, value) {
      await apps.patchNamespacedControllerRevision(
        { name, namespace, body: { metadata: { labels: { [key]: value } } } },
        mergePatch,
      );
    },
    async delete(name) {
      try {
        await apps.deleteNamespacedControllerRevision({ name, namespace });
      } catch (err) {
        if (err instanceof ApiException && err.code === 404) return;
        throw err;
      }
    },
  };
}
