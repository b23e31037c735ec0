/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics
 * (k8s.io/client-go/tools/leaderelection), except that losing the lease does not exit the
 * process: every replica also serves the webhook, so a replica that loses the lease stops
 * leading (its signal is aborted) and goes back to being a candidate.
 *
 * Safety rests on three things:
 * - optimistic concurrency: every takeover and renewal is a PUT carrying the resourceVersion we
 *   read, so of two racing candidates only one write commits (the other gets 409);
 * - expiry by our own clock: a candidate measures a lease's age from the moment IT last saw the
 *   lease record change, never from the holder's renewTime, so clock skew between replicas does
 *   not matter (only clock rates do);
 * - renewDeadline < leaseDuration: the leader gives up leading when renewDeadline has passed since
 *   the start of its last successful renewal. A candidate saw that renewal at or after its start,
 *   and waits leaseDuration from then, so the old leader has stopped before anyone can take over.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import {
  ApiException,
  CoordinationV1Api,
  V1Lease,
  V1LeaseSpec,
  V1MicroTime,
  V1ObjectMeta,
} from '@kubernetes/client-node';
import type { ConfigurationOptions, KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';

import { withSignal } from './abortable.js';

/** Schedules `run` after `ms`; returns a cancel function. Inject a fake to control time. */
export type Schedule = (run: () => void, ms: number) => () => void;

/** The part of client-node's CoordinationV1Api that leader election uses. */
export type LeaseClient = Pick<
  CoordinationV1Api,
  'readNamespacedLease' | 'createNamespacedLease' | 'replaceNamespacedLease'
>;

export interface LeaderElectionOptions {
  readonly kubeConfig: KubeConfig;
  /** Namespace and name of the Lease. */
  readonly namespace: string;
  readonly name: string;
  /** Unique per replica, e.g. defaultIdentity(): `${hostname}_${random}`. */
  readonly identity: string;
  /** How long a lease is valid after it was last seen to change; whole seconds; default 15 s. */
  readonly leaseDurationMs?: number;
  /** The leader stops leading when it has not renewed for this long; default 10 s. */
  readonly renewDeadlineMs?: number;
  /** Pause between attempts to acquire or renew; default 2 s. */
  readonly retryPeriodMs?: number;
  /**
   * Candidates wait retryPeriod * (1 + random * jitterFactor) between attempts to acquire, so
   * that they do not all poll at once (client-go's JitterFactor); default 1.2, 0 disables.
   */
  readonly jitterFactor?: number;
  readonly logger: Logger;
  /** Default: the real clock. */
  readonly now?: () => Date;
  /** Default: setTimeout. */
  readonly schedule?: Schedule;
  /** Default: kubeConfig.makeApiClient(CoordinationV1Api). Tests may wrap it. */
  readonly client?: LeaseClient;
  /**
   * Called when this replica becomes the leader. `signal` is aborted the moment leadership is
   * lost (renew deadline passed, lease taken by another) or stop() is called, before
   * onStoppedLeading. A returned promise's rejection is logged; it does not end leadership.
   */
  readonly onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  /** Called once after each leadership period ends, right after its signal was aborted. */
  readonly onStoppedLeading: () => void;
  /** Called when the observed holder of the lease changes to a non-empty identity (us included). */
  readonly onNewLeader?: (identity: string) => void;
}

export interface StopOptions {
  /**
   * Give the lease up if we hold it (holder cleared, duration 1 s, like client-go's
   * ReleaseOnCancel), so that another replica takes over at its next attempt instead of waiting
   * for the lease to expire.
   */
  readonly release?: boolean;
}

export interface LeaderElection {
  /** Stops leading at once and ends the loop; resolves when the loop and any release are done. */
  stop(options?: StopOptions): Promise<void>;
  /** True while leading: between onStartedLeading and the abort of its signal. */
  isLeader(): boolean;
  /** The holder of the lease as last observed (us included), or undefined when none or unknown. */
  leader(): string | undefined;
}

export const LEADER_ELECTION_DEFAULTS = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
  jitterFactor: 1.2,
} as const;

