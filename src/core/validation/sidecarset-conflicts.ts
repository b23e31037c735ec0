/**
 * UPDATE-only container rules and conflicts with other SidecarSets, as OpenKruise's
 * pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go has them.
 */
import type { LabelSelector, Volume } from '../k8s-types.js';
import type { SidecarContainer, SidecarSet } from '../sidecarset-types.js';
import type { FieldError } from './field-error.js';
import { invalid } from './field-error.js';
import { NAMESPACE_NAME_LABEL, SIDECARSET_BASE, SIDECARSET_CANARY } from '../annotations.js';
import { deepEqual } from '../json.js';
import { isSelectorOverlapping } from './selector-overlap.js';

/** Containers cannot be added or renamed on UPDATE, and upgradeType is immutable. */
export function validateContainerUpdate(
  next: readonly Readonly<SidecarContainer>[],
  old: readonly Readonly<SidecarContainer>[],
): FieldError[] {
  const oldTypes = new Map(old.map((c) => [c.name, c.upgradeStrategy?.upgradeType ?? '']));
  const errs: FieldError[] = [];
  for (const c of next) {
    const before = oldTypes.get(c.name);
    if (before === undefined) {
      errs.push(invalid('spec.containers.name', c.name, `container ${c.name} is not found`));
    } else if (before !== '' && (c.upgradeStrategy?.upgradeType ?? '') !== before) {
      errs.push(
        invalid(
          'spec.containers.upgradeStrategy.upgradeType',
          c.name,
          `container ${c.name} upgradeType is immutable`,
        ),
      );
    }
  }
  return errs;
}

/** The namespace scope as a selector; `spec.namespace` is the v1beta1 conversion's selector. */
export function effectiveNamespaceSelector(ss: Readonly<SidecarSet>): LabelSelector | undefined {
  const ns = ss.spec.namespace ?? '';
  return ns !== '' ? { matchLabels: { [NAMESPACE_NAME_LABEL]: ns } } : ss.spec.namespaceSelector;
}

/** Two SidecarSets can select a common pod: namespaces (nil = all) and selectors overlap. */
export function sidecarSetsOverlap(a: Readonly<SidecarSet>, b: Readonly<SidecarSet>): boolean {
  const nsA = effectiveNamespaceSelector(a);
  const nsB = effectiveNamespaceSelector(b);
  if (nsA !== undefined && nsB !== undefined && !isSelectorOverlapping(nsA, nsB)) return false;
  return isSelectorOverlapping(a.spec.selector ?? {}, b.spec.selector ?? {});
}

function canaryBaseOf(ss: Readonly<SidecarSet>): string | undefined {
  const a = ss.metadata.annotations ?? {};
  const base = a[SIDECARSET_BASE] ?? '';
  return a[SIDECARSET_CANARY] === 'true' && base !== '' ? base : undefined;
}

interface OtherPatch {
  set: string;
  policy: string;
}

interface OthersIndex {
  initIn: Map<string, string>;
  containerIn: Map<string, string>;
  volumeIn: Map<string, { owner: string; volume: Readonly<Volume> }>;
  annotationIn: Map<string, OtherPatch>;
}

/** Name → owning other SidecarSet; a later other overwrites an earlier one, as upstream. */
function indexOthers(others: readonly Readonly<SidecarSet>[]): OthersIndex {
  const idx: OthersIndex = {
    initIn: new Map(),
    containerIn: new Map(),
    volumeIn: new Map(),
    annotationIn: new Map(),
  };
  for (const o of others) {
    const owner = o.metadata.name ?? '';
    for (const c of o.spec.initContainers ?? []) idx.initIn.set(c.name, owner);
    for (const c of o.spec.containers ?? []) idx.containerIn.set(c.name, owner);
    for (const v of o.spec.volumes ?? []) {
      idx.volumeIn.set(v.name, { owner, volume: firstVolume(o, v.name) ?? v });
    }
    for (const patch of o.spec.patchPodMetadata ?? []) {
      const policy = patch.patchPolicy ?? '';
      if (policy === 'Retain') continue;
      for (const key of Object.keys(patch.annotations ?? {})) {
        idx.annotationIn.set(key, { set: owner, policy });
      }
    }
  }
  return idx;
}

/**
 * Conflicts with every overlapping other SidecarSet, except one with the same name and, for a
 * canary, its base. When several others declare the same name, the last one listed is reported.
 *
 * Only others that share a container, init container, volume or annotation name with `ss` can
 * conflict with it, so they are found through an index of `all` by those names rather than by
 * comparing `ss` with every other (issue 15: 3,000 SidecarSets took seconds). The index is built
 * once per `all` array and reused while its length is unchanged: treat `all` as immutable.
 */
