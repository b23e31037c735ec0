import { randomUUID } from 'node:crypto';
import {
  ApiError,
  alreadyExists,
  badRequest,
  conflict,
  expired,
  invalid,
  notFound,
  unsupportedMediaType,
} from './errors.js';
import { clone, isJsonObject, jsonEqual } from './json.js';
import type { JsonObject, JsonValue } from './json.js';
import { applyPatch } from './patch.js';
import {
  DEFAULT_RESOURCES,
  NAMESPACES,
  apiVersionOf,
  resourceId,
  sameResource,
} from './resources.js';
import type { ResourceDef } from './resources.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import { PATCH_TYPES } from './types.js';
import type { ChangeType, KubeObject, ObjectMeta, PatchType, ResourceRef } from './types.js';

/** One committed change. `object` is frozen: copy it before changing anything. */
export interface StoreEvent {
  readonly type: ChangeType;
  readonly resource: ResourceDef;
  /** The new state; for DELETED the last state, carrying the deletion's resourceVersion. */
  readonly object: KubeObject;
  readonly oldObject: KubeObject | undefined;
  readonly resourceVersion: number;
}

export type StoreListener = (event: StoreEvent) => void;

export interface StoreOptions {
  readonly resources?: readonly ResourceDef[];
  /** How many events the watch history keeps (the etcd compaction window). Default 10,000. */
  readonly historyLimit?: number;
  /** Namespaced creates fail with 404 when the namespace does not exist (on by default). */
  readonly requireNamespaces?: boolean;
  readonly now?: () => Date;
  readonly newUid?: () => string;
}

export interface WriteOptions {
  readonly dryRun?: boolean;
  readonly subresource?: 'status' | 'resize';
}

export interface DeleteOptions {
  readonly dryRun?: boolean;
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
}

export interface ListOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly limit?: number;
  readonly continue?: string;
}

export interface ListResult {
  readonly items: KubeObject[];
  readonly resourceVersion: string;
  readonly continue?: string;
}

const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function withoutMetaAndStatus(obj: KubeObject): JsonObject {
  const rest: JsonObject = { ...obj };
  delete rest['metadata'];
  delete rest['status'];
  delete rest['apiVersion'];
  delete rest['kind'];
  return rest;
}

function asKubeObject(body: JsonValue, what: string): KubeObject {
  if (!isJsonObject(body)) throw badRequest(`${what}: the body must be a JSON object`);
  const obj = clone(body);
  const metadata = obj['metadata'] ?? {};
  if (!isJsonObject(metadata)) throw badRequest(`${what}: metadata must be an object`);
  return { ...obj, metadata };
}

function objectKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/**
 * The in-memory etcd: objects by resource, namespace and name, one global resourceVersion counter,
 * and a bounded history of changes for watches. Every method is synchronous, so each write is
 * atomic with respect to HTTP requests and watchers.
 */
export class ObjectStore {
  readonly resources: readonly ResourceDef[];
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  private readonly listeners = new Set<StoreListener>();
  private readonly historyLimit: number;
  private readonly requireNamespaces: boolean;
  private readonly now: () => Date;
  private readonly newUid: () => string;
  private history: StoreEvent[] = [];
  /** Every event with a resourceVersion above this one is still in the history. */
  private floor = 0;
  private revision = 0;
  private generatedNames = 0;

  constructor(options: StoreOptions = {}) {
    this.resources = options.resources ?? DEFAULT_RESOURCES;
    this.historyLimit = options.historyLimit ?? 10_000;
    this.requireNamespaces = options.requireNamespaces ?? true;
    this.now = options.now ?? (() => new Date());
    this.newUid = options.newUid ?? randomUUID;
    for (const def of this.resources) this.objects.set(resourceId(def), new Map());
  }

  definition(ref: ResourceRef): ResourceDef {
    const def = this.resources.find((r) => sameResource(r, ref));
    if (def === undefined)
      throw new ApiError(404, 'NotFound', `unknown resource ${resourceId(ref)}`);
    return def;
  }

  /** The latest resourceVersion handed out (list responses carry it). */
  resourceVersion(): number {
    return this.revision;
  }

  /** The oldest resourceVersion a watch can still start from. */
  oldestWatchableVersion(): number {
    return this.floor;
  }

  get(ref: ResourceRef, namespace: string, name: string): KubeObject | undefined {
    const found = this.bucket(ref).get(objectKey(namespace, name));
    return found === undefined ? undefined : clone(found);
  }

