/**
 * What the cluster commands of the CLI (rollout, check-inject, plan NAME) read and write, through
 * @kubernetes/client-node with a kubeconfig chosen as kubectl chooses it (--kubeconfig, else
 * $KUBECONFIG, else ~/.kube/config, else in-cluster; --context). Every failure comes out as a
 * ClusterError with one line for people: the API server's Status message, or why the cluster could
 * not be reached.
 */
import {
  AdmissionregistrationV1Api,
  ApiException,
  ApisApi,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { hasPodResize } from './pod-resize-discovery.js';
import type { KubeConfig } from '@kubernetes/client-node';

import { SIDECARSET_NAME_LABEL } from '../core/api/annotations.js';
import type { WebhookSelectors } from '../core/diagnosis/check-inject.js';
import type { Pod } from '../core/api/k8s-types.js';
import type { NamespaceLabels } from '../core/matching/match.js';
import type { StoredRevision } from '../core/revisions/history.js';
import { selectorString } from '../core/matching/selector.js';
import type { SidecarSet } from '../core/api/sidecarset-types.js';
import { ClusterError, ConflictError, NotFoundError } from './cluster-error.js';
import { cachedNamespace } from './collections.js';
import { loadKubeConfig } from './kubeconfig.js';
import type { ListPage } from './reflector.js';
import { storedRevision } from './revisions.js';

const GROUP = 'apps.kruise.io';
const PLURAL = 'sidecarsets';
const RESOURCE = 'sidecarset.apps.kruise.io';
const PAGE = 500;

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export interface ClusterFlags {
  kubeconfig?: string;
  context?: string;
}

export function cliKubeConfig(flags: ClusterFlags): KubeConfig {
  const kubeConfig = loadKubeConfig(flags.kubeconfig);
  if (flags.context !== undefined) {
    if (kubeConfig.getContextObject(flags.context) === null) {
      throw new ClusterError(`context "${flags.context}" does not exist in the kubeconfig`);
    }
    kubeConfig.setCurrentContext(flags.context);
  }
  if (kubeConfig.getCurrentCluster() === null) {
    throw new ClusterError('the kubeconfig names no cluster for its current context');
  }
  return kubeConfig;
}

/** The namespace of the kubeconfig's current context, as kubectl defaults -n. */
export function contextNamespace(kubeConfig: KubeConfig): string {
  const context = kubeConfig.getContextObject(kubeConfig.getCurrentContext());
  return context?.namespace ?? 'default';
}

export interface CliClient {
  readonly server: string;
  /**
   * The version SidecarSets are read and written in: the one the API server prefers for
   * apps.kruise.io (v1beta1 where the CRD serves it, v1alpha1 on older installations), as kubectl
   * chooses. The core reads either.
   */
  sidecarSetVersion(): Promise<string>;
  getSidecarSet(name: string): Promise<SidecarSet>;
  listSidecarSets(): Promise<SidecarSet[]>;
  /** Replaces the SidecarSet; its metadata.resourceVersion guards against lost updates (409). */
  replaceSidecarSet(ss: SidecarSet): Promise<SidecarSet>;
  /** A JSON merge patch of the SidecarSet. */
  patchSidecarSet(name: string, patch: object): Promise<SidecarSet>;
  getPod(namespace: string, name: string): Promise<Pod>;
  /** The pods the SidecarSet's namespace and selector can match (the server filters by label). */
  podsOf(ss: SidecarSet): Promise<Pod[]>;
  /** Every namespace's labels (with the name label the API server sets). */
  namespaces(): Promise<NamespaceLabels>;
  /** One namespace's labels: what matching a pod of that namespace reads. */
  namespaceLabels(name: string): Promise<NamespaceLabels>;
  /**
   * The namespaceSelector and objectSelector of the pod webhook (the one whose rules cover pod
   * creation) in this MutatingWebhookConfiguration; undefined when it cannot be read.
   */
  podWebhookSelectors(configuration: string): Promise<WebhookSelectors | undefined>;
  /** The SidecarSet's ControllerRevisions in `namespace`, where the controller keeps them. */
  revisions(name: string, namespace: string): Promise<StoredRevision[]>;
  /** Whether the API server can resize pods in place (pods/resize, Kubernetes 1.33 and later). */
  canResizePods(): Promise<boolean>;
}

export function createCliClient(kubeConfig: KubeConfig): CliClient {
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const apps = kubeConfig.makeApiClient(AppsV1Api);
  const server = kubeConfig.getCurrentCluster()?.server ?? '';
  const apis = kubeConfig.makeApiClient(ApisApi);
  const admission = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  let version: Promise<string> | undefined;
  const sidecarSetVersion = (): Promise<string> =>
    (version ??= call('the API group apps.kruise.io', async () => {
      const groups = await apis.getAPIVersions();
      const found = groups.groups.find((g) => g.name === GROUP)?.preferredVersion?.version;
      if (found === undefined) {
        throw new NotFoundError(
          `the API server serves no ${GROUP} API: is the SidecarSet CRD installed?`,
        );
      }
      return found;
    }));
  const sidecarSets = async () => ({
    group: GROUP,
    version: await sidecarSetVersion(),
    plural: PLURAL,
  });
  const call = <T>(what: string, request: () => Promise<T>): Promise<T> =>
    request().catch((err: unknown) => {
      throw clusterError(err, what, server);
    });
  return {
    server,
    sidecarSetVersion,
    getSidecarSet: (name) =>
      call(
        `${RESOURCE} "${name}"`,
        async () =>
          (await custom.getClusterCustomObject({ ...(await sidecarSets()), name })) as SidecarSet,
      ),
    listSidecarSets: () =>
      call('SidecarSets', async () => {
        const api = await sidecarSets();
        const items = await allPages(
          async (cont) =>
            (await custom.listClusterCustomObject({
              ...api,
              limit: PAGE,
              ...cont,
            })) as ListPage<unknown>,
        );
        return items as unknown as SidecarSet[];
      }),
    replaceSidecarSet: (ss) =>
      call(
        `${RESOURCE} "${ss.metadata.name ?? ''}"`,
        async () =>
          (await custom.replaceClusterCustomObject({
            ...(await sidecarSets()),
            name: ss.metadata.name ?? '',
            body: ss,
          })) as SidecarSet,
      ),
    patchSidecarSet: (name, patch) =>
      call(
        `${RESOURCE} "${name}"`,
        async () =>
          (await custom.patchClusterCustomObject(
            { ...(await sidecarSets()), name, body: patch },
            mergePatch,
          )) as SidecarSet,
      ),
    getPod: (namespace, name) =>
      call(`pod "${namespace}/${name}"`, async () =>
        plainPod(await core.readNamespacedPod({ namespace, name })),
      ),
    podsOf: (ss) =>
      call('pods', async () => {
        const labelSelector = selectorString(ss.spec.selector);
        // An empty selector matches no pod (OpenKruise), so there is nothing to list.
        if (labelSelector === undefined) return [];
        const namespace = ss.spec.namespace ?? '';
        const pods = await allPages((cont) => {
          const params = { labelSelector, limit: PAGE, ...cont };
          return namespace === ''
            ? core.listPodForAllNamespaces(params)
            : core.listNamespacedPod({ namespace, ...params });
        });
        return pods.map(plainPod);
      }),
    namespaceLabels: (name) =>
      call(`namespace "${name}"`, async () => {
        const { labels } = cachedNamespace(await core.readNamespace({ name }));
        return { get: (ns: string) => (ns === name ? labels : undefined) };
      }),
    namespaces: () =>
      call('namespaces', async () => {
        const list = await core.listNamespace();
        const byName = new Map(
          list.items.map((ns) => {
            const cached = cachedNamespace(ns);
            return [cached.name, cached.labels] as const;
          }),
        );
        return { get: (name: string) => byName.get(name) };
      }),
    podWebhookSelectors: async (configuration) => {
      let found;
      try {
        found = await admission.readMutatingWebhookConfiguration({ name: configuration });
      } catch {
        // Not installed under that name, or not readable by this user: the scope is then unknown.
        return undefined;
      }
      const webhook = (found.webhooks ?? []).find((w) =>
        (w.rules ?? []).some(
          (r) =>
            (r.resources ?? []).some((res) => res === 'pods' || res === '*') &&
            (r.operations ?? []).some((op) => op === 'CREATE' || op === '*'),
        ),
      );
      if (webhook === undefined) return undefined;
      return {
        ...(webhook.namespaceSelector === undefined
          ? {}
          : { namespaceSelector: webhook.namespaceSelector }),
        ...(webhook.objectSelector === undefined ? {} : { objectSelector: webhook.objectSelector }),
      };
    },
    revisions: (name, namespace) =>
      call(`the ControllerRevisions of ${RESOURCE} "${name}"`, async () => {
        const list = await apps.listNamespacedControllerRevision({
          namespace,
          labelSelector: `${SIDECARSET_NAME_LABEL}=${name}`,
        });
        return list.items.map((r) => storedRevision(r));
      }),
    canResizePods: () => call("the API server's pod subresources", () => hasPodResize(core)),
  };
}

/** Every item of a list, page by page (limit/continue), as kubectl lists. */
async function allPages<T>(
  page: (cont: { _continue?: string }) => Promise<ListPage<T>>,
): Promise<T[]> {
  const items: T[] = [];
  let token: string | undefined;
  do {
    const result = await page(token === undefined ? {} : { _continue: token });
    items.push(...result.items);
    token = result.metadata?._continue || result.metadata?.continue || undefined;
  } while (token !== undefined);
  return items;
}

/**
 * An object of client-node's typed API as the API server sent it: typed reads turn times into
 * Date objects, which the core (and JSON/YAML output) expects as RFC 3339 strings.
 */
function plainPod(value: unknown): Pod {
  return JSON.parse(JSON.stringify(value)) as Pod;
}

/** The ClusterError of a failed request about `what` (NotFoundError for a 404). */
export function clusterError(err: unknown, what: string, server: string): ClusterError {
  if (err instanceof ClusterError) return err;
  if (err instanceof ApiException) {
    const status = statusOf(err.body);
    const code = err.code;
    if (code === 404) {
      // A missing object's Status names it; a missing collection (no CRD) has no name to give.
      const named = status.details?.name !== undefined || status.message === undefined;
      const crd = what.startsWith(RESOURCE) ? '; is the SidecarSet CRD installed?' : '';
      return new NotFoundError(
        named ? `${what} not found` : `${what} not found (${status.message ?? ''}${crd})`,
      );
    }
    const message = status.message ?? `HTTP ${code}`;
    if (code === 409) return new ConflictError(message);
    if (code === 401) return new ClusterError(`not authenticated to ${server}: ${message}`);
    return new ClusterError(message);
  }
  return new ClusterError(`cannot reach the cluster at ${server}: ${messageOf(err)}`);
}

interface Status {
  message?: string;
  details?: { name?: string };
}

function statusOf(body: unknown): Status {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return body === '' ? {} : { message: body };
    }
  }
  return typeof value === 'object' && value !== null ? value : {};
}

function messageOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  // fetch wraps the socket error (ECONNREFUSED, ENOTFOUND, a TLS failure) as its cause.
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error && cause.message !== err.message
    ? `${err.message}: ${cause.message}`
    : err.message;
}