export function validateCrossSidecarSetConflicts(
  ss: Readonly<SidecarSet>,
  all: readonly Readonly<SidecarSet>[],
): FieldError[] {
  const name = ss.metadata.name ?? '';
  const base = canaryBaseOf(ss);
  const byKey = conflictIndex(all);
  const positions = new Set<number>();
  for (const key of conflictKeys(ss)) for (const p of byKey.get(key) ?? []) positions.add(p);
  const candidates = [...positions]
    .sort((x, y) => x - y)
    .flatMap((p) => all[p] ?? [])
    .filter(
      (o) => o.metadata.name !== name && o.metadata.name !== base && sidecarSetsOverlap(ss, o),
    );
  return conflictsWithOverlapping(ss, candidates);
}

/** Errors of `ss` against the others that overlap it, listed in their original order. */
export function conflictsWithOverlapping(
  ss: Readonly<SidecarSet>,
  overlapping: readonly Readonly<SidecarSet>[],
): FieldError[] {
  const idx = indexOthers(overlapping);
  const errs: FieldError[] = [];
  const check = (c: Readonly<SidecarContainer>, names: ReadonlyMap<string, string>): void => {
    const owner = names.get(c.name);
    if (owner !== undefined) {
      errs.push(
        invalid('spec.containers', c.name, `container ${c.name} already exist in ${owner}`),
      );
    }
  };
  for (const c of ss.spec.initContainers ?? []) check(c, idx.initIn);
  for (const c of ss.spec.containers ?? []) check(c, idx.containerIn);
  for (const v of ss.spec.volumes ?? []) {
    const theirs = idx.volumeIn.get(v.name);
    if (theirs !== undefined && !deepEqual(v, theirs.volume)) {
      errs.push(
        invalid(
          'spec.volumes',
          v.name,
          `volume ${v.name} is in conflict with sidecarset ${theirs.owner}`,
        ),
      );
    }
  }
  errs.push(...annotationConflicts(ss, idx.annotationIn));
  return errs;
}

/**
 * Every name through which `ss` can conflict or be conflicted with: exactly the names indexOthers
 * records and conflictsWithOverlapping looks up, each tagged with its kind.
 */
function conflictKeys(ss: Readonly<SidecarSet>): string[] {
  const keys = [
    ...(ss.spec.initContainers ?? []).map((c) => `init\u0000${c.name}`),
    ...(ss.spec.containers ?? []).map((c) => `container\u0000${c.name}`),
    ...(ss.spec.volumes ?? []).map((v) => `volume\u0000${v.name}`),
  ];
  for (const patch of ss.spec.patchPodMetadata ?? []) {
    if ((patch.patchPolicy ?? '') === 'Retain') continue;
    for (const key of Object.keys(patch.annotations ?? {})) keys.push(`annotation\u0000${key}`);
  }
  return keys;
}

interface ConflictIndex {
  length: number;
  /** Conflict key → positions in `all` of the SidecarSets that have it, ascending. */
  byKey: Map<string, number[]>;
}

const conflictIndexes = new WeakMap<readonly Readonly<SidecarSet>[], ConflictIndex>();

function conflictIndex(all: readonly Readonly<SidecarSet>[]): ReadonlyMap<string, number[]> {
  const cached = conflictIndexes.get(all);
  if (cached !== undefined && cached.length === all.length) return cached.byKey;
  const byKey = new Map<string, number[]>();
  all.forEach((o, p) => {
    for (const key of conflictKeys(o)) {
      const list = byKey.get(key);
      if (list === undefined) byKey.set(key, [p]);
      else if (list[list.length - 1] !== p) list.push(p);
    }
  });
  conflictIndexes.set(all, { length: all.length, byKey });
  return byKey;
}

function annotationConflicts(
  ss: Readonly<SidecarSet>,
  annotationIn: ReadonlyMap<string, OtherPatch>,
): FieldError[] {
  const errs: FieldError[] = [];
  for (const patch of ss.spec.patchPodMetadata ?? []) {
    const policy = patch.patchPolicy ?? '';
    if (policy === 'Retain') continue;
    for (const key of Object.keys(patch.annotations ?? {}).sort()) {
      const other = annotationIn.get(key);
      if (other !== undefined && (policy === 'Overwrite' || other.policy === 'Overwrite')) {
        errs.push(
          invalid(
            'spec.patchPodMetadata',
            key,
            `annotation ${key} is in conflict with sidecarset ${other.set}`,
          ),
        );
      }
    }
  }
  return errs;
}

/** Upstream compares with the first volume of that name in the owning SidecarSet. */
function firstVolume(ss: Readonly<SidecarSet>, name: string): Readonly<Volume> | undefined {
  return (ss.spec.volumes ?? []).find((v) => v.name === name);
}
