/**
 * Pod injection: pod in, new pod out (OpenKruise pkg/webhook/pod/mutating/sidecarset.go). The caller has already chosen the
 * SidecarSets that match; this decides versions, builds the sidecars and merges them.
 */
import {
  SIDECARSET_BASE,
  SIDECARSET_CANARY,
  SIDECARSET_HASH,
  SIDECARSET_HASH_WITHOUT_IMAGE,
  SIDECARSET_WORKING_HOTUPGRADE_CONTAINER,
  versionAltAnnotation,
  versionAnnotation,
} from '../api/annotations.js';
import type { WorkingSlots } from '../pod-annotations/hot-upgrade-annotation.js';
import { formatWorkingSlots, readWorkingSlots } from '../pod-annotations/hot-upgrade-annotation.js';
import { compareStrings } from '../encoding/json.js';
import type { Pod } from '../api/k8s-types.js';
import type { SidecarSet } from '../api/sidecarset-types.js';
import type { BuiltSidecarSet } from './build.js';
import { buildSidecarSet } from './build.js';
import { indexAppEnv } from './env.js';
import type { JobSidecarMode } from './job-sidecars.js';
import type { BuiltContainer } from './merge.js';
import { mergeContainers, mergeImagePullSecrets, mergeVolumes } from './merge.js';
import type { InjectedSetRecord } from './pod-annotations.js';
import { recordInjection } from './pod-annotations.js';
import { applyPatchPodMetadata } from './pod-metadata.js';
import { declaredContainerNames } from './resources-policy.js';
import type { VersionOptions } from './revision.js';
import { chooseVersion } from './revision.js';
import { collectAppMounts } from './shared-volumes.js';

export interface InjectOptions extends VersionOptions {
  now: Date;
  /** What becomes of sidecars that stop with a Job (job-sidecars.ts); default native. */
  jobSidecars?: JobSidecarMode;
}

export interface InjectionOutcome {
  /** The injected pod. It shares the parts injection leaves alone with the input pod. */
  pod: Pod;
  /** Names of the SidecarSets injected, sorted. */
  injected: string[];
  warnings: string[];
}

export function injectPod(
  pod: Readonly<Pod>,
  matched: readonly SidecarSet[],
  options: InjectOptions,
): InjectionOutcome {
  const sets = withoutCanaryBases(matched)
    .map((ss) => chooseVersion(ss, pod, options))
    .sort((a, b) =>
      compareStrings(a.sidecarSet.metadata.name ?? '', b.sidecarSet.metadata.name ?? ''),
    );
  const out = podToInjectInto(pod);
  const annotations: Record<string, string> = { ...out.metadata.annotations };
  for (const { sidecarSet } of sets) {
    applyPatchPodMetadata(annotations, sidecarSet.spec.patchPodMetadata ?? []);
  }
  const sidecarNames = containerNames(sets.map((s) => s.sidecarSet));
  const sources = {
    pod,
    appEnv: indexAppEnv(pod, sidecarNames),
    appMounts: collectAppMounts(pod, sidecarNames),
    sidecarSetContainers: declaredContainerNames(sets.map((s) => s.sidecarSet)),
  };
  const built = sets.map(({ sidecarSet, revisionName }) => ({
    sidecarSet,
    revisionName,
    result: buildSidecarSet(sidecarSet, sources, options.jobSidecars),
  }));
  const warnings = built.flatMap((b) => b.result.warnings);
  const records = built
    .filter(
      ({ result: r }) => r.containers.length + r.initContainers.length + r.jobSidecars.length > 0,
    )
    .map(({ sidecarSet, revisionName, result }) => record(sidecarSet, result, revisionName));
  if (records.length > 0) {
    mergeInto(
      out,
      built.map((b) => b.result),
    );
    recordInjection(annotations, records, options.now);
    recordHotUpgrade(
      annotations,
      built.map((b) => b.result),
    );
  }
  if (Object.keys(annotations).length > 0 || out.metadata.annotations !== undefined) {
    out.metadata.annotations = annotations;
  }
  return { pod: out, injected: records.map((r) => r.name), warnings };
}

/**
 * A copy of the pod, its metadata and its spec, one level deep: injection gives them new lists
 * and a new annotations map, and never edits what they held, so the rest stays shared with the
 * input. (A deep copy was an eighth of the webhook's decision on a 5 KB pod, and made the patch
 * compare every app container field by field; bench/admission-core.bench.ts.)
 */
