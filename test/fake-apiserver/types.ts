import type { JsonObject } from './json.js';

export interface ObjectMeta extends JsonObject {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** Any object the fake stores: plain JSON with metadata. */
export interface KubeObject extends JsonObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

/** Identifies a resource type the way the REST paths do: group ('' for core), version, plural. */
export interface ResourceRef {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

export const WATCH_EVENT_TYPES = ['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'] as const;
export type WatchEventType = (typeof WATCH_EVENT_TYPES)[number];
export type ChangeType = Extract<WatchEventType, 'ADDED' | 'MODIFIED' | 'DELETED'>;

export const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
} as const;
export type PatchType = (typeof PATCH_TYPES)[keyof typeof PATCH_TYPES];
