/**
 * The codec of the pod annotation kruise.io/sidecarset-working-hotupgrade-container: a JSON object
 * from each hot-upgrade sidecar's name to the slot container that works for it (`<name>-1` or
 * `<name>-2`), as OpenKruise reads it (GetPodHotUpgradeInfoInAnnotations, pkg/util) and its
 * injector and controller write it. Read tolerant only, as OpenKruise reads it everywhere: a value
 * that is not a JSON object reads as no slots, and an entry that is not a string is left out.
 * Write: Go's encoding of a map[string]string. The slots' version keys are in annotations.ts.
 */
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
