/**
 * When a ready pod counts as available to the budget (maxUnavailable), as a Deployment's
 * minReadySeconds says: Ready for at least updateStrategy.minReadySeconds. A sidecar without a
 * readiness probe is Ready a moment after each crash; a pod whose sidecar restarted since its
 * upgrade must therefore stay Ready at least RESTART_SETTLE_SECONDS too, or a crash loop would free
 * the budget between crashes. The Ready condition's lastTransitionTime is when it last became
 * Ready (the slim pod keeps it, src/k8s/slim-pod.ts).
 */
import type { Pod } from '../api/k8s-types.js';
import type { SidecarSetContext } from './context.js';
import { restartedSinceUpgrade } from './health-judge.js';

/** The kubelet's first crash-loop backoff: a sidecar that crashes again does so within it. */
const RESTART_SETTLE_SECONDS = 10;

/**
 * From when the ready pod counts as available; undefined when at once (no wait asked for, or the
 * Ready condition has no time to count from).
 */
export function availableFrom(ctx: SidecarSetContext, pod: Readonly<Pod>): Date | undefined {
  const minReady = Math.max(
    ctx.strategy.minReadySeconds ?? 0,
    restartedSinceUpgrade(ctx, pod) ? RESTART_SETTLE_SECONDS : 0,
  );
  if (minReady === 0) return undefined;
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
  const since = Date.parse(ready?.lastTransitionTime ?? '');
  return Number.isNaN(since) ? undefined : new Date(since + minReady * 1000);
}
