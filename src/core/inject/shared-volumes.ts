/** shareVolumePolicy / shareVolumeDevicePolicy: mounts the sidecar takes from app containers. */
import { cloneJson } from '../encoding/json.js';
import type { Container, EnvVar, Pod, VolumeDevice, VolumeMount } from '../api/k8s-types.js';
import { isAppContainer } from './env.js';
import { appendUnique } from './merge.js';

const SUBPATH_VAR = /\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)/g;

export interface AppMounts {
  mounts: VolumeMount[];
  devices: VolumeDevice[];
  /** Env vars that the app mounts' subPathExpr refer to, copied from the same container. */
  subPathEnv: EnvVar[];
}

/** Every mount and device of the pod's app containers, in order. */
export function collectAppMounts(pod: Readonly<Pod>, sidecarNames: ReadonlySet<string>): AppMounts {
  const out: AppMounts = { mounts: [], devices: [], subPathEnv: [] };
  for (const c of pod.spec.containers) {
    if (!isAppContainer(c, sidecarNames)) continue;
    for (const m of c.volumeMounts ?? []) {
      out.mounts.push(m);
      out.subPathEnv.push(...subPathEnv(m, c));
    }
    out.devices.push(...(c.volumeDevices ?? []));
  }
  return out;
}

/**
 * The env vars `$(NAME)` in the mount's subPathExpr names; of a repeated name the first, as
 * OpenKruise's util.GetContainerEnvVar takes it (transferEnv, by contrast, takes the last).
 */
function subPathEnv(mount: VolumeMount, container: Container): EnvVar[] {
  if (!mount.subPathExpr) return [];
  const env: EnvVar[] = [];
  for (const ref of mount.subPathExpr.matchAll(SUBPATH_VAR)) {
    const found = (container.env ?? []).find((e) => e.name === ref[1]);
    if (found !== undefined) env.push(cloneJson(found));
  }
  return env;
}

/** Own mounts first; then each app mount whose path is not taken (by a mount or a device). */
export function mergeMounts(
  own: readonly VolumeMount[],
  ownDevices: readonly VolumeDevice[],
  shared: readonly VolumeMount[],
): VolumeMount[] {
  return appendUnique(
    own,
    shared,
    (m) => m.mountPath,
    ownDevices.map((d) => d.devicePath),
  );
}

/** Own devices first; then each app device whose path is not taken (by a device or a mount). */
export function mergeDevices(
  own: readonly VolumeDevice[],
  mounts: readonly VolumeMount[],
  shared: readonly VolumeDevice[],
): VolumeDevice[] {
  return appendUnique(
    own,
    shared,
    (d) => d.devicePath,
    mounts.map((m) => m.mountPath),
  );
}