/** client-go's default identity shape: the hostname (the pod name in a cluster) and a random suffix. */
export function defaultIdentity(): string {
  return `${hostname()}_${randomBytes(4).toString('hex')}`;
}

/** The lease record fields that leader election reads, as it last saw them. */
interface ObservedRecord {
  readonly holder: string;
  readonly leaseDurationSeconds: number;
  readonly acquireTime: Date | undefined;
  readonly leaseTransitions: number;
  /** The record in raw form, to tell whether it changed (client-go compares the raw record). */
  readonly raw: string;
}

interface Leadership {
  readonly controller: AbortController;
  /** Local ms by which a renewal must succeed, or leadership is lost. */
  deadlineAt: number;
  cancelTimer: () => void;
}

const realSchedule: Schedule = (run, ms) => {
  const timer = setTimeout(run, ms);
  return () => {
    clearTimeout(timer);
  };
};

export function startLeaderElection(options: LeaderElectionOptions): LeaderElection {
  const leaseDurationMs = options.leaseDurationMs ?? LEADER_ELECTION_DEFAULTS.leaseDurationMs;
  const renewDeadlineMs = options.renewDeadlineMs ?? LEADER_ELECTION_DEFAULTS.renewDeadlineMs;
  const retryPeriodMs = options.retryPeriodMs ?? LEADER_ELECTION_DEFAULTS.retryPeriodMs;
  const jitterFactor = options.jitterFactor ?? LEADER_ELECTION_DEFAULTS.jitterFactor;
  validate(options, { leaseDurationMs, renewDeadlineMs, retryPeriodMs, jitterFactor });

  const { namespace, name, identity } = options;
  const log = options.logger.child({ lease: `${namespace}/${name}`, identity });
  const clock = options.now ?? (() => new Date());
  const nowMs = (): number => clock().getTime();
  const schedule = options.schedule ?? realSchedule;
  const client = options.client ?? options.kubeConfig.makeApiClient(CoordinationV1Api);

  /** The lease object as last read or written: its resourceVersion guards our next write. */
  let lease: V1Lease | undefined;
  let observed: ObservedRecord | undefined;
  /** Local ms when `observed` last changed; the lease expires leaseDuration after it. */
  let observedAt = 0;
  let reportedLeader = '';
  let leading: Leadership | undefined;
  let stopped = false;
  let attemptController: AbortController | undefined;
  let wakeSleep: (() => void) | undefined;
  let stopping: Promise<void> | undefined;

  function observe(next: V1Lease, at: number): void {
    lease = next;
    const record = recordOf(next);
    if (record.raw !== observed?.raw) {
      observed = record;
      observedAt = at;
    }
    if (record.holder !== reportedLeader) {
      reportedLeader = record.holder;
      if (record.holder !== '') {
        log.info({ leader: record.holder }, 'new leader observed');
        callSafely('onNewLeader', () => options.onNewLeader?.(record.holder));
      }
    }
  }

  function leaseValid(at: number): boolean {
    return observed !== undefined && observedAt + observed.leaseDurationSeconds * 1000 > at;
  }

  /** client-go's tryAcquireOrRenew: one attempt to create, take over or renew the lease. */
  async function tryAcquireOrRenew(start: Date, signal: AbortSignal): Promise<boolean> {
    const requestOptions = withSignal(signal);
    const startMs = start.getTime();
    const holdsLease = observed?.holder === identity;

    // Fast path for the leader: renew with the resourceVersion of our own last write.
    if (holdsLease && lease !== undefined && leaseValid(startMs)) {
      const spec = leaseSpec(lease, start, {
        acquireTime: observed?.acquireTime ?? start,
        leaseTransitions: observed?.leaseTransitions ?? 0,
      });
      try {
        observe(await replace(lease, spec, requestOptions), nowMs());
        return true;
      } catch (err: unknown) {
        if (signal.aborted) return false;
        log.debug({ err: describe(err) }, 'optimistic renew failed; reading the lease');
      }
    }

    let current: V1Lease;
    try {
      current = await client.readNamespacedLease({ name, namespace }, requestOptions);
    } catch (err: unknown) {
      if (statusOf(err) !== 404) {
        log.warn({ err: describe(err) }, 'cannot read the lease');
        return false;
      }
      return create(start, requestOptions);
    }
    observe(current, nowMs());
    const record = recordOf(current);
    // Held by another and not expired, by our clock since we last saw it change.
    if (record.holder !== '' && record.holder !== identity && leaseValid(startMs)) {
      log.debug({ leader: record.holder }, 'the lease is held by another and has not expired');
      return false;
    }
    const ours = record.holder === identity;
    const spec = leaseSpec(current, start, {
      acquireTime: ours ? (record.acquireTime ?? start) : start,
      leaseTransitions: ours ? record.leaseTransitions : record.leaseTransitions + 1,
    });
    try {
      observe(await replace(current, spec, requestOptions), nowMs());
      return true;
    } catch (err: unknown) {
      if (statusOf(err) === 409) {
        log.debug('another candidate wrote the lease first');
      } else if (!signal.aborted) {
        log.warn({ err: describe(err) }, 'cannot update the lease');
      }
      return false;
    }
  }

  async function create(start: Date, requestOptions: LeaseRequestOptions): Promise<boolean> {
    const body = new V1Lease();
    body.apiVersion = 'coordination.k8s.io/v1';
    body.kind = 'Lease';
    body.metadata = new V1ObjectMeta();
    body.metadata.name = name;
    body.metadata.namespace = namespace;
    body.spec = leaseSpec(undefined, start, { acquireTime: start, leaseTransitions: 0 });
    try {
      observe(await client.createNamespacedLease({ namespace, body }, requestOptions), nowMs());
      return true;
    } catch (err: unknown) {
      if (statusOf(err) === 409) log.debug('another candidate created the lease first');
      else log.warn({ err: describe(err) }, 'cannot create the lease');
      return false;
    }
  }

  function replace(
    base: V1Lease,
    spec: V1LeaseSpec,
    requestOptions: LeaseRequestOptions,
  ): Promise<V1Lease> {
    const body = new V1Lease();
    body.apiVersion = 'coordination.k8s.io/v1';
    body.kind = 'Lease';
    // The read metadata carries the resourceVersion: the write fails with 409 if anyone wrote since.
    body.metadata = base.metadata ?? new V1ObjectMeta();
    body.spec = spec;
    return client.replaceNamespacedLease({ name, namespace, body }, requestOptions);
  }

  function leaseSpec(
    base: V1Lease | undefined,
    now: Date,
    fields: { acquireTime: Date; leaseTransitions: number },
  ): V1LeaseSpec {
    const spec = new V1LeaseSpec();
    spec.holderIdentity = identity;
    spec.leaseDurationSeconds = leaseDurationMs / 1000;
    // MicroTime: V1MicroTime serialises as RFC 3339 with six fractional digits.
    spec.acquireTime = new V1MicroTime(fields.acquireTime.getTime());
    spec.renewTime = new V1MicroTime(now.getTime());
    spec.leaseTransitions = fields.leaseTransitions;
    // Kept for coordinated leader election, which we do not take part in.
    if (base?.spec?.strategy !== undefined) spec.strategy = base.spec.strategy;
    if (base?.spec?.preferredHolder !== undefined) spec.preferredHolder = base.spec.preferredHolder;
    return spec;
  }

  /** One attempt, abandoned (its requests aborted) after renewDeadline or on stop. */
  async function attempt(): Promise<{ ok: boolean; start: number }> {
    const start = clock();
    const controller = new AbortController();
    attemptController = controller;
    const cancelTimeout = schedule(() => {
      controller.abort(new Error('lease request timed out'));
    }, renewDeadlineMs);
    try {
      return { ok: await tryAcquireOrRenew(start, controller.signal), start: start.getTime() };
    } finally {
      cancelTimeout();
      attemptController = undefined;
    }
  }

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const cancel = schedule(() => {
        wakeSleep = undefined;
        resolve();
      }, ms);
      wakeSleep = () => {
        cancel();
        wakeSleep = undefined;
        resolve();
      };
    });
  }

  function startLeading(renewedAt: number): void {
    const controller = new AbortController();
    const leadership: Leadership = {
      controller,
      deadlineAt: renewedAt + renewDeadlineMs,
      cancelTimer: () => undefined,
    };
    leading = leadership;
    armDeadline(leadership);
    log.info('became the leader');
    callSafely('onStartedLeading', () => options.onStartedLeading(controller.signal));
  }

  /** The deadline is measured from the start of the last successful renewal (see the top). */
  function armDeadline(leadership: Leadership): void {
    leadership.cancelTimer();
    const check = (): void => {
      if (leading !== leadership) return;
      const left = leadership.deadlineAt - nowMs();
      // Timers may fire a little early against the wall clock: re-arm for what is left.
      if (left > 0) leadership.cancelTimer = schedule(check, left);
      else loseLeadership('failed to renew the lease before the renew deadline');
    };
    leadership.cancelTimer = schedule(check, Math.max(0, leadership.deadlineAt - nowMs()));
  }

  function loseLeadership(reason: string): void {
    const leadership = leading;
    if (leadership === undefined) return;
    leading = undefined;
    leadership.cancelTimer();
    if (stopped) log.info(reason);
    else log.warn(reason);
    // Abort first so that work started by onStartedLeading stops before anything else runs.
    leadership.controller.abort(new Error(reason));
    callSafely('onStoppedLeading', () => {
      options.onStoppedLeading();
    });
  }

  function stillLeading(): boolean {
    if (leading !== undefined && nowMs() >= leading.deadlineAt) {
      // The deadline timer has not run yet (a busy event loop): the clock decides.
      loseLeadership('failed to renew the lease before the renew deadline');
    }
    return leading !== undefined;
  }

  // A function, so that TypeScript does not narrow the flag across awaits.
  const isStopped = (): boolean => stopped;

  async function run(): Promise<void> {
    while (!isStopped()) {
      if (!stillLeading()) {
        const { ok, start } = await attempt();
        if (isStopped()) break;
        if (ok && start + renewDeadlineMs > nowMs()) {
          startLeading(start);
          continue;
        }
        await sleep(retryPeriodMs * (1 + Math.random() * jitterFactor));
        continue;
      }
      await sleep(retryPeriodMs);
      if (isStopped() || !stillLeading()) continue;
      const { ok, start } = await attempt();
      if (isStopped() || leading === undefined) continue;
      if (ok) {
        leading.deadlineAt = start + renewDeadlineMs;
        armDeadline(leading);
      } else if (observed !== undefined && observed.holder !== identity) {
        // client-go waits for the deadline even then; another holder means we are not the leader now.
        loseLeadership(`the lease was taken by ${observed.holder || 'nobody'}`);
      }
      // Otherwise retry after retryPeriod until the deadline timer gives up.
    }
  }

  /**
   * client-go's release: no holder and a 1 s duration, so the next candidate takes over at its
   * next attempt. `inDoubt`: stop() aborted a request that the server may still have committed,
   * so what we last saw of the lease may be stale: read it first.
   */
  async function release(inDoubt: boolean): Promise<void> {
    if (!inDoubt && (lease === undefined || observed?.holder !== identity)) return;
    const controller = new AbortController();
    const cancelTimeout = schedule(() => {
      controller.abort(new Error('lease release timed out'));
    }, renewDeadlineMs);
    const requestOptions = withSignal(controller.signal);
    try {
      let base = inDoubt ? undefined : lease;
      for (let tries = 0; tries < 2; tries++) {
        if (base === undefined) {
          base = await client.readNamespacedLease({ name, namespace }, requestOptions);
          observe(base, nowMs());
          if (recordOf(base).holder !== identity) return;
        }
        try {
          observe(await replace(base, releaseSpec(base), requestOptions), nowMs());
          log.info('released the lease');
          return;
        } catch (err: unknown) {
          if (statusOf(err) !== 409) throw err;
          // Written since we saw it (by our own aborted renewal, or by another): release it
          // only if it is still ours.
          base = undefined;
        }
      }
    } catch (err: unknown) {
      log.warn({ err: describe(err) }, 'cannot release the lease');
    } finally {
      cancelTimeout();
    }
  }

  function releaseSpec(base: V1Lease): V1LeaseSpec {
    const now = clock();
    const spec = new V1LeaseSpec();
    spec.holderIdentity = '';
    spec.leaseDurationSeconds = 1;
    spec.acquireTime = new V1MicroTime(now.getTime());
    spec.renewTime = new V1MicroTime(now.getTime());
    spec.leaseTransitions = recordOf(base).leaseTransitions;
    if (base.spec?.strategy !== undefined) spec.strategy = base.spec.strategy;
    if (base.spec?.preferredHolder !== undefined) spec.preferredHolder = base.spec.preferredHolder;
    return spec;
  }

  function callSafely(what: string, call: () => unknown): void {
    try {
      const result = call();
      if (result instanceof Promise) {
        result.catch((err: unknown) => {
          log.error({ err: describe(err) }, `${what} failed`);
        });
      }
    } catch (err: unknown) {
      log.error({ err: describe(err) }, `${what} failed`);
    }
  }

  const loop = run().catch((err: unknown) => {
    log.error({ err: describe(err) }, 'leader election loop failed');
    loseLeadership('leader election loop failed');
  });

  return {
    stop(stopOptions: StopOptions = {}): Promise<void> {
      if (stopping !== undefined) return stopping;
      stopped = true;
      // Leadership ends now, synchronously, not when the loop notices.
      loseLeadership('stopped leader election');
      const inDoubt = attemptController !== undefined;
      attemptController?.abort(new Error('leader election stopped'));
      wakeSleep?.();
      stopping = loop.then(() => (stopOptions.release === true ? release(inDoubt) : undefined));
      return stopping;
    },
    isLeader: stillLeading,
    leader: () => (observed === undefined || observed.holder === '' ? undefined : observed.holder),
  };
}

