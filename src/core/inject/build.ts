/** Builds the containers one SidecarSet injects into one pod (OpenKruise buildSidecars, pkg/webhook/pod/mutating/sidecarset.go). */
import { versionAltAnnotation, versionAnnotation } from '../api/annotations.js';
import type { JsonObject } from '../encoding/json.js';
import { cloneJson } from '../encoding/json.js';
import type { Container, EnvVar, LocalObjectReference, Pod, Volume } from '../api/k8s-types.js';
import type { SidecarContainer, SidecarSet } from '../api/sidecarset-types.js';
import { inApiFieldOrder, stripSidecarFields } from '../api/sidecar-container.js';
import { assembleEnv, transferEnv } from './env.js';
import type { JobSidecarMode } from './job-sidecars.js';
import { becomesNativeSidecar } from './job-sidecars.js';
import type { BuiltContainer } from './merge.js';
import { applyResourcesPolicy } from './resources-policy.js';
import type { AppMounts } from './shared-volumes.js';
import { mergeDevices, mergeMounts } from './shared-volumes.js';

/** What the pod looked like before injection: the sources of shared mounts and env. */
export interface PodSources {
  pod: Readonly<Pod>;
  appEnv: ReadonlyMap<string, EnvVar>;
  appMounts: AppMounts;
  /** Container names declared by all the SidecarSets injected: never resourcesPolicy targets. */
  sidecarSetContainers: ReadonlySet<string>;
}

export interface BuiltSidecarSet {
  initContainers: BuiltContainer[];
  containers: BuiltContainer[];
  /** Containers that stop with a Job, as native sidecars for the end of the init containers. */
  jobSidecars: BuiltContainer[];
  volumes: Volume[];
  imagePullSecrets: LocalObjectReference[];
  sidecarList: string[];
  /** Hot-upgrade pairs: SidecarSet container name → the working pod container name. */
  hotUpgrade: Record<string, string>;
  warnings: string[];
}

export function buildSidecarSet(
  ss: SidecarSet,
  sources: PodSources,
  jobSidecars: JobSidecarMode = 'native',
): BuiltSidecarSet {
  const out: BuiltSidecarSet = {
    initContainers: [],
    containers: [],
    jobSidecars: [],
    volumes: [],
    imagePullSecrets: cloneJson(ss.spec.imagePullSecrets ?? []),
    sidecarList: [],
    hotUpgrade: {},
    warnings: [],
  };
  for (const sc of ss.spec.initContainers ?? []) {
    const native = sc.restartPolicy === 'Always';
    if (native) out.sidecarList.push(sc.name);
    emit(out, { list: out.initContainers, sc, hot: native && isHot(sc), ss, sources });
  }
  for (const sc of ss.spec.containers ?? []) {
    out.sidecarList.push(sc.name);
    emit(out, { list: out.containers, sc, hot: isHot(sc), ss, sources, jobSidecars });
  }
  out.sidecarList = [...new Set(out.sidecarList)].sort();
  return out;
}

const isHot = (sc: SidecarContainer): boolean => sc.upgradeStrategy?.upgradeType === 'HotUpgrade';

interface Emission {
  list: BuiltContainer[];
  sc: SidecarContainer;
  hot: boolean;
  ss: SidecarSet;
  sources: PodSources;
  /** Set for spec.containers only: whether one may become a native sidecar (job-sidecars.ts). */
  jobSidecars?: JobSidecarMode;
}

function emit(out: BuiltSidecarSet, { list, sc, hot, ss, sources, jobSidecars }: Emission): void {
  const before = sc.podInjectPolicy === 'BeforeAppContainer';
  const container = buildContainer(sc, ss, sources, out.warnings);
  out.volumes.push(...referencedVolumes(sc, ss, out.warnings));
  if (
    jobSidecars !== undefined &&
    becomesNativeSidecar(container, hot, { mode: jobSidecars, pod: sources.pod }, out.warnings)
  ) {
    out.jobSidecars.push({
      container: inApiFieldOrder({ ...container, restartPolicy: 'Always' }),
      before,
    });
    return;
  }
  if (!hot) {
    list.push({ container, before });
    return;
  }
  for (const [suffix, image] of [
    ['-1', container.image],
    ['-2', sc.upgradeStrategy?.hotUpgradeEmptyImage],
  ] as const) {
    const name = `${sc.name}${suffix}`;
    const twin: Container = { ...cloneJson(container), name };
    if (image) twin.image = image;
    else delete twin.image;
    twin.env = [...(twin.env ?? []), ...hotUpgradeVersionEnv(name)];
    list.push({ container: twin, before });
  }
  out.hotUpgrade[sc.name] = `${sc.name}-1`;
}

function buildContainer(
  sc: SidecarContainer,
  ss: SidecarSet,
  sources: PodSources,
  warnings: string[],
): Container {
  const container = cloneJson(stripSidecarFields(sc));
  if (sc.resourcesPolicy !== undefined) {
    applyResourcesPolicy(container, sc.resourcesPolicy, {
      ...sources,
      sidecarSet: ss.metadata.name,
    });
  }
  const transferred = transferEnv(sc.transferEnv ?? [], sources.pod, sources.appEnv);
  warnings.push(...transferred.warnings.map((w) => `container ${sc.name}: ${w}`));
  const env = transferred.env;
  const ownMounts = sc.volumeMounts ?? [];
  const ownDevices = sc.volumeDevices ?? [];
  let mounts = ownMounts;
  if (sc.shareVolumePolicy?.type === 'enabled') {
    mounts = mergeMounts(ownMounts, ownDevices, sources.appMounts.mounts);
    const names = new Set(env.map((e) => e.name));
    for (const e of sources.appMounts.subPathEnv) {
      if (!names.has(e.name)) env.push(e);
      names.add(e.name);
    }
  }
  if (mounts.length > 0) container.volumeMounts = cloneJson(mounts);
  container.env = assembleEnv(container.env ?? [], env);
  if (sc.shareVolumeDevicePolicy?.type === 'enabled') {
    const devices = mergeDevices(ownDevices, mounts, sources.appMounts.devices);
    if (devices.length > 0) container.volumeDevices = devices;
  }
  return inApiFieldOrder(container);
}

/** The SidecarSet volumes the container's own mounts and devices name, in that order. */
function referencedVolumes(sc: SidecarContainer, ss: SidecarSet, warnings: string[]): Volume[] {
  const names = [
    ...(sc.volumeMounts ?? []).map((m) => m.name),
    ...(sc.volumeDevices ?? []).map((d) => d.name),
  ];
  const out: Volume[] = [];
  for (const name of names) {
    const volume = (ss.spec.volumes ?? []).find((v) => v.name === name);
    if (volume === undefined) {
      warnings.push(`container ${sc.name} uses volume ${name}, which SidecarSet does not declare`);
    } else out.push(volume);
  }
  return out;
}

function hotUpgradeVersionEnv(containerName: string): EnvVar[] {
  const ref = (key: string): JsonObject => ({
    fieldRef: { fieldPath: `metadata.annotations['${key}']` },
  });
  return [
    { name: 'SIDECARSET_VERSION', valueFrom: ref(versionAnnotation(containerName)) },
    { name: 'SIDECARSET_VERSION_ALT', valueFrom: ref(versionAltAnnotation(containerName)) },
  ];
}
