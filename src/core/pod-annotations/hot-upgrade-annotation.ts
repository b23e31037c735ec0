/**
 * The codec of the pod annotation kruise.io/sidecarset-working-hotupgrade-container: a JSON object
 * from each hot-upgrade sidecar's name to the slot container that works for it (`<name>-1` or
 * `<name>-2`), as OpenKruise reads it (GetPodHotUpgradeInfoInAnnotations, pkg/util) and its
 * injector and controller write it. Read tolerant only, as OpenKruise reads it everywhere: a value
 * that is not a JSON object reads as no slots, and an entry that is not a string is left out.
 * Write: Go's encoding of a map[string]string. The slots' version keys are in annotations.ts.
 */
import { SIDECARSET_WORKING_HOTUPGRADE_CONTAINER } from '../api/annotations.js';
import type { Pod } from '../api/k8s-types.js';
import { readJsonObject, sortedJson } from '../encoding/json.js';

/** Sidecar name → its working slot container. */
export type WorkingSlots = Record<string, string>;

export function readWorkingSlots(value: string | undefined): WorkingSlots {
  const out: WorkingSlots = {};
  for (const [k, v] of Object.entries(readJsonObject(value) ?? {})) {
    if (typeof v === 'string') out[k] = v;
  }
  return out;
}

export function formatWorkingSlots(slots: Readonly<WorkingSlots>): string {
  return sortedJson(slots);
}

/** kruise.io/sidecarset-working-hotupgrade-container: sidecar name → its working slot. */
export function workingHotContainers(pod: Readonly<Pod>): WorkingSlots {
  return readWorkingSlots(pod.metadata.annotations?.[SIDECARSET_WORKING_HOTUPGRADE_CONTAINER]);
}

/**
 * GetPodHotUpgradeContainers: the slot the working-container annotation names (the second slot
 * when it names neither) and the other one, idle (on the empty image, or the older version while
 * a hot upgrade is under way).
 */
export function hotSlots(
  hot: { name: string; slots: readonly [string, string] },
  working: Readonly<Record<string, string>>,
): { working: string; idle: string } {
  const [first, second] = hot.slots;
  return working[hot.name] === first
    ? { working: first, idle: second }
    : { working: second, idle: first };
}
