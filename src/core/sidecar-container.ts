/** A SidecarContainer is a core/v1 Container plus fields that never reach a pod. */
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
