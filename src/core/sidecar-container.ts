/** A SidecarContainer is a core/v1 Container plus fields that never reach a pod. */
import { CONTAINER } from './go-container-fields.js';
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

/** The plain container, as it goes into a pod (a shallow copy). */
export function stripSidecarFields(c: Readonly<Container>): Container {
  const out: Container = { ...c };
  for (const f of SIDECAR_ONLY_FIELDS) Reflect.deleteProperty(out, f);
  return out;
}

const FIELD_ORDER = CONTAINER.fields.map((f) => f.json);

/** The same container with its keys in core/v1 order (fields unknown to it last), for people. */
export function inApiFieldOrder(c: Readonly<Container>): Container {
  const out: Record<string, unknown> = {};
  for (const key of FIELD_ORDER) if (c[key] !== undefined) out[key] = c[key];
  for (const [key, value] of Object.entries(c)) if (!(key in out)) out[key] = value;
  return out as Container;
}
