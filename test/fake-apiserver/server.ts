import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiControl } from './control.js';
import type { RequestInfo, WatchHandle } from './control.js';
import {
  ApiError,
  badRequest,
  methodNotAllowed,
  notFound,
  unknownPath,
  unsupportedMediaType,
} from './errors.js';
import { evictPod } from './eviction.js';
import { isJsonObject } from './json.js';
import type { JsonObject, JsonValue } from './json.js';
import { FakeKubelet } from './kubelet.js';
import type { KubeletOptions } from './kubelet.js';
import { isPatchType } from './patch.js';
import type { KubeObject, PatchType, ResourceRef } from './types.js';
import { NAMESPACES, PODS, sameResource } from './resources.js';
import { listKind, route, verbOf } from './router.js';
import type { ResourceRoute, Route, Verb } from './router.js';
import { ObjectStore } from './store.js';
import type { StoreOptions, WriteOptions } from './store.js';
import { bookmark, startWatch, watchPredicate } from './watch.js';
import type { WatchEvent, WatchRequest } from './watch.js';

export interface FakeApiServerOptions extends StoreOptions {
  /** Created before the server starts; default: default, kube-system, kube-public, kube-node-lease. */
  readonly namespaces?: readonly string[];
  /** Interval of BOOKMARK events on watches that allow them; default 60 s, 0 disables. */
  readonly bookmarkIntervalMs?: number;
}

export interface FakeApiServer {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly store: ObjectStore;
  readonly control: ApiControl;
  /** A KubeConfig for `url` (plain HTTP, which client-node accepts with skipTLSVerify). */
  kubeConfig(): KubeConfig;
  /** Starts a fake kubelet on this server's store; close() stops it. */
  startKubelet(options?: KubeletOptions): FakeKubelet;
  /** Ends every watch and connection, stops the kubelets, and closes the listener. */
  close(): Promise<void>;
}

const HEALTH_PATHS = new Set(['/readyz', '/livez', '/healthz']);
const NOT_READY =
  '[-]poststarthook/rbac/bootstrap-roles failed: not finished\nreadyz check failed\n';

const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

interface Reply {
  readonly status: number;
  readonly body: JsonValue;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

function parseBody(text: string): { value: JsonValue | undefined; error: ApiError | undefined } {
  if (text === '') return { value: undefined, error: undefined };
  try {
    return { value: JSON.parse(text) as JsonValue, error: undefined };
  } catch (err: unknown) {
    return {
      value: text,
      error: badRequest(`invalid JSON body: ${err instanceof Error ? err.message : String(err)}`),
    };
  }
}

function sendJson(res: ServerResponse, status: number, body: JsonValue): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

function requireJson(contentType: string | undefined): void {
  if (contentType !== undefined && contentType !== 'application/json')
    throw unsupportedMediaType(contentType);
}

function describe(
  req: IncomingMessage,
  url: URL,
  r: Route | undefined,
  body: JsonValue | undefined,
): RequestInfo {
  const method = req.method ?? 'GET';
  const resourceRoute = r?.kind === 'resource' ? r : undefined;
  const contentType = req.headers['content-type']?.split(';')[0]?.trim();
  return {
    method,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    contentType: contentType === '' ? undefined : contentType,
    body,
    verb: resourceRoute === undefined ? undefined : verbOf(method, resourceRoute, isWatch(url)),
    group: resourceRoute?.resource.group,
    resource: resourceRoute?.resource.resource,
    namespace: resourceRoute?.namespace,
    name: resourceRoute?.name,
    subresource: resourceRoute?.subresource,
  };
}

function isWatch(url: URL): boolean {
  const watch = url.searchParams.get('watch');
  return watch === 'true' || watch === '1';
}

function optional(value: string | null): string | undefined {
  return value === null ? undefined : value;
}

/** The JSON shapes of the built-in list kinds leave apiVersion/kind out of their items. */
function listItem(obj: JsonObject, custom: boolean): JsonObject {
  if (custom) return obj;
  const item = { ...obj };
  delete item['apiVersion'];
  delete item['kind'];
  return item;
}

class FakeApiServerImpl {
  readonly store: ObjectStore;
  readonly control = new ApiControl();
  private readonly server: Server;
  private readonly bookmarkIntervalMs: number;
  private readonly kubelets: FakeKubelet[] = [];
  private nextWatchId = 1;

