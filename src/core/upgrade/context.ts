/** What the planner needs from a SidecarSet, worked out once per plan. */
import {
  RECREATE_PODS,
  SIDECARSET_HASH,
  SIDECARSET_HASH_WITHOUT_IMAGE,
} from '../api/annotations.js';
import { hashWithoutImageResources } from '../api/hash.js';
import type { JsonObject } from '../encoding/json.js';
import { compareStrings } from '../encoding/json.js';
import type { SidecarSet, SidecarSetUpdateStrategy } from '../api/sidecarset-types.js';

export interface HotSlot {
  name: string;
  slots: readonly [string, string];
  emptyImage: string;
  image: string;
}

export interface SidecarSetContext {
  name: string;
  hash: string;
  hashWithoutImage: string;
  /** Ours: the hash without images and cold sidecars' resources (core/api/hash.ts). */
  hashWithoutImageResources: string;
  /** Container names the pod must hold, hot-upgrade slots expanded, sorted (GetSidecarContainersInPod). */
  containerNames: readonly string[];
  /** Cold sidecar container name → the SidecarSet's image; native sidecars included. */
  images: ReadonlyMap<string, string>;
  /** Cold sidecar → its resources, unless a resourcesPolicy computes them per pod at injection. */
  resources: ReadonlyMap<string, JsonObject>;
  hot: readonly HotSlot[];
  /** sidecarList of the hash entry: containers plus native-sidecar init containers, sorted. */
  sidecarList: readonly string[];
  latestRevision: string;
  /** metadata.resourceVersion: hot-upgrade slots record the version they run (util_hotupgrade.go). */
  resourceVersion: string;
  strategy: SidecarSetUpdateStrategy;
  /** sidecarset.dev/recreate-pods is exactly "true" (core/upgrade/recreation.ts). */
  recreatePods: boolean;
}

export function sidecarSetContext(sidecarSet: SidecarSet): SidecarSetContext {
  const spec = sidecarSet.spec;
  const annotations = sidecarSet.metadata.annotations ?? {};
  const containerNames: string[] = [];
  const images = new Map<string, string>();
  const resources = new Map<string, JsonObject>();
  const hot: HotSlot[] = [];
  const natives = (spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always');
  for (const c of [...(spec.containers ?? []), ...natives]) {
    if (c.upgradeStrategy?.upgradeType === 'HotUpgrade') {
      const slots = [`${c.name}-1`, `${c.name}-2`] as const;
      containerNames.push(...slots);
      const emptyImage = c.upgradeStrategy.hotUpgradeEmptyImage ?? '';
      hot.push({ name: c.name, slots, emptyImage, image: c.image ?? '' });
    } else {
      containerNames.push(c.name);
      images.set(c.name, c.image ?? '');
      if (c.resourcesPolicy === undefined) resources.set(c.name, c.resources ?? {});
    }
  }
  const sidecarList = new Set([...(spec.containers ?? []), ...natives].map((c) => c.name));
  return {
    name: sidecarSet.metadata.name ?? '',
    hash: annotations[SIDECARSET_HASH] ?? '',
    hashWithoutImage: annotations[SIDECARSET_HASH_WITHOUT_IMAGE] ?? '',
    hashWithoutImageResources: hashWithoutImageResources(sidecarSet),
    containerNames: [...new Set(containerNames)].sort(compareStrings),
    images,
    resources,
    hot,
    sidecarList: [...sidecarList].sort(compareStrings),
    latestRevision: sidecarSet.status?.latestRevision ?? '',
    resourceVersion: sidecarSet.metadata.resourceVersion ?? '',
    strategy: spec.updateStrategy ?? {},
    recreatePods: annotations[RECREATE_PODS] === 'true',
  };
}
