/**
 * The pod condition SidecarSetUpgradable (updatePodSidecarSetUpgradableCondition in
 * pkg/controller/sidecarset/sidecarset_processor.go): its message is a JSON map
 * from SidecarSet name to whether that SidecarSet can upgrade the pod in place. Unlike OpenKruise,
 * a pod without the condition is not given one to say it is upgradable: that would be a second
 * write for every upgraded pod (docs/adr/0020-one-write-per-upgraded-pod.md).
 */
import { compareStrings, isPlainObject } from '../encoding/json.js';
import type { PodCondition } from '../api/k8s-types.js';
import { formatTimestamp } from '../pod-annotations/pod-hash-annotation.js';

export const SIDECARSET_UPGRADABLE = 'SidecarSetUpgradable';

/**
 * The condition with this SidecarSet's entry set, or undefined when nothing would change: the
 * entry says so already, or the pod has no condition and is upgradable.
 */
export function nextUpgradableCondition(
  conditions: readonly PodCondition[] | undefined,
  sidecarSet: string,
  upgradable: boolean,
  now: Date,
): PodCondition | undefined {
  const existing = conditions?.find((c) => c.type === SIDECARSET_UPGRADABLE);
  if (existing === undefined && upgradable) return undefined;
  const entries = readEntries(existing?.message);
  if (existing !== undefined && entries[sidecarSet] === upgradable) return undefined;
  entries[sidecarSet] = upgradable;
  const all = Object.values(entries).every(Boolean);
  const status = all ? 'True' : 'False';
  const sorted = Object.fromEntries(
    Object.entries(entries).sort(([a], [b]) => compareStrings(a, b)),
  );
  return {
    type: SIDECARSET_UPGRADABLE,
    status,
    reason: all ? 'AllSidecarsetUpgradable' : 'UpdateImmutableField',
    message: JSON.stringify(sorted),
    lastTransitionTime:
      existing?.status === status ? (existing.lastTransitionTime ?? null) : formatTimestamp(now),
  };
}

function readEntries(message: string | undefined): Record<string, boolean> {
  if (message === undefined || message === '') return {};
  try {
    const parsed: unknown = JSON.parse(message);
    if (!isPlainObject(parsed)) return {};
    const out: Record<string, boolean> = {};
    for (const [k, v] of Object.entries(parsed)) if (typeof v === 'boolean') out[k] = v;
    return out;
  } catch {
    return {};
  }
}
