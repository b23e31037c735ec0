/** What the planner needs from a SidecarSet, worked out once per plan. */
import { SIDECARSET_HASH, SIDECARSET_HASH_WITHOUT_IMAGE } from '../annotations.js';
import type { IntOrString, LabelSelector } from '../k8s-types.js';
import { compareStrings } from '../json.js';
import type { Labels } from '../selector.js';
import { selectorMatchesAll } from '../selector.js';
import type { SidecarSet, UpdatePriorityStrategy, UpdateScatterTerm } from '../sidecarset-types.js';
import type { RecordedStatuses } from './pod-records.js';
import { hashRecordMatcher, recordedStatusesReader } from './pod-records.js';

export interface HotSlot {
  name: string;
  slots: readonly [string, string];
  emptyImage: string;
  /** The SidecarSet's image for this sidecar. */
  image: string;
}

export interface SidecarSetContext {
  name: string;
  hash: string;
  hashWithoutImage: string;
  /** Container names the pod must hold, hot-upgrade slots expanded (GetSidecarContainersInPod). */
  containerNames: ReadonlySet<string>;
  /** The same, sorted (IsSidecarSetUpgradable walks them in this order). */
  sortedContainerNames: readonly string[];
  /** Cold sidecar container name → the SidecarSet's image. */
  images: ReadonlyMap<string, string>;
  hot: readonly HotSlot[];
  /** sidecarList of the hash entry: containers plus native-sidecar init containers, sorted. */
  sidecarList: readonly string[];
  latestRevision: string;
  /** metadata.resourceVersion: hot-upgrade slots record the version they run (util_hotupgrade.go). */
  resourceVersion: string;
  notUpdate: boolean;
  paused: boolean;
  isSelected: (labels: Labels) => boolean;
  partition: IntOrString | undefined;
  maxUnavailable: IntOrString | undefined;
  priority: UpdatePriorityStrategy | undefined;
  scatter: readonly UpdateScatterTerm[];
  /** recordsHash of kruise.io/sidecarset-hash against `hash`, memoized per distinct value. */
  recordsHash: (value: string | undefined) => boolean;
  /** The same for kruise.io/sidecarset-hash-without-image and `hashWithoutImage`. */
  recordsHashWithoutImage: (value: string | undefined) => boolean;
  /**
   * This SidecarSet's lastContainerStatuses in a kruise.io/sidecarset-inplace-update-state value
   * (undefined when the value does not parse), memoized per distinct value.
   */
  recordedStatuses: (value: string) => Readonly<RecordedStatuses> | undefined;
}

export function sidecarSetContext(sidecarSet: SidecarSet): SidecarSetContext {
  const spec = sidecarSet.spec;
  const strategy = spec.updateStrategy ?? {};
  const annotations = sidecarSet.metadata.annotations ?? {};
  const containerNames = new Set<string>();
  const images = new Map<string, string>();
  const hot: HotSlot[] = [];
  for (const c of spec.containers ?? []) {
    if (c.upgradeStrategy?.upgradeType === 'HotUpgrade') {
      const slots = [`${c.name}-1`, `${c.name}-2`] as const;
      slots.forEach((s) => containerNames.add(s));
      hot.push({
        name: c.name,
        slots,
        emptyImage: c.upgradeStrategy.hotUpgradeEmptyImage ?? '',
        image: c.image ?? '',
      });
    } else {
      containerNames.add(c.name);
      images.set(c.name, c.image ?? '');
    }
  }
  const sidecarList = new Set((spec.containers ?? []).map((c) => c.name));
  for (const c of spec.initContainers ?? []) {
    if (c.restartPolicy === 'Always') sidecarList.add(c.name);
  }
  const name = sidecarSet.metadata.name ?? '';
  const hash = annotations[SIDECARSET_HASH] ?? '';
  const hashWithoutImage = annotations[SIDECARSET_HASH_WITHOUT_IMAGE] ?? '';
  return {
    name,
    hash,
    hashWithoutImage,
    containerNames,
    sortedContainerNames: [...containerNames].sort(compareStrings),
    images,
    hot,
    sidecarList: [...sidecarList].sort(compareStrings),
    latestRevision: sidecarSet.status?.latestRevision ?? '',
    resourceVersion: sidecarSet.metadata.resourceVersion ?? '',
    notUpdate: strategy.type === 'NotUpdate',
    paused: strategy.paused === true,
    isSelected: canarySelector(strategy.selector),
    partition: strategy.partition,
    maxUnavailable: strategy.maxUnavailable,
    priority: strategy.priorityStrategy,
    scatter: strategy.scatterStrategy ?? [],
    recordsHash: hashRecordMatcher(name, hash),
    recordsHashWithoutImage: hashRecordMatcher(name, hashWithoutImage),
    recordedStatuses: recordedStatusesReader(name),
  };
}

/**
 * updateStrategy.selector as GetNextUpgradePods reads it: no selector selects every pod; one that
 * does not parse selects none.
 */
function canarySelector(selector: LabelSelector | undefined): (labels: Labels) => boolean {
  if (selector === undefined) return () => true;
  return selectorMatcher(selector);
}

/**
 * safeMatches with the selector checked and taken apart once, for testing many pods: the same
 * answers, without re-validating the selector or building its entries again for every pod.
 */
export function selectorMatcher(selector: LabelSelector): (labels: Labels) => boolean {
  if (!isValidSelector(selector)) return () => false;
  const pairs = Object.entries(selector.matchLabels ?? {});
  const requirements = (selector.matchExpressions ?? []).map((req) => ({
    key: req.key,
    operator: req.operator,
    values: req.values ?? [],
  }));
  return (labels) => {
    for (const [key, value] of pairs) if (labels[key] !== value) return false;
    for (const req of requirements) {
      const present = Object.hasOwn(labels, req.key);
      const value = labels[req.key];
      const listed = value !== undefined && req.values.includes(value);
      // isValidSelector admits these four operators only.
      const holds =
        req.operator === 'In'
          ? present && listed
          : req.operator === 'NotIn'
            ? !present || !listed
            : req.operator === 'Exists'
              ? present
              : !present;
      if (!holds) return false;
    }
    return true;
  };
}

/** Standard selector semantics; an invalid selector (unknown operator, ...) matches nothing. */
export function safeMatches(selector: LabelSelector, labels: Labels): boolean {
  if (!isValidSelector(selector)) return false;
  return selectorMatchesAll(selector, labels);
}

/** ValidatedLabelSelectorAsSelector's value rules, which selectorMatchesAll does not check. */
function isValidSelector(selector: LabelSelector): boolean {
  return (selector.matchExpressions ?? []).every((req) => {
    const n = (req.values ?? []).length;
    switch (req.operator) {
      case 'In':
      case 'NotIn':
        return n > 0;
      case 'Exists':
      case 'DoesNotExist':
        return n === 0;
      default:
        return false;
    }
  });
}
