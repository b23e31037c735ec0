import { apiVersionOf } from './resources.js';
import type { ResourceDef } from './resources.js';
import type { JsonObject } from './json.js';

export const VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] as const;
export type Verb = (typeof VERBS)[number];

export interface ResourceRoute {
  readonly kind: 'resource';
  readonly resource: ResourceDef;
  /** '' for cluster-scoped resources and for lists across all namespaces. */
  readonly namespace: string;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
}

export interface DiscoveryRoute {
  readonly kind: 'discovery';
  readonly body: JsonObject;
}

export type Route = ResourceRoute | DiscoveryRoute;

function findResource(
  resources: readonly ResourceDef[],
  group: string,
  version: string,
  plural: string | undefined,
): ResourceDef | undefined {
  return resources.find((r) => r.group === group && r.version === version && r.resource === plural);
}

function resourceList(
  resources: readonly ResourceDef[],
  group: string,
  version: string,
): JsonObject {
  const served = resources.filter((r) => r.group === group && r.version === version);
  const verbs = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group === '' ? version : `${group}/${version}`,
    resources: served.flatMap((r) => {
      const main: JsonObject = {
        name: r.resource,
        singularName: r.kind.toLowerCase(),
        namespaced: r.namespaced,
        kind: r.kind,
        verbs,
      };
      const status: JsonObject = {
        name: `${r.resource}/status`,
        singularName: '',
        namespaced: r.namespaced,
        kind: r.kind,
        verbs: ['get', 'patch', 'update'],
      };
      const resize: JsonObject = { ...status, name: `${r.resource}/resize` };
      const eviction: JsonObject = {
        name: `${r.resource}/eviction`,
        singularName: '',
        namespaced: r.namespaced,
        group: 'policy',
        version: 'v1',
        kind: 'Eviction',
        verbs: ['create'],
      };
      return [
        main,
        ...(r.statusSubresource ? [status] : []),
        ...(r.resizeSubresource === true ? [resize] : []),
        ...(r.evictionSubresource === true ? [eviction] : []),
      ];
    }),
  };
}

function groupList(resources: readonly ResourceDef[]): JsonObject {
  const groups = new Map<string, Set<string>>();
  for (const r of resources) {
    if (r.group !== '') groups.set(r.group, (groups.get(r.group) ?? new Set()).add(r.version));
  }
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [...groups].map(([name, versions]) => {
      const list = [...versions].map((version) => ({
        groupVersion: `${name}/${version}`,
        version,
      }));
      return { name, versions: list, preferredVersion: list[0] ?? null };
    }),
  };
}

/** Maps a request path onto a resource (or a discovery document), as the API server's router does. */
export function route(pathname: string, resources: readonly ResourceDef[]): Route | undefined {
  const segments = pathname
    .split('/')
    .filter((s) => s !== '')
    .map(decodeURIComponent);
  if (segments[0] === 'version' && segments.length === 1) {
    return {
      kind: 'discovery',
      body: { major: '1', minor: '31', gitVersion: 'v1.31.0-fake', platform: 'fake' },
    };
  }
  if (segments[0] === 'api' && segments.length === 1) {
    return {
      kind: 'discovery',
      body: { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] },
    };
  }
  if (segments[0] === 'apis' && segments.length === 1)
    return { kind: 'discovery', body: groupList(resources) };
  let group: string;
  let rest: string[];
  if (segments[0] === 'api' && segments[1] !== undefined) {
    group = '';
    rest = segments.slice(1);
  } else if (segments[0] === 'apis' && segments[1] !== undefined && segments[2] !== undefined) {
    group = segments[1];
    rest = segments.slice(2);
  } else {
    return undefined;
  }
  const [version, ...path] = rest;
  if (version === undefined) return undefined;
  if (path.length === 0) {
    const list = resourceList(resources, group, version);
    return Array.isArray(list['resources']) && list['resources'].length > 0
      ? { kind: 'discovery', body: list }
      : undefined;
  }
  const namespaced =
    path[0] === 'namespaces' && path.length >= 3
      ? findResource(resources, group, version, path[2])
      : undefined;
  if (namespaced?.namespaced === true) {
    return resourceRoute(namespaced, path[1] ?? '', path.slice(3));
  }
  const def = findResource(resources, group, version, path[0]);
  if (def === undefined) return undefined;
  const tail = path.slice(1);
  // A namespaced resource without a namespace only has the all-namespaces collection.
  if (def.namespaced && tail.length > 0) return undefined;
  return resourceRoute(def, '', tail);
}

function resourceRoute(
  resource: ResourceDef,
  namespace: string,
  tail: string[],
): ResourceRoute | undefined {
  if (tail.length > 2) return undefined;
  const [name, subresource] = tail;
  const served =
    (subresource === 'status' && resource.statusSubresource) ||
    (subresource === 'resize' && resource.resizeSubresource === true) ||
    (subresource === 'eviction' && resource.evictionSubresource === true);
  if (subresource !== undefined && !served) return undefined;
  return { kind: 'resource', resource, namespace, name, subresource };
}

export function verbOf(method: string, route: ResourceRoute, watch: boolean): Verb | undefined {
  const item = route.name !== undefined;
  // The eviction subresource serves only create (POST).
  if (route.subresource === 'eviction') return method === 'POST' ? 'create' : undefined;
  switch (method) {
    case 'GET':
      if (item) return 'get';
      return watch ? 'watch' : 'list';
    case 'POST':
      return item ? undefined : 'create';
    case 'PUT':
      return item ? 'update' : undefined;
    case 'PATCH':
      return item ? 'patch' : undefined;
    case 'DELETE':
      return item ? 'delete' : undefined;
    default:
      return undefined;
  }
}

export function listKind(def: ResourceDef): JsonObject {
  return { kind: `${def.kind}List`, apiVersion: apiVersionOf(def) };
}
