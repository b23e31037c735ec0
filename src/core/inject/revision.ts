/** injectionStrategy.revision: which version of a SidecarSet a new pod gets (OpenKruise pkg/webhook/pod/mutating/sidecarset.go). */
import { SIDECARSET_HASH, SIDECARSET_HASH_WITHOUT_IMAGE } from '../api/annotations.js';
import { SidecarSetError } from '../errors.js';
import { computeSidecarSetHash, computeSidecarSetHashWithoutImage } from '../api/hash.js';
import type { Pod } from '../api/k8s-types.js';
import { selectorMatchesAll } from '../matching/selector.js';
import type { SidecarSet, SidecarSetRevision } from '../api/sidecarset-types.js';

/** The stored revisions of one SidecarSet, any order. */
export type RevisionLookup = (sidecarSetName: string) => readonly SidecarSetRevision[];

export interface VersionChoice {
  sidecarSet: SidecarSet;
  /** The revision injected, when it is not the current spec. */
  revisionName?: string;
}

export interface VersionOptions {
  revisions: RevisionLookup;
  /** Uniform in [0, 1); decides Partial injection. */
  random: () => number;
}

export function chooseVersion(
  ss: SidecarSet,
  pod: Readonly<Pod>,
  options: VersionOptions,
): VersionChoice {
  const revision = ss.spec.injectionStrategy?.revision;
  if (revision?.revisionName === undefined && revision?.customVersion === undefined) {
    return { sidecarSet: ss };
  }
  const historical = findRevision(ss, options.revisions(ss.metadata.name ?? ''));
  const useHistory = (): VersionChoice => ({
    sidecarSet: fromRevision(ss, historical),
    revisionName: historical.name,
  });
  const strategy = ss.spec.updateStrategy;
  if (strategy?.paused === true || revision.policy !== 'Partial') return useHistory();
  if (strategy?.selector !== undefined) {
    if (!selectorMatchesAll(strategy.selector, pod.metadata.labels ?? {})) return useHistory();
  }
  return options.random() < partitionFraction(strategy?.partition)
    ? useHistory()
    : { sidecarSet: ss };
}

function findRevision(
  ss: SidecarSet,
  revisions: readonly SidecarSetRevision[],
): SidecarSetRevision {
  const wanted = ss.spec.injectionStrategy?.revision;
  const found =
    wanted?.revisionName !== undefined
      ? revisions.find((r) => r.name === wanted.revisionName)
      : revisions
          .filter((r) => r.customVersion === wanted?.customVersion)
          .reduce<SidecarSetRevision | undefined>(
            (newest, r) => (newest === undefined || r.revision > newest.revision ? r : newest),
            undefined,
          );
  if (found === undefined) {
    const what = wanted?.revisionName ?? `customVersion ${wanted?.customVersion ?? ''}`;
    throw new SidecarSetError(
      'SI_ERR_REVISION_NOT_FOUND',
      `SidecarSet ${ss.metadata.name ?? ''}: revision ${what} not found`,
    );
  }
  return found;
}

/**
 * The SidecarSet as it was at that revision: its injected parts replaced wholesale, and the hashes
 * the revision recorded, or, when it recorded none, those of its spec (OpenKruise
 * restoreRevisionInfo, pkg/control/sidecarcontrol/history_control.go).
 */
function fromRevision(ss: SidecarSet, revision: SidecarSetRevision): SidecarSet {
  const spec = { ...ss.spec };
  delete spec.containers;
  delete spec.initContainers;
  delete spec.volumes;
  delete spec.imagePullSecrets;
  delete spec.patchPodMetadata;
  Object.assign(spec, structuredClone(revision.spec));
  const stored = (key: string): string | undefined => revision.annotations?.[key] || undefined;
  const annotations = {
    ...ss.metadata.annotations,
    [SIDECARSET_HASH]: stored(SIDECARSET_HASH) ?? computeSidecarSetHash(spec),
    [SIDECARSET_HASH_WITHOUT_IMAGE]:
      stored(SIDECARSET_HASH_WITHOUT_IMAGE) ?? computeSidecarSetHashWithoutImage(spec),
  };
  return { ...ss, metadata: { ...ss.metadata, annotations }, spec };
}

/** A percentage partition as a fraction; an integer or unset partition counts as 0%. */
function partitionFraction(partition: number | string | undefined): number {
  if (typeof partition !== 'string') return 0;
  const m = /^(\d+)%$/.exec(partition);
  if (m?.[1] === undefined) {
    throw new SidecarSetError(
      'SI_ERR_BAD_PERCENT',
      `updateStrategy.partition ${partition} is not a valid percentage`,
    );
  }
  return Number(m[1]) / 100;
}