type LeaseRequestOptions = ConfigurationOptions;

function recordOf(lease: V1Lease): ObservedRecord {
  const spec = lease.spec;
  const holder = spec?.holderIdentity ?? '';
  const leaseDurationSeconds = spec?.leaseDurationSeconds ?? 0;
  const leaseTransitions = spec?.leaseTransitions ?? 0;
  // client-node types MicroTime fields as Date but hands back the string it received.
  const acquireRaw = rawTime(spec?.acquireTime);
  const renewRaw = rawTime(spec?.renewTime);
  const acquireTime = acquireRaw === '' ? undefined : new Date(acquireRaw);
  return {
    holder,
    leaseDurationSeconds,
    acquireTime:
      acquireTime !== undefined && !Number.isNaN(acquireTime.getTime()) ? acquireTime : undefined,
    leaseTransitions,
    raw: JSON.stringify([holder, leaseDurationSeconds, acquireRaw, renewRaw, leaseTransitions]),
  };
}

function rawTime(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Date) return value.toISOString();
  return '';
}

function statusOf(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}

function describe(err: unknown): string {
  if (err instanceof ApiException) {
    const body: unknown = err.body;
    return `HTTP ${err.code}: ${typeof body === 'string' ? body : JSON.stringify(body)}`;
  }
  if (err instanceof Error) return err.message;
  return String(err);
}

function validate(
  options: LeaderElectionOptions,
  t: {
    leaseDurationMs: number;
    renewDeadlineMs: number;
    retryPeriodMs: number;
    jitterFactor: number;
  },
): void {
  if (options.identity === '') throw new Error('leader election: identity must not be empty');
  if (!Number.isInteger(t.leaseDurationMs / 1000) || t.leaseDurationMs < 1000) {
    // The Lease stores whole seconds; a rounded duration would break renewDeadline < leaseDuration.
    throw new Error('leader election: leaseDurationMs must be a whole number of seconds');
  }
  if (!(t.leaseDurationMs > t.renewDeadlineMs)) {
    throw new Error('leader election: leaseDurationMs must be greater than renewDeadlineMs');
  }
  if (!(t.renewDeadlineMs > t.retryPeriodMs && t.retryPeriodMs > 0)) {
    throw new Error('leader election: renewDeadlineMs must be greater than retryPeriodMs > 0');
  }
  if (!(t.jitterFactor >= 0)) throw new Error('leader election: jitterFactor must be >= 0');
}
