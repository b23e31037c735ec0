/**
 * UPDATE-only container rules and conflicts with other SidecarSets, as OpenKruise's
 * pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go has them.
 */
import type { LabelSelector, Volume } from '../api/k8s-types.js';
import type { SidecarContainer, SidecarSet } from '../api/sidecarset-types.js';
import type { FieldError } from './field-error.js';
import { invalid } from './field-error.js';
import { NAMESPACE_NAME_LABEL, SIDECARSET_BASE, SIDECARSET_CANARY } from '../api/annotations.js';
import { deepEqual } from '../encoding/json.js';
import type { KeyValues } from './selector-overlap.js';
import { allowedValues, isSelectorOverlapping } from './selector-overlap.js';

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
function effectiveNamespaceSelector(ss: Readonly<SidecarSet>): LabelSelector | undefined {
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

/**
 * How `ss` sees the SidecarSets it is checked against: for a conflict key (conflictKeys), the last
 * overlapping one that has it, as upstream's name → SidecarSet maps keep the last one written.
 * `sameVolume`: every one of them that declares a volume of that name declares this one, so
 * sharing it conflicts with none, whichever is last.
 */
interface Others {
  ownerOf(key: string): Readonly<SidecarSet> | undefined;
  sameVolume?(volume: Readonly<Volume>): boolean;
}

/**
 * Conflicts with every overlapping other SidecarSet, except one with the same name and, for a
 * canary, its base. When several others declare the same name, the last one listed is reported.
 *
 * Only others that share a container, init container, volume or annotation name with `ss` can
 * conflict with it, and for each name only the last overlapping one counts. So each name is looked
 * up in an index of `all` (issue 15) where its holders are grouped by scope (namespace and pod
 * selectors: one overlap check answers for the whole group) and the groups by their selector's
 * first label, so that a group whose label value `ss`'s selector excludes is never looked at.
 * Many SidecarSets sharing a volume therefore cost about one look-up each, not one comparison with
 * every other (issue 23: 280,000 took over 14 minutes). Overlapping SidecarSets that all declare
 * the same name (and not the same volume) are still each compared: each such pair is a conflict
 * reported anyway. The index is built once per `all` array and reused while its length is
 * unchanged: treat `all` as immutable.
 */
export function validateCrossSidecarSetConflicts(
  ss: Readonly<SidecarSet>,
  all: readonly Readonly<SidecarSet>[],
): FieldError[] {
  const name = ss.metadata.name ?? '';
  const base = canaryBaseOf(ss);
  const index = conflictIndex(all);
  const excluded = (p: number): boolean => {
    const other = all[p]?.metadata.name;
    return other === name || other === base;
  };
  const overlapOf = new Map<ScopeGroup, boolean>();
  const overlaps = (g: ScopeGroup): boolean => {
    let known = overlapOf.get(g);
    if (known === undefined) {
      known = sidecarSetsOverlap(ss, g.sample);
      overlapOf.set(g, known);
    }
    return known;
  };
  let allowed: ReadonlyMap<string, KeyValues> | undefined;
  const allowedBySelector = (): ReadonlyMap<string, KeyValues> =>
    (allowed ??= allowedValues(ss.spec.selector ?? {}));
  return conflictsWith(ss, {
    ownerOf(key) {
      const holders = index.get(key);
      if (holders === undefined) return undefined;
      let last = -1;
      for (const g of candidateGroups(holders, allowedBySelector)) {
        const p = lastPosition(g, excluded);
        if (p > last && overlaps(g)) last = p;
      }
      return all[last];
    },
    sameVolume(volume) {
      const theirs = index.get(`volume\u0000${volume.name}`)?.sameVolume;
      return theirs != null && deepEqual(volume, theirs);
    },
  });
}

/** Errors of `ss` against the others that overlap it, listed in their original order. */
export function conflictsWithOverlapping(
  ss: Readonly<SidecarSet>,
  overlapping: readonly Readonly<SidecarSet>[],
): FieldError[] {
  const owners = new Map<string, Readonly<SidecarSet>>();
  for (const o of overlapping) for (const key of conflictKeys(o)) owners.set(key, o);
  return conflictsWith(ss, { ownerOf: (key) => owners.get(key) });
}

function conflictsWith(ss: Readonly<SidecarSet>, others: Others): FieldError[] {
  const errs: FieldError[] = [];
  const check = (kind: string, c: Readonly<SidecarContainer>): void => {
    const owner = others.ownerOf(`${kind}\u0000${c.name}`);
    if (owner !== undefined) {
      errs.push(
        invalid(
          'spec.containers',
          c.name,
          `container ${c.name} already exist in ${owner.metadata.name ?? ''}`,
        ),
      );
    }
  };
  for (const c of ss.spec.initContainers ?? []) check('init', c);
  for (const c of ss.spec.containers ?? []) check('container', c);
  for (const v of ss.spec.volumes ?? []) {
    if (others.sameVolume?.(v) === true) continue;
    const owner = others.ownerOf(`volume\u0000${v.name}`);
    const theirs = owner === undefined ? undefined : firstVolume(owner, v.name);
    if (owner !== undefined && theirs !== undefined && !deepEqual(v, theirs)) {
      errs.push(
        invalid(
          'spec.volumes',
          v.name,
          `volume ${v.name} is in conflict with sidecarset ${owner.metadata.name ?? ''}`,
        ),
      );
    }
  }
  errs.push(...annotationConflicts(ss, others));
  return errs;
}

/**
 * Every name through which `ss` can conflict or be conflicted with, each tagged with its kind:
 * exactly the names conflictsWith looks up.
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

/** SidecarSets with the same namespace scope and pod selector: they overlap the same others. */
interface ScopeGroup {
  sample: Readonly<SidecarSet>;
  /** Their positions in `all`, ascending. */
  positions: number[];
}

/** The SidecarSets that have one conflict key. */
interface KeyHolders {
  groups: Map<string, ScopeGroup>;
  /** Label key → value → the groups whose selector's first matchLabels entry it is. */
  byLabel: Map<string, Map<string, ScopeGroup[]>>;
  /** The groups whose selector has no matchLabels. */
  unlabelled: ScopeGroup[];
  /** Volume keys: the volume all of them declare under that name (first of it), null if not one. */
  sameVolume?: Readonly<Volume> | null;
}

interface ConflictIndex {
  length: number;
  byKey: Map<string, KeyHolders>;
}

const conflictIndexes = new WeakMap<readonly Readonly<SidecarSet>[], ConflictIndex>();

function conflictIndex(all: readonly Readonly<SidecarSet>[]): ReadonlyMap<string, KeyHolders> {
  const cached = conflictIndexes.get(all);
  if (cached !== undefined && cached.length === all.length) return cached.byKey;
  const byKey = new Map<string, KeyHolders>();
  all.forEach((o, p) => {
    const selector = o.spec.selector ?? {};
    const scope = JSON.stringify([effectiveNamespaceSelector(o) ?? null, selector]);
    const label = Object.entries(selector.matchLabels ?? {})[0];
    for (const key of conflictKeys(o)) {
      let holders = byKey.get(key);
      if (holders === undefined) {
        holders = { groups: new Map(), byLabel: new Map(), unlabelled: [] };
        byKey.set(key, holders);
      }
      addHolder(holders, scope, label, o, p);
      if (key.startsWith('volume\u0000')) {
        const volume = firstVolume(o, key.slice('volume\u0000'.length));
        if (holders.sameVolume === undefined) holders.sameVolume = volume ?? null;
        else if (!deepEqual(holders.sameVolume, volume)) holders.sameVolume = null;
      }
    }
  });
  conflictIndexes.set(all, { length: all.length, byKey });
  return byKey;
}

function addHolder(
  holders: KeyHolders,
  scope: string,
  label: [string, string] | undefined,
  o: Readonly<SidecarSet>,
  p: number,
): void {
  const group = holders.groups.get(scope);
  if (group !== undefined) {
    if (group.positions[group.positions.length - 1] !== p) group.positions.push(p);
    return;
  }
  const created = { sample: o, positions: [p] };
  holders.groups.set(scope, created);
  if (label === undefined) {
    holders.unlabelled.push(created);
    return;
  }
  const [labelKey, value] = label;
  const byValue = holders.byLabel.get(labelKey) ?? new Map<string, ScopeGroup[]>();
  holders.byLabel.set(labelKey, byValue);
  byValue.set(value, [...(byValue.get(value) ?? []), created]);
}

/**
 * The groups that can overlap a selector allowing `allowed`. A group whose selector requires a
 * label value the selector does not allow is disjoint from it: the first test of
 * selector-overlap.ts's isDisjoint, so leaving it out changes no answer.
 */
function* candidateGroups(
  holders: KeyHolders,
  allowed: () => ReadonlyMap<string, KeyValues>,
): Generator<ScopeGroup> {
  yield* holders.unlabelled;
  for (const [labelKey, byValue] of holders.byLabel) {
    const values = allowed().get(labelKey);
    if (values === undefined || values.all) {
      for (const groups of byValue.values()) yield* groups;
    } else {
      for (const value of values.values) yield* byValue.get(value) ?? [];
    }
  }
}

/** The group's last position not excluded, -1 if none. */
function lastPosition(group: ScopeGroup, excluded: (p: number) => boolean): number {
  for (let i = group.positions.length - 1; i >= 0; i--) {
    const p = group.positions[i] ?? -1;
    if (!excluded(p)) return p;
  }
  return -1;
}

/** An annotation conflicts when either side patches it with Overwrite. */
function annotationConflicts(ss: Readonly<SidecarSet>, others: Others): FieldError[] {
  const errs: FieldError[] = [];
  for (const patch of ss.spec.patchPodMetadata ?? []) {
    const policy = patch.patchPolicy ?? '';
    if (policy === 'Retain') continue;
    for (const key of Object.keys(patch.annotations ?? {}).sort()) {
      const owner = others.ownerOf(`annotation\u0000${key}`);
      if (owner === undefined) continue;
      if (policy === 'Overwrite' || patchPolicyOf(owner, key) === 'Overwrite') {
        errs.push(
          invalid(
            'spec.patchPodMetadata',
            key,
            `annotation ${key} is in conflict with sidecarset ${owner.metadata.name ?? ''}`,
          ),
        );
      }
    }
  }
  return errs;
}

/** The policy of the last patch of `ss` that is not Retain and sets the annotation `key`. */
function patchPolicyOf(ss: Readonly<SidecarSet>, key: string): string {
  let policy = '';
  for (const patch of ss.spec.patchPodMetadata ?? []) {
    const p = patch.patchPolicy ?? '';
    if (p !== 'Retain' && Object.hasOwn(patch.annotations ?? {}, key)) policy = p;
  }
  return policy;
}

/** Upstream compares with the first volume of that name in the owning SidecarSet. */
function firstVolume(ss: Readonly<SidecarSet>, name: string): Readonly<Volume> | undefined {
  return (ss.spec.volumes ?? []).find((v) => v.name === name);
}
