/**
 * Finds and reports missed pods (src/core/matching/missed-pods.ts) while this replica leads: a pass over the
 * cached pods every `resyncMs` and shortly after a pod or SidecarSet appears. Each pass:
 * - `sidecarset_missed_pods{sidecarset}` (through onCounts) and `status.missedPods` set to the count;
 * - a Warning `SidecarNotInjected` on each pod the first time it is found missed (once per pod
 *   while this replica leads, not once per pass);
 * - one Warning `SidecarNotInjected` on the SidecarSet when its count grew, naming a few pods.
 * Nothing is deleted or evicted: recreating the pods (a rollout restart) injects them.
 * When leadership ends, the pass under way stops before its next SidecarSet and no timer is left.
 */
import type { Logger } from 'pino';

import type { Pod } from '../core/api/k8s-types.js';
import type { NamespaceLabels } from '../core/matching/match.js';
import type { WebhookSelectors } from '../core/matching/missed-pods.js';
import { isMissedBy } from '../core/matching/missed-pods.js';
import { buildSidecarSetIndex, candidateSidecarSets } from '../core/matching/sidecarset-index.js';
import type { SidecarSet } from '../core/api/sidecarset-types.js';
import type { ClusterWriter } from './ports.js';

export const MISSED_REASON = 'SidecarNotInjected';
/** Pods named in the SidecarSet's event. */
const NAMED = 5;
/** Pod events sent in one pass at most; the others follow in the next passes. */
const POD_EVENTS_PER_PASS = 100;

export interface MissedPodsOptions {
  sidecarSets: () => readonly SidecarSet[];
  pods: () => readonly Pod[];
  namespaces: NamespaceLabels;
  webhookSelectors: () => WebhookSelectors;
  writer: ClusterWriter;
  logger: Logger;
  /** Default 30 s. */
  resyncMs?: number;
  /** Wait after a change before a pass; default 1 s. */
  debounceMs?: number;
  /** The count of each SidecarSet after a pass (the metric). */
  onCounts?: (counts: ReadonlyMap<string, number>) => void;
}

export interface MissedPodsScanner {
  lead(signal: AbortSignal): void;
  changed(): void;
  /** One pass now (tests). */
  scan(): Promise<void>;
}

export function createMissedPodsScanner(options: MissedPodsOptions): MissedPodsScanner {
  const resyncMs = options.resyncMs ?? 30_000;
  const debounceMs = options.debounceMs ?? 1000;
  const log = options.logger;
  /**
   * `sidecarset/namespace/pod` already given its pod event, while it stays missed: a pod that is
   * gone (or injected, or no longer matched) is forgotten, so a pod recreated under the same name
   * (a StatefulSet's) and missed again gets an event of its own.
   */
  const podsReported = new Set<string>();
  const countsReported = new Map<string, number>();
  let leading: AbortSignal | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let podEventsLeft = 0;

  function schedule(delayMs: number): void {
    if (leading === undefined || leading.aborted) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      running = scan()
        .catch((err: unknown) => {
          log.error({ err }, 'cannot scan for missed pods');
        })
        .finally(() => {
          running = undefined;
          schedule(resyncMs);
        });
    }, delayMs);
    timer.unref();
  }

  async function scan(): Promise<void> {
    // A pass reports nothing once the leadership it started under has ended.
    const leadership = leading;
    if (leadership?.aborted === true) return;
    podEventsLeft = POD_EVENTS_PER_PASS;
    const sets = options.sidecarSets();
    const missed = findMissed(sets, options.pods(), options.namespaces, options.webhookSelectors());
    const counts = new Map(
      sets.map((ss) => [ss.metadata.name ?? '', missed.get(ss.metadata.name ?? '')?.length ?? 0]),
    );
    options.onCounts?.(counts);
    for (const ss of sets) {
      const name = ss.metadata.name ?? '';
      try {
        await report(ss, missed.get(name) ?? [], () => leadership?.aborted === true);
      } catch (err) {
        log.error({ err, sidecarSet: name }, 'cannot report missed pods');
      }
    }
    for (const name of countsReported.keys()) if (!counts.has(name)) countsReported.delete(name);
    const stillMissed = new Set<string>();
    for (const [name, pods] of missed) for (const pod of pods) stillMissed.add(podKey(name, pod));
    for (const key of podsReported) if (!stillMissed.has(key)) podsReported.delete(key);
  }

  async function report(ss: SidecarSet, pods: readonly Pod[], ended: () => boolean): Promise<void> {
    const name = ss.metadata.name ?? '';
    const ref = { kind: 'SidecarSet' as const, apiVersion: 'apps.kruise.io/v1alpha1', name };
    for (const pod of pods) {
      if (ended()) return;
      const key = podKey(name, pod);
      if (podsReported.has(key) || podEventsLeft === 0) continue;
      podsReported.add(key);
      podEventsLeft--;
      await options.writer.event(
        {
          kind: 'Pod',
          apiVersion: 'v1',
          name: pod.metadata.name ?? '',
          ...(pod.metadata.namespace === undefined ? {} : { namespace: pod.metadata.namespace }),
          ...(pod.metadata.uid === undefined ? {} : { uid: pod.metadata.uid }),
        },
        'Warning',
        MISSED_REASON,
        `SidecarSet ${name} matches this pod but it was created without its sidecars (the webhook was not called or did not answer); recreate the pod to inject them`,
      );
    }
    if (ended()) return;
    const before = countsReported.get(name) ?? ss.status?.missedPods ?? 0;
    countsReported.set(name, pods.length);
    if (pods.length > before) {
      const named = pods
        .slice(0, NAMED)
        .map((p) => `${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`);
      const more = pods.length > NAMED ? `, … (+${String(pods.length - NAMED)} more)` : '';
      await options.writer.event(
        ref,
        'Warning',
        MISSED_REASON,
        `${String(pods.length)} pods matched since this SidecarSet exists were created without its sidecars: ${named.join(', ')}${more}`,
      );
      log.warn(
        { sidecarSet: name, missedPods: pods.length },
        'pods created without their sidecars',
      );
    }
    // Only beside the status the reconcile writes: the schema requires its counts.
    if (
      !ended() &&
      ss.status?.matchedPods !== undefined &&
      (ss.status.missedPods ?? 0) !== pods.length
    ) {
      await options.writer.writeSidecarSetStatus(name, { missedPods: pods.length });
    }
  }

  function podKey(sidecarSet: string, pod: Pod): string {
    return `${sidecarSet}/${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
  }

  return {
    lead(signal) {
      leading = signal;
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        podsReported.clear();
        countsReported.clear();
      });
      schedule(0);
    },
    changed() {
      if (running === undefined) schedule(debounceMs);
    },
    scan,
  };
}

/** Missed pods by SidecarSet name; each pod compared only with the SidecarSets its labels could pick. */
function findMissed(
  sets: readonly SidecarSet[],
  pods: readonly Pod[],
  namespaces: NamespaceLabels,
  webhook: WebhookSelectors,
): Map<string, Pod[]> {
  const index = buildSidecarSetIndex(sets);
  const missed = new Map<string, Pod[]>();
  for (const pod of pods) {
    for (const ss of candidateSidecarSets(index, pod.metadata.labels ?? {})) {
      if (!isMissedBy(ss, pod, namespaces, webhook)) continue;
      const name = ss.metadata.name ?? '';
      const list = missed.get(name);
      if (list === undefined) missed.set(name, [pod]);
      else list.push(pod);
    }
  }
  return missed;
}