  list(ref: ResourceRef, options: ListOptions = {}): ListResult {
    const def = this.definition(ref);
    const byLabel = parseLabelSelector(options.labelSelector);
    const byField = parseFieldSelector(options.fieldSelector, def.fieldSelectors);
    const after = options.continue === undefined ? '' : decodeContinue(options.continue);
    const keys = [...this.bucket(def).keys()].sort().filter((k) => k > after);
    const items: KubeObject[] = [];
    let next: string | undefined;
    for (const key of keys) {
      const obj = this.bucket(def).get(key);
      if (obj === undefined) continue;
      if (options.namespace && obj.metadata.namespace !== options.namespace) continue;
      if (!byLabel(obj) || !byField(obj)) continue;
      if (options.limit !== undefined && options.limit > 0 && items.length === options.limit) {
        next = encodeContinue(
          objectKey(items.at(-1)?.metadata.namespace ?? '', items.at(-1)?.metadata.name ?? ''),
        );
        break;
      }
      items.push(clone(obj));
    }
    const resourceVersion = String(this.revision);
    return next === undefined
      ? { items, resourceVersion }
      : { items, resourceVersion, continue: next };
  }

  create(
    ref: ResourceRef,
    namespace: string,
    body: JsonValue,
    options: WriteOptions = {},
  ): KubeObject {
    const def = this.definition(ref);
    this.checkScope(def, namespace);
    const obj = asKubeObject(body, 'create');
    const meta = obj.metadata;
    if (def.namespaced && meta.namespace !== undefined && meta.namespace !== namespace) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    const name =
      meta.name !== undefined && meta.name !== '' ? meta.name : this.generateName(def, meta);
    if (this.bucket(def).has(objectKey(namespace, name))) throw alreadyExists(def, name);
    if (def.namespaced && this.requireNamespaces && !this.namespaceExists(namespace)) {
      throw notFound(NAMESPACES, namespace);
    }
    const created: KubeObject = { ...obj, apiVersion: apiVersionOf(def), kind: def.kind };
    created.metadata = {
      ...meta,
      name,
      uid: this.newUid(),
      creationTimestamp: this.now()
        .toISOString()
        .replace(/\.\d+Z$/, 'Z'),
      generation: 1,
    };
    delete created.metadata.resourceVersion;
    if (def.namespaced) created.metadata.namespace = namespace;
    else delete created.metadata.namespace;
    if (def.statusSubresource) delete created['status'];
    def.prepareForCreate?.(created);
    checkSchema(def, created);
    if (options.dryRun === true) return created;
    return clone(this.commit('ADDED', def, created, undefined));
  }

  /** PUT: replaces the object, or only its status with `subresource: 'status'`. */
  update(
    ref: ResourceRef,
    namespace: string,
    name: string,
    body: JsonValue,
    options: WriteOptions = {},
  ): KubeObject {
    const def = this.definition(ref);
    const old = this.mustGet(def, namespace, name);
    const candidate = asKubeObject(body, 'update');
    const meta = candidate.metadata;
    if (meta.name !== undefined && meta.name !== name) {
      throw badRequest(
        `the name of the object (${meta.name}) does not match the name on the URL (${name})`,
      );
    }
    if (def.namespaced && meta.namespace !== undefined && meta.namespace !== namespace) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    if (def.custom && (meta.resourceVersion ?? '') === '') {
      throw invalid(
        def,
        name,
        'metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
      );
    }
    return this.replace(def, old, candidate, options);
  }

  patch(
    ref: ResourceRef,
    namespace: string,
    name: string,
    patch: { readonly type: PatchType; readonly body: JsonValue },
    options: WriteOptions = {},
  ): KubeObject {
    const def = this.definition(ref);
    if (def.custom && patch.type === PATCH_TYPES.strategic) throw unsupportedMediaType(patch.type);
    const old = this.mustGet(def, namespace, name);
    const patched = applyPatch(patch.type, clone(old), patch.body);
    return this.replace(def, old, asKubeObject(patched, 'patch'), options);
  }

  delete(
    ref: ResourceRef,
    namespace: string,
    name: string,
    options: DeleteOptions = {},
  ): KubeObject {
    const def = this.definition(ref);
    const old = this.mustGet(def, namespace, name);
    const { uid, resourceVersion } = options.preconditions ?? {};
    if (uid !== undefined && uid !== old.metadata.uid) {
      throw conflict(
        def,
        name,
        `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${old.metadata.uid ?? ''}`,
      );
    }
    if (resourceVersion !== undefined && resourceVersion !== old.metadata.resourceVersion) {
      throw conflict(
        def,
        name,
        `Precondition failed: ResourceVersion in precondition: ${resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion ?? ''}`,
      );
    }
    if (options.dryRun === true) return clone(old);
    return clone(this.commit('DELETED', def, clone(old), old));
  }

