/**
 * The pod annotation sidecarset.dev/upgrade-baseline: what a pod looked like when the controller
 * upgraded its sidecars in place, so that its health can be judged later from the pod alone (a
 * new leader, or a restarted controller, judges the same). A JSON object keyed by SidecarSet name,
 * written in the upgrade's own patch (no extra request):
 *
 *   {"logtail":{"hash":"…","upgradedAt":"2026-01-01T00:00:00Z","podReady":true,"restarts":{"logtail":0}}}
 */
import { isPlainObject, readJsonObject } from '../encoding/json.js';
import type { Pod } from '../api/k8s-types.js';
import { formatTimestamp } from './pod-hash-annotation.js';
import { containerStatus } from '../api/pod-containers.js';

export const UPGRADE_BASELINE = 'sidecarset.dev/upgrade-baseline';

export interface UpgradeBaseline {
  /** The SidecarSet hash the pod was upgraded to. */
  hash: string;
  /** RFC 3339, seconds. */
  upgradedAt: string;
  /** The pod was Ready before the upgrade: only then must it be Ready again to be healthy. */
  podReady: boolean;
  /** Each sidecar container's restartCount before the upgrade. */
  restarts: Record<string, number>;
}

/** Every SidecarSet's entry; a value that does not parse (or a bad entry) counts as absent. */
export function readUpgradeBaselines(value: string | undefined): Record<string, UpgradeBaseline> {
  const out: Record<string, UpgradeBaseline> = {};
  for (const [name, entry] of Object.entries(readJsonObject(value) ?? {})) {
    const baseline = readEntry(entry);
    if (baseline !== undefined) out[name] = baseline;
  }
  return out;
}

function readEntry(entry: unknown): UpgradeBaseline | undefined {
  if (!isPlainObject(entry)) return undefined;
  const { hash, upgradedAt, podReady, restarts } = entry;
  if (typeof hash !== 'string' || typeof upgradedAt !== 'string') return undefined;
  if (Number.isNaN(Date.parse(upgradedAt))) return undefined;
  const counts: Record<string, number> = {};
  if (isPlainObject(restarts)) {
    for (const [name, n] of Object.entries(restarts)) if (typeof n === 'number') counts[name] = n;
  }
  return { hash, upgradedAt, podReady: podReady === true, restarts: counts };
}

/** What an upgrade records: which SidecarSet, its hash, its sidecar containers, and when. */
export interface BaselineOf {
  sidecarSet: string;
  hash: string;
  containers: Iterable<string>;
  now: Date;
}

/**
 * The annotation's new value with this SidecarSet's entry for an upgrade of `pod` now (other
 * SidecarSets' entries kept). `podReady`: whether the pod was Ready before the upgrade.
 */
export function withUpgradeBaseline(
  pod: Readonly<Pod>,
  { sidecarSet, hash, containers, now }: BaselineOf,
  podReady: boolean,
): string {
  const all = readUpgradeBaselines(pod.metadata.annotations?.[UPGRADE_BASELINE]);
  const restarts: Record<string, number> = {};
  for (const name of containers) {
    restarts[name] = containerStatus(pod, name)?.restartCount ?? 0;
  }
  all[sidecarSet] = { hash, upgradedAt: formatTimestamp(now), podReady, restarts };
  return JSON.stringify(all);
}
