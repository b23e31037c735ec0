/** What the planner needs from a SidecarSet, worked out once per plan. */
import { SIDECARSET_HASH, SIDECARSET_HASH_WITHOUT_IMAGE } from '../annotations.js';
import { compareStrings } from '../json.js';
import type { SidecarSet, SidecarSetUpdateStrategy } from '../sidecarset-types.js';

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
  /** Container names the pod must hold, hot-upgrade slots expanded, sorted (GetSidecarContainersInPod). */
  containerNames: readonly string[];
  /** Cold sidecar container name → the SidecarSet's image. */
  images: ReadonlyMap<string, string>;
  hot: readonly HotSlot[];
  /** sidecarList of the hash entry: containers plus native-sidecar init containers, sorted. */
  sidecarList: readonly string[];
  latestRevision: string;
  /** metadata.resourceVersion: hot-upgrade slots record the version they run (util_hotupgrade.go). */
  resourceVersion: string;
  strategy: SidecarSetUpdateStrategy;
}

export function sidecarSetContext(sidecarSet: SidecarSet): SidecarSetContext {
  const spec = sidecarSet.spec;
  const annotations = sidecarSet.metadata.annotations ?? {};
  const containerNames: string[] = [];
  const images = new Map<string, string>();
  const hot: HotSlot[] = [];
  for (const c of spec.containers ?? []) {
    if (c.upgradeStrategy?.upgradeType === 'HotUpgrade') {
      const slots = [`${c.name}-1`, `${c.name}-2`] as const;
      containerNames.push(...slots);
      const emptyImage = c.upgradeStrategy.hotUpgradeEmptyImage ?? '';
      hot.push({ name: c.name, slots, emptyImage, image: c.image ?? '' });
    } else {
      containerNames.push(c.name);
      images.set(c.name, c.image ?? '');
    }
  }
  const sidecarList = new Set((spec.containers ?? []).map((c) => c.name));
  for (const c of spec.initContainers ?? []) {
    if (c.restartPolicy === 'Always') sidecarList.add(c.name);
  }
  return {
    name: sidecarSet.metadata.name ?? '',
    hash: annotations[SIDECARSET_HASH] ?? '',
    hashWithoutImage: annotations[SIDECARSET_HASH_WITHOUT_IMAGE] ?? '',
    containerNames: [...new Set(containerNames)].sort(compareStrings),
    images,
    hot,
    sidecarList: [...sidecarList].sort(compareStrings),
    latestRevision: sidecarSet.status?.latestRevision ?? '',
    resourceVersion: sidecarSet.metadata.resourceVersion ?? '',
    strategy: spec.updateStrategy ?? {},
  };
}
