import type { JsonObject } from './json.js';
import { apiVersionOf, sameResource } from './resources.js';
import type { ResourceDef } from './resources.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import type { ObjectPredicate } from './selectors.js';
import type { ObjectStore, StoreEvent } from './store.js';
import type { KubeObject, WatchEventType } from './types.js';
import { badRequest } from './errors.js';

export interface WatchEvent {
  readonly type: WatchEventType;
  readonly object: JsonObject;
}

export interface WatchRequest {
  readonly resource: ResourceDef;
  /** '' watches every namespace (or a cluster-scoped resource). */
  readonly namespace: string;
  readonly labelSelector?: string | undefined;
  readonly fieldSelector?: string | undefined;
  /** '' or '0': start with ADDED events for the current state, then changes. */
  readonly resourceVersion?: string | undefined;
}

/**
 * What a watcher with selectors sees of one change: an object that starts matching arrives as
 * ADDED and one that stops matching as DELETED, as the API server's watch cache does.
 */
export function toWatchEvent(
  event: StoreEvent,
  def: ResourceDef,
  matches: ObjectPredicate,
): WatchEvent | undefined {
  if (!sameResource(event.resource, def)) return undefined;
  const is = matches(event.object);
  const was = event.oldObject !== undefined && matches(event.oldObject);
  switch (event.type) {
    case 'ADDED':
      return is ? { type: 'ADDED', object: event.object } : undefined;
    case 'DELETED':
      return was || is ? { type: 'DELETED', object: event.object } : undefined;
    case 'MODIFIED':
      if (was && is) return { type: 'MODIFIED', object: event.object };
      if (is) return { type: 'ADDED', object: event.object };
      return was ? { type: 'DELETED', object: event.object } : undefined;
  }
}

export function bookmark(def: ResourceDef, resourceVersion: number): WatchEvent {
  return {
    type: 'BOOKMARK',
    object: {
      kind: def.kind,
      apiVersion: apiVersionOf(def),
      metadata: { resourceVersion: String(resourceVersion) },
    },
  };
}

export function watchPredicate(request: WatchRequest): ObjectPredicate {
  const byLabel = parseLabelSelector(request.labelSelector);
  const byField = parseFieldSelector(request.fieldSelector, request.resource.fieldSelectors);
  const namespace = request.namespace;
  return (obj: KubeObject) =>
    (namespace === '' || obj.metadata.namespace === namespace) && byLabel(obj) && byField(obj);
}

function parseVersion(value: string): number {
  if (!/^\d+$/.test(value))
    throw badRequest(`resourceVersion: Invalid value: "${value}": must be a number`);
  return Number(value);
}

/**
 * Starts a watch on the store: the replay (initial state, or the history after resourceVersion)
 * is delivered synchronously before any live change, so nothing is lost or reordered. Throws the
 * 410 Expired ApiError when the history no longer covers resourceVersion. Returns the unsubscriber.
 */
export function startWatch(
  store: ObjectStore,
  request: WatchRequest,
  send: (event: WatchEvent) => void,
): () => void {
  const def = request.resource;
  const matches = watchPredicate(request);
  const version = request.resourceVersion ?? '';
  let replay: WatchEvent[];
  if (version === '' || version === '0') {
    const current = store.list(def, {
      namespace: request.namespace,
      ...(request.labelSelector === undefined ? {} : { labelSelector: request.labelSelector }),
      ...(request.fieldSelector === undefined ? {} : { fieldSelector: request.fieldSelector }),
    });
    replay = current.items.map((object) => ({ type: 'ADDED', object }));
  } else {
    replay = store
      .eventsAfter(parseVersion(version))
      .map((e) => toWatchEvent(e, def, matches))
      .filter((e) => e !== undefined);
  }
  const unsubscribe = store.subscribe((event) => {
    const out = toWatchEvent(event, def, matches);
    if (out !== undefined) send(out);
  });
  for (const event of replay) send(event);
  return unsubscribe;
}
