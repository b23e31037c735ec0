/** A SidecarContainer is a core/v1 Container plus fields that never reach a pod. */
import { CONTAINER } from '../encoding/go-container-fields.js';
import { setOwn } from '../encoding/json.js';
import type { Container } from './k8s-types.js';

/** Fields that a SidecarContainer adds to core/v1 Container. */
export const SIDECAR_ONLY_FIELDS = [
  'podInjectPolicy',
  'upgradeStrategy',
  'shareVolumePolicy',
  'shareVolumeDevicePolicy',
  'transferEnv',
  'resourcesPolicy',
] as const;

const SIDECAR_ONLY = new Set<string>(SIDECAR_ONLY_FIELDS);

/**
 * The plain container, as it goes into a pod (a shallow copy). Built key by key rather than by
 * deleting from a copy: deleting properties turns an object into a slow dictionary.
 */
export function stripSidecarFields(c: Readonly<Container>): Container {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(c)) if (!SIDECAR_ONLY.has(key)) setOwn(out, key, c[key]);
  return out as Container;
}

/** core/v1 Container fields → their position in the Go struct. */
const FIELD_RANK = new Map(CONTAINER.fields.map((f, i) => [f.json, i]));

/**
 * The same container with its keys in core/v1 order (fields unknown to it last), for people.
 * Known fields set to undefined count as unknown ones: they keep their place among those.
 */
export function inApiFieldOrder(c: Readonly<Container>): Container {
  const known: string[] = [];
  const rest: string[] = [];
  for (const key of Object.keys(c)) {
    if (c[key] !== undefined && FIELD_RANK.has(key)) known.push(key);
    else rest.push(key);
  }
  // A handful of keys, usually in order already: the sort is cheap.
  known.sort((a, b) => (FIELD_RANK.get(a) ?? 0) - (FIELD_RANK.get(b) ?? 0));
  const out: Record<string, unknown> = {};
  for (const key of known) out[key] = c[key];
  for (const key of rest) out[key] = c[key];
  return out as Container;
}