  /**
   * Test hook: changes any field directly (status included), as a kubelet or another controller
   * would, without the subresource, validation or concurrency rules. Name, namespace and uid are
   * kept. A change that alters nothing commits nothing.
   */
  mutate(
    ref: ResourceRef,
    namespace: string,
    name: string,
    change: (obj: KubeObject) => void,
  ): KubeObject {
    const def = this.definition(ref);
    const old = this.mustGet(def, namespace, name);
    const next = clone(old);
    change(next);
    next.metadata = {
      ...next.metadata,
      name: old.metadata.name ?? name,
      uid: old.metadata.uid ?? '',
      resourceVersion: old.metadata.resourceVersion ?? '',
    };
    if (old.metadata.namespace !== undefined) next.metadata.namespace = old.metadata.namespace;
    return this.commitIfChanged(def, old, next);
  }

  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Events after `resourceVersion`, oldest first; 410 Expired when the history no longer has them. */
  eventsAfter(resourceVersion: number): readonly StoreEvent[] {
    if (resourceVersion < this.floor) throw expired(resourceVersion, this.floor);
    let lo = 0;
    let hi = this.history.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.history[mid]?.resourceVersion ?? 0) <= resourceVersion) lo = mid + 1;
      else hi = mid;
    }
    return this.history.slice(lo);
  }

  /** Forgets the whole history, like an etcd compaction at the current revision. */
  compact(): void {
    this.history = [];
    this.floor = this.revision;
  }

  private namespaceExists(namespace: string): boolean {
    const namespaces = this.objects.get(resourceId(NAMESPACES));
    return namespaces === undefined || namespaces.has(objectKey('', namespace));
  }

  private bucket(ref: ResourceRef): Map<string, KubeObject> {
    const bucket = this.objects.get(resourceId(ref));
    if (bucket === undefined)
      throw new ApiError(404, 'NotFound', `unknown resource ${resourceId(ref)}`);
    return bucket;
  }

  private mustGet(def: ResourceDef, namespace: string, name: string): KubeObject {
    this.checkScope(def, namespace);
    const found = this.bucket(def).get(objectKey(namespace, name));
    if (found === undefined) throw notFound(def, name);
    return found;
  }

  private checkScope(def: ResourceDef, namespace: string): void {
    if (def.namespaced && namespace === '')
      throw badRequest(`${def.resource} is namespaced: a namespace is required`);
    if (!def.namespaced && namespace !== '') throw unknownNamespacedPath(def);
  }

  private generateName(def: ResourceDef, meta: ObjectMeta): string {
    if (meta.generateName === undefined || meta.generateName === '') {
      throw invalid(def, '', 'metadata.name: Required value: name or generateName is required');
    }
    let n = this.generatedNames++;
    let suffix = '';
    for (let i = 0; i < 5; i++) {
      suffix += NAME_ALPHABET[n % NAME_ALPHABET.length] ?? '';
      n = Math.floor(n / NAME_ALPHABET.length);
    }
    return meta.generateName + suffix;
  }

  /** The rules shared by PUT and PATCH, on the main resource or its status. */
  private replace(
    def: ResourceDef,
    old: KubeObject,
    candidate: KubeObject,
    options: WriteOptions,
  ): KubeObject {
    const name = old.metadata.name ?? '';
    const requested = candidate.metadata.resourceVersion;
    if (requested !== undefined && requested !== '' && requested !== old.metadata.resourceVersion) {
      throw conflict(def, name);
    }
    let next: KubeObject;
    if (options.subresource === 'resize') {
      next = withResources(old, candidate);
    } else if (options.subresource === 'status') {
      next = clone(old);
      // Built-in kinds (pod, namespace) take metadata changes on /status too: their status
      // strategies reset only the spec. A custom resource's /status changes only .status.
      if (!def.custom) next.metadata = keepOwned(old, candidate.metadata, STATUS_WRITE_OWNED);
      const status = candidate['status'];
      if (status === undefined) delete next['status'];
      else next['status'] = status;
    } else {
      next = { ...candidate, apiVersion: apiVersionOf(def), kind: def.kind };
      next.metadata = keepOwned(old, candidate.metadata, OWNED);
      if (def.statusSubresource) {
        const status = old['status'];
        if (status === undefined) delete next['status'];
        else next['status'] = clone(status);
      }
      const problem = def.validateUpdate?.(old, next);
      if (problem !== undefined) throw invalid(def, name, problem);
    }
    checkSchema(def, next);
    next.metadata.resourceVersion = old.metadata.resourceVersion ?? '';
    if (options.dryRun === true) return next;
    return this.commitIfChanged(def, old, next);
  }

  private commitIfChanged(def: ResourceDef, old: KubeObject, next: KubeObject): KubeObject {
    // The API server does not write (nor bump resourceVersion) when an update changes nothing.
    if (jsonEqual(old, next)) return clone(old);
    if (!jsonEqual(withoutMetaAndStatus(old), withoutMetaAndStatus(next))) {
      next.metadata.generation = (old.metadata.generation ?? 0) + 1;
    }
    return clone(this.commit('MODIFIED', def, next, old));
  }

  private commit(
    type: ChangeType,
    def: ResourceDef,
    obj: KubeObject,
    old: KubeObject | undefined,
  ): KubeObject {
    this.revision++;
    obj.metadata.resourceVersion = String(this.revision);
    deepFreeze(obj);
    const key = objectKey(obj.metadata.namespace ?? '', obj.metadata.name ?? '');
    if (type === 'DELETED') this.bucket(def).delete(key);
    else this.bucket(def).set(key, obj);
    const event: StoreEvent = {
      type,
      resource: def,
      object: obj,
      oldObject: old,
      resourceVersion: this.revision,
    };
    this.history.push(event);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.floor = dropped.at(-1)?.resourceVersion ?? this.floor;
    }
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err: unknown) {
        // A listener is a test's invariant check: surface its failure instead of failing this write.
        queueMicrotask(() => {
          throw err;
        });
      }
    }
    return obj;
  }
}