  constructor(options: FakeApiServerOptions) {
    this.store = new ObjectStore(options);
    this.bookmarkIntervalMs = options.bookmarkIntervalMs ?? 60_000;
    for (const name of options.namespaces ?? DEFAULT_NAMESPACES) {
      this.store.create(NAMESPACES, '', { metadata: { name } });
    }
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent)
          sendJson(res, 500, new ApiError(500, 'InternalError', String(err)).toStatus());
      });
    });
  }

  listen(): Promise<string> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        const { port } = this.server.address() as AddressInfo;
        resolve(`http://127.0.0.1:${port}`);
      });
    });
  }

  startKubelet(options: KubeletOptions = {}): FakeKubelet {
    const kubelet = new FakeKubelet(this.store, options);
    this.kubelets.push(kubelet);
    return kubelet;
  }

  async close(): Promise<void> {
    for (const kubelet of this.kubelets) kubelet.stop();
    this.control.closeWatches(() => true, { abrupt: true });
    const closed = new Promise<void>((resolve) => {
      this.server.close(() => {
        resolve();
      });
    });
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake.invalid');
    const { value: body, error: bodyError } = parseBody(await readBody(req));
    const r = route(url.pathname, this.store.resources);
    const info = describe(req, url, r, body);
    let status = 500;
    let injected = false;
    try {
      if (HEALTH_PATHS.has(url.pathname) && info.method === 'GET') {
        // As kube-apiserver: /readyz fails (500, the failed checks listed) until it is ready.
        const ready = url.pathname !== '/readyz' || this.control.ready();
        status = ready ? 200 : 500;
        res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(ready ? 'ok' : NOT_READY);
        return;
      }
      if (r === undefined) throw unknownPath();
      const warming = this.control.warmUpError();
      if (warming !== undefined) {
        injected = true;
        throw warming;
      }
      const fault = this.control.takeFault(info, 'before');
      if (fault !== undefined) {
        injected = true;
        if (info.verb === 'watch' && fault.code === 410) {
          status = 200;
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end(`${JSON.stringify({ type: 'ERROR', object: fault.toStatus() })}\n`);
          return;
        }
        throw fault;
      }
      if (r.kind === 'discovery') {
        if (info.method !== 'GET') throw methodNotAllowed(info.method);
        status = 200;
        sendJson(res, status, r.body);
        return;
      }
      if (info.verb === undefined) throw methodNotAllowed(info.method);
      if (bodyError !== undefined) throw bodyError;
      if (info.verb === 'watch') {
        status = this.serveWatch(req, res, r, url.searchParams);
        return;
      }
      const reply =
        (await this.admit(info.verb, r, url.searchParams, info)) ??
        this.execute(info.verb, r, url.searchParams, info);
      const late = this.control.takeFault(info, 'after');
      if (late !== undefined) {
        injected = true;
        throw late;
      }
      status = reply.status;
      sendJson(res, status, reply.body);
    } catch (err: unknown) {
      const apiError =
        err instanceof ApiError ? err : new ApiError(500, 'InternalError', String(err));
      status = apiError.code;
      sendJson(res, status, apiError.toStatus());
    } finally {
      this.control.record({ ...info, status, injected });
    }
  }

  /**
   * Runs the admission hooks for a write to a main resource and stores the result; undefined when
   * no hook applies. A write that lands on the object while a hook runs makes this one 409.
   */
  private async admit(
    verb: Exclude<Verb, 'watch'>,
    r: ResourceRoute,
    query: URLSearchParams,
    info: RequestInfo,
  ): Promise<Reply | undefined> {
    const hooks = this.control.admissionHooks();
    if (hooks.length === 0 || r.subresource !== undefined) return undefined;
    if (verb !== 'create' && verb !== 'update' && verb !== 'patch') return undefined;
    const def = r.resource;
    const name = r.name ?? '';
    const dryRun = query.get('dryRun') === 'All';
    const body = info.body ?? null;
    if (verb === 'patch' && !isPatchType(info.contentType ?? '')) return undefined;
    if (verb !== 'patch') requireJson(info.contentType);
    let object: KubeObject;
    let oldObject: KubeObject | undefined;
    if (verb === 'create') {
      if (
        !isJsonObject(body) ||
        (body['metadata'] !== undefined && !isJsonObject(body['metadata']))
      ) {
        return undefined; // the store answers the malformed body
      }
      const metadata = isJsonObject(body['metadata']) ? body['metadata'] : {};
      object = {
        ...body,
        metadata: def.namespaced ? { ...metadata, namespace: r.namespace } : metadata,
      };
    } else {
      oldObject = this.store.get(def, r.namespace, name);
      object =
        verb === 'update'
          ? this.store.update(def, r.namespace, name, body, { dryRun: true })
          : this.store.patch(
              def,
              r.namespace,
              name,
              { type: info.contentType as PatchType, body },
              { dryRun: true },
            );
    }
    const operation = verb === 'create' ? 'CREATE' : 'UPDATE';
    for (const hook of hooks) {
      object =
        (await hook({
          operation,
          resource: def,
          namespace: r.namespace,
          name: object.metadata.name ?? name,
          object,
          oldObject,
          dryRun,
        })) ?? object;
    }
    if (verb === 'create') {
      return { status: 201, body: this.store.create(def, r.namespace, object, { dryRun }) };
    }
    return { status: 200, body: this.store.update(def, r.namespace, name, object, { dryRun }) };
  }

  private execute(
    verb: Exclude<Verb, 'watch'>,
    r: ResourceRoute,
    query: URLSearchParams,
    info: RequestInfo,
  ): Reply {
    const def = r.resource;
    const name = r.name ?? '';
    const dryRun = query.get('dryRun') === 'All';
    const subresource: WriteOptions =
      r.subresource === 'status' || r.subresource === 'resize'
        ? { subresource: r.subresource }
        : {};
    const body = info.body ?? null;
    switch (verb) {
      case 'get': {
        const found = this.store.get(def, r.namespace, name);
        if (found === undefined) throw notFound(def, name);
        return { status: 200, body: found };
      }
      case 'list':
        return { status: 200, body: this.list(r, query) };
      case 'create':
        requireJson(info.contentType);
        if (r.subresource === 'eviction')
          return evictPod(this.store, r.namespace, name, body, dryRun);
        return { status: 201, body: this.store.create(def, r.namespace, body, { dryRun }) };
      case 'update':
        requireJson(info.contentType);
        return {
          status: 200,
          body: this.store.update(def, r.namespace, name, body, { dryRun, ...subresource }),
        };
      case 'patch': {
        const type = info.contentType ?? '';
        if (!isPatchType(type)) throw unsupportedMediaType(type);
        return {
          status: 200,
          body: this.store.patch(
            def,
            r.namespace,
            name,
            { type, body },
            { dryRun, ...subresource },
          ),
        };
      }
      case 'delete':
        return { status: 200, body: this.delete(r, body, dryRun) };
    }
  }

  private list(r: ResourceRoute, query: URLSearchParams): JsonObject {
    const def = r.resource;
    const limit = Number(query.get('limit') ?? '0');
    const result = this.store.list(def, {
      namespace: r.namespace,
      ...(query.has('labelSelector') ? { labelSelector: query.get('labelSelector') ?? '' } : {}),
      ...(query.has('fieldSelector') ? { fieldSelector: query.get('fieldSelector') ?? '' } : {}),
      ...(Number.isInteger(limit) && limit > 0 ? { limit } : {}),
      ...(query.get('continue') ? { continue: query.get('continue') ?? '' } : {}),
    });
    const metadata: JsonObject = { resourceVersion: result.resourceVersion };
    if (result.continue !== undefined) metadata['continue'] = result.continue;
    return { ...listKind(def), metadata, items: result.items.map((i) => listItem(i, def.custom)) };
  }

  /** DELETE with optional DeleteOptions (preconditions, dryRun) in the body. */
  private delete(r: ResourceRoute, body: JsonValue, dryRun: boolean): JsonObject {
    const options = isJsonObject(body) ? body : {};
    const pre = isJsonObject(options['preconditions']) ? options['preconditions'] : {};
    const preconditions = {
      ...(typeof pre['uid'] === 'string' ? { uid: pre['uid'] } : {}),
      ...(typeof pre['resourceVersion'] === 'string'
        ? { resourceVersion: pre['resourceVersion'] }
        : {}),
    };
    const bodyDryRun = Array.isArray(options['dryRun']) && options['dryRun'].includes('All');
    const deleted = this.store.delete(r.resource, r.namespace, r.name ?? '', {
      dryRun: dryRun || bodyDryRun,
      preconditions,
    });
    return deleteAnswer(r.resource, deleted);
  }

  /** Streams newline-delimited watch events; returns the HTTP status for the log. */
  private serveWatch(
    req: IncomingMessage,
    res: ServerResponse,
    r: ResourceRoute,
    query: URLSearchParams,
  ): number {
    const request: WatchRequest = {
      resource: r.resource,
      namespace: r.namespace,
      labelSelector: optional(query.get('labelSelector')),
      fieldSelector: optional(query.get('fieldSelector')),
      resourceVersion: optional(query.get('resourceVersion')),
    };
    watchPredicate(request); // selector errors are HTTP 400 before the stream starts
    const allowBookmarks = query.get('allowWatchBookmarks') === 'true';
    const timeoutSeconds = Number(query.get('timeoutSeconds') ?? '0');
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-cache, private',
    });
    res.flushHeaders();
    const write = (event: WatchEvent): void => {
      if (!res.writableEnded && !res.destroyed) res.write(`${JSON.stringify(event)}\n`);
    };
    const sendBookmark = (): void => {
      if (allowBookmarks) write(bookmark(r.resource, this.store.resourceVersion()));
    };
    let unsubscribe: () => void;
    try {
      unsubscribe = startWatch(this.store, request, write);
    } catch (err: unknown) {
      // An expired resourceVersion is reported inside a 200 stream, as the watch cache does.
      const apiError =
        err instanceof ApiError ? err : new ApiError(500, 'InternalError', String(err));
      write({ type: 'ERROR', object: apiError.toStatus() });
      res.end();
      return 200;
    }
    const id = this.nextWatchId++;
    const timers: NodeJS.Timeout[] = [];
    if (allowBookmarks && this.bookmarkIntervalMs > 0)
      timers.push(setInterval(sendBookmark, this.bookmarkIntervalMs));
    if (Number.isFinite(timeoutSeconds) && timeoutSeconds > 0) {
      timers.push(
        setTimeout(() => {
          sendBookmark();
          res.end();
        }, timeoutSeconds * 1000),
      );
    }
    const handle: WatchHandle = {
      info: {
        id,
        path: req.url ?? '',
        resource: r.resource,
        namespace: r.namespace,
        labelSelector: request.labelSelector,
        fieldSelector: request.fieldSelector,
        resourceVersion: request.resourceVersion,
      },
      send: write,
      sendBookmark,
      end: () => res.end(),
      destroy: () => res.destroy(),
    };
    res.on('close', () => {
      unsubscribe();
      for (const timer of timers) clearTimeout(timer);
      this.control.removeWatch(id);
    });
    this.control.addWatch(handle);
    return 200;
  }
}