function podToInjectInto(pod: Readonly<Pod>): Pod {
  return { ...pod, metadata: { ...pod.metadata }, spec: { ...pod.spec } };
}

/** Names of the pod containers the SidecarSets inject (both halves of a hot-upgrade pair). */
function containerNames(sets: readonly SidecarSet[]): Set<string> {
  const names = new Set<string>();
  for (const ss of sets) {
    for (const c of ss.spec.containers ?? []) {
      if (c.upgradeStrategy?.upgradeType === 'HotUpgrade') {
        names.add(`${c.name}-1`).add(`${c.name}-2`);
      } else names.add(c.name);
    }
  }
  return names;
}

/** A canary SidecarSet replaces its base for the pods both match (OpenKruise pkg/control/sidecarcontrol/util.go). */
function withoutCanaryBases(matched: readonly SidecarSet[]): SidecarSet[] {
  const bases = new Set(
    matched
      .filter((ss) => ss.metadata.annotations?.[SIDECARSET_CANARY] === 'true')
      .map((ss) => ss.metadata.annotations?.[SIDECARSET_BASE]),
  );
  return matched.filter((ss) => !bases.has(ss.metadata.name));
}

function record(
  ss: SidecarSet,
  built: BuiltSidecarSet,
  revisionName: string | undefined,
): InjectedSetRecord {
  return {
    name: ss.metadata.name ?? '',
    hash: ss.metadata.annotations?.[SIDECARSET_HASH] ?? '',
    hashWithoutImage: ss.metadata.annotations?.[SIDECARSET_HASH_WITHOUT_IMAGE] ?? '',
    sidecarList: built.sidecarList,
    controllerRevision: revisionName ?? ss.status?.latestRevision ?? '',
  };
}

function mergeInto(pod: Pod, built: readonly BuiltSidecarSet[]): void {
  const inits: BuiltContainer[] = built
    .flatMap((b) => b.initContainers)
    .sort((a, b) => compareStrings(a.container.name, b.container.name));
  if (inits.length > 0) {
    pod.spec.initContainers = mergeContainers(pod.spec.initContainers ?? [], inits);
  }
  const jobSidecars = built.flatMap((b) => b.jobSidecars);
  if (jobSidecars.length > 0) {
    pod.spec.initContainers = mergeContainers(
      pod.spec.initContainers ?? [],
      afterEveryInitContainer(jobSidecars),
    );
  }
  pod.spec.containers = mergeContainers(
    pod.spec.containers,
    built.flatMap((b) => b.containers),
  );
  const volumes = mergeVolumes(
    pod.spec.volumes ?? [],
    built.flatMap((b) => b.volumes),
  );
  if (volumes.length > 0) pod.spec.volumes = volumes;
  const secrets = mergeImagePullSecrets(
    pod.spec.imagePullSecrets ?? [],
    built.flatMap((b) => b.imagePullSecrets),
  );
  if (secrets.length > 0) pod.spec.imagePullSecrets = secrets;
}

/**
 * Sidecars that stop with a Job start where they started as regular containers: after every init
 * container, the SidecarSets' included. Among themselves BeforeAppContainer ones come first, as
 * they would in spec.containers (docs/adr/0021-job-sidecars.md).
 */
function afterEveryInitContainer(jobSidecars: readonly BuiltContainer[]): BuiltContainer[] {
  return [...jobSidecars.filter((s) => s.before), ...jobSidecars.filter((s) => !s.before)].map(
    ({ container }) => ({ container, before: false }),
  );
}

function recordHotUpgrade(
  annotations: Record<string, string>,
  built: readonly BuiltSidecarSet[],
): void {
  const working: WorkingSlots = {};
  for (const b of built) Object.assign(working, b.hotUpgrade);
  if (Object.keys(working).length === 0) return;
  const existing = readWorkingSlots(annotations[SIDECARSET_WORKING_HOTUPGRADE_CONTAINER]);
  annotations[SIDECARSET_WORKING_HOTUPGRADE_CONTAINER] = formatWorkingSlots({
    ...existing,
    ...working,
  });
  // Slot 1 works and runs version 1; slot 2 idles on the empty image (OpenKruise's injector).
  for (const sidecar of Object.keys(working)) {
    annotations[versionAnnotation(`${sidecar}-1`)] = '1';
    annotations[versionAltAnnotation(`${sidecar}-1`)] = '0';
    annotations[versionAnnotation(`${sidecar}-2`)] = '0';
    annotations[versionAltAnnotation(`${sidecar}-2`)] = '1';
  }
}