function unknownNamespacedPath(def: ResourceDef): ApiError {
  return new ApiError(
    404,
    'NotFound',
    `${def.resource} is cluster-scoped: no namespace in its path`,
  );
}

function encodeContinue(key: string): string {
  return Buffer.from(JSON.stringify({ key }), 'utf8').toString('base64url');
}

function decodeContinue(token: string): string {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (isJsonObject(parsed) && typeof parsed['key'] === 'string') return parsed['key'];
  } catch {
    // fall through to the error below
  }
  throw badRequest('continue key is not valid');
}

/** Metadata the server owns: a client cannot change it by update or patch. */
const OWNED: readonly (keyof ObjectMeta)[] = [
  'name',
  'namespace',
  'uid',
  'creationTimestamp',
  'generation',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
];
/** A status write also keeps these (kubernetes pkg/registry/core/pod/strategy.go). */
const STATUS_WRITE_OWNED: readonly (keyof ObjectMeta)[] = [...OWNED, 'ownerReferences'];

/** The client's metadata, with the `owned` fields as they were. */
function keepOwned(
  old: KubeObject,
  metadata: ObjectMeta,
  owned: readonly (keyof ObjectMeta)[],
): ObjectMeta {
  const next: ObjectMeta = { ...metadata };
  for (const field of owned) {
    const value = old.metadata[field];
    if (value === undefined) delete next[field];
    else next[field] = value;
  }
  return next;
}

/** 422 with the API server's wording when the object fails its resource's schema. */
function checkSchema(def: ResourceDef, obj: KubeObject): void {
  const problems = def.validate?.(obj) ?? [];
  if (problems.length === 0) return;
  const name = obj.metadata.name ?? '';
  throw invalid(
    def,
    name,
    problems.length === 1 ? (problems[0] ?? '') : `[${problems.join(', ')}]`,
  );
}

/**
 * pods/resize: the old pod with each container's and init container's `resources` taken from
 * the candidate (matched by name); everything else the candidate says is ignored.
 */
function withResources(old: KubeObject, candidate: KubeObject): KubeObject {
  const next = clone(old);
  const spec = next['spec'];
  const wanted = candidate['spec'];
  if (!isJsonObject(spec) || !isJsonObject(wanted)) return next;
  for (const list of ['containers', 'initContainers']) {
    const from = wanted[list];
    const to = spec[list];
    if (!Array.isArray(from) || !Array.isArray(to)) continue;
    for (const container of to) {
      if (!isJsonObject(container)) continue;
      const match = from.find((c) => isJsonObject(c) && c['name'] === container['name']);
      if (!isJsonObject(match)) continue;
      const resources = match['resources'];
      if (resources === undefined) delete container['resources'];
      else container['resources'] = resources;
    }
  }
  return next;
}