/** Starts the fake API server on 127.0.0.1 with a random port. */
export async function startFakeApiServer(
  options: FakeApiServerOptions = {},
): Promise<FakeApiServer> {
  const impl = new FakeApiServerImpl(options);
  const url = await impl.listen();
  return {
    url,
    store: impl.store,
    control: impl.control,
    kubeConfig: () => {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'fake', server: url, skipTLSVerify: true }],
        users: [{ name: 'fake' }],
        contexts: [{ name: 'fake', cluster: 'fake', user: 'fake' }],
        currentContext: 'fake',
      });
      return kc;
    },
    startKubelet: (kubeletOptions) => impl.startKubelet(kubeletOptions),
    close: () => impl.close(),
  };
}

/**
 * What the API server answers a DELETE with: a pod (graceful deletion, here with no node to wait
 * for) comes back with its deletionTimestamp; everything else deleted at once answers a Status.
 */
function deleteAnswer(ref: ResourceRef, deleted: KubeObject): JsonObject {
  if (sameResource(ref, PODS)) {
    const at = new Date();
    return {
      ...deleted,
      metadata: {
        ...deleted.metadata,
        deletionTimestamp: at.toISOString().replace(/\.\d+Z$/, 'Z'),
        deletionGracePeriodSeconds: 0,
      },
    };
  }
  const details: JsonObject = { name: deleted.metadata.name ?? '', kind: ref.resource };
  if (ref.group !== '') details['group'] = ref.group;
  if (deleted.metadata.uid !== undefined) details['uid'] = deleted.metadata.uid;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}
