/**
 * SidecarSets with the health gate's annotations, and pods upgraded in place at a given time (as
 * the controller writes them, upgrade baseline included) then left in a chosen state.
 */
import type { Pod } from '../../src/core/api/k8s-types.js';
import type { SidecarSet } from '../../src/core/api/sidecarset-types.js';
import { applyPodUpgrade } from '../../src/core/rollout/simulate.js';
import { buildPodUpgrade } from '../../src/core/upgrade/change.js';
import { sidecarSetContext } from '../../src/core/upgrade/context.js';
import { SIDECAR, upgradePod, upgradeSidecarSet } from './upgrade-pods.js';

export const T0 = new Date('2026-07-02T10:00:00Z');
export const seconds = (n: number): Date => new Date(T0.getTime() + n * 1000);

export function sidecarSet(
  annotations: Record<string, string> = {},
  maxUnavailable: number | string = 1,
) {
  const ss = upgradeSidecarSet({ maxUnavailable });
  ss.metadata.annotations = { ...ss.metadata.annotations, ...annotations };
  return ss;
}

type Outcome = 'ready' | 'notReady' | 'pending' | 'podNotReady';

/** Pod i upgraded in place at `at` (as the controller writes it), then in the state `outcome`. */
export function upgraded(
  ss: SidecarSet,
  i: number,
  outcome: Outcome,
  options: { at?: Date; restartsAfter?: number; readyBefore?: boolean } = {},
): Pod {
  const before = upgradePod(i, { restarts: 2, ready: options.readyBefore ?? true });
  const ctx = sidecarSetContext(ss);
  const change = buildPodUpgrade(ctx, before, [], options.at ?? T0);
  const pod = applyPodUpgrade(before, change);
  const status = pod.status?.containerStatuses?.find((s) => s.name === SIDECAR);
  if (status !== undefined && outcome !== 'pending') {
    status.image = 'test-sidecar:v2';
    status.imageID = 'docker-pullable://test-sidecar@sha256:2222';
    status.ready = outcome !== 'notReady';
    status.restartCount = 3 + (options.restartsAfter ?? 0);
  }
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready !== undefined) ready.status = outcome === 'ready' ? 'True' : 'False';
  return pod;
}
