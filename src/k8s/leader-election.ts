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

interface StopOptions {
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

const LEADER_ELECTION_DEFAULTS = {
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

/** Starts electing at once; see LeaderElector. */
export function startLeaderElection(options: LeaderElectionOptions): LeaderElection {
  const elector = new LeaderElector(options);
  elector.start();
  return elector;
}

/**
 * client-go's leaderelection.LeaderElector: a loop that tries to acquire the lease while a
 * candidate and to renew it while the leader, every retryPeriod.
 */
class LeaderElector implements LeaderElection {
  private readonly options: LeaderElectionOptions;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly jitterFactor: number;
  private readonly namespace: string;
  private readonly name: string;
  private readonly identity: string;
  private readonly log: Logger;
  private readonly clock: () => Date;
  private readonly schedule: Schedule;
  private readonly client: LeaseClient;

  /** The lease object as last read or written: its resourceVersion guards our next write. */
  private lease: V1Lease | undefined;
  private observed: ObservedRecord | undefined;
  /** Local ms when `observed` last changed; the lease expires leaseDuration after it. */
  private observedAt = 0;
  private reportedLeader = '';
  private leading: Leadership | undefined;
  private stopped = false;
  private attemptController: AbortController | undefined;
  private wakeSleep: (() => void) | undefined;
  private stopping: Promise<void> | undefined;
  private loop: Promise<void> = Promise.resolve();

  constructor(options: LeaderElectionOptions) {
    const leaseDurationMs = options.leaseDurationMs ?? LEADER_ELECTION_DEFAULTS.leaseDurationMs;
    const renewDeadlineMs = options.renewDeadlineMs ?? LEADER_ELECTION_DEFAULTS.renewDeadlineMs;
    const retryPeriodMs = options.retryPeriodMs ?? LEADER_ELECTION_DEFAULTS.retryPeriodMs;
    const jitterFactor = options.jitterFactor ?? LEADER_ELECTION_DEFAULTS.jitterFactor;
    validate(options, { leaseDurationMs, renewDeadlineMs, retryPeriodMs, jitterFactor });

    this.options = options;
    this.leaseDurationMs = leaseDurationMs;
    this.renewDeadlineMs = renewDeadlineMs;
    this.retryPeriodMs = retryPeriodMs;
    this.jitterFactor = jitterFactor;
    const { namespace, name, identity } = options;
    this.namespace = namespace;
    this.name = name;
    this.identity = identity;
    this.log = options.logger.child({ lease: `${namespace}/${name}`, identity });
    this.clock = options.now ?? (() => new Date());
    this.schedule = options.schedule ?? realSchedule;
    this.client = options.client ?? options.kubeConfig.makeApiClient(CoordinationV1Api);
  }

  /** Starts the loop (client-go's Run, which does not block here). */
  start(): void {
    this.loop = this.run().catch((err: unknown) => {
      this.log.error({ err: describe(err) }, 'leader election loop failed');
      this.loseLeadership('leader election loop failed');
    });
  }

  stop(stopOptions: StopOptions = {}): Promise<void> {
    if (this.stopping !== undefined) return this.stopping;
    this.stopped = true;
    // Leadership ends now, synchronously, not when the loop notices.
    this.loseLeadership('stopped leader election');
    const inDoubt = this.attemptController !== undefined;
    this.attemptController?.abort(new Error('leader election stopped'));
    this.wakeSleep?.();
    this.stopping = this.loop.then(() =>
      stopOptions.release === true ? this.release(inDoubt) : undefined,
    );
    return this.stopping;
  }

  isLeader(): boolean {
    if (this.leading !== undefined && this.nowMs() >= this.leading.deadlineAt) {
      // The deadline timer has not run yet (a busy event loop): the clock decides.
      this.loseLeadership('failed to renew the lease before the renew deadline');
    }
    return this.leading !== undefined;
  }

  leader(): string | undefined {
    const observed = this.observed;
    return observed === undefined || observed.holder === '' ? undefined : observed.holder;
  }

  private nowMs(): number {
    return this.clock().getTime();
  }

  /** Read through a call, so that TypeScript does not narrow the flag across awaits. */
  private isStopped(): boolean {
    return this.stopped;
  }

  private async run(): Promise<void> {
    while (!this.isStopped()) {
      if (this.isLeader()) await this.renew();
      else await this.acquire();
    }
  }

  /** A candidate's round: one attempt to take the lease, then a jittered pause if it failed. */
  private async acquire(): Promise<void> {
    const { ok, start } = await this.attempt();
    if (this.isStopped()) return;
    if (ok && start + this.renewDeadlineMs > this.nowMs()) {
      this.startLeading(start);
      return;
    }
    await this.sleep(this.retryPeriodMs * (1 + Math.random() * this.jitterFactor));
  }

  /** The leader's round: after retryPeriod, one attempt to renew the lease. */
  private async renew(): Promise<void> {
    await this.sleep(this.retryPeriodMs);
    if (this.isStopped() || !this.isLeader()) return;
    const { ok, start } = await this.attempt();
    if (this.isStopped() || this.leading === undefined) return;
    if (ok) {
      this.leading.deadlineAt = start + this.renewDeadlineMs;
      this.armDeadline(this.leading);
    } else if (this.observed !== undefined && this.observed.holder !== this.identity) {
      // client-go waits for the deadline even then; another holder means we are not the leader now.
      this.loseLeadership(`the lease was taken by ${this.observed.holder || 'nobody'}`);
    }
    // Otherwise retry after retryPeriod until the deadline timer gives up.
  }

  /** One attempt, abandoned (its requests aborted) after renewDeadline or on stop. */
  private async attempt(): Promise<{ ok: boolean; start: number }> {
    const start = this.clock();
    const controller = new AbortController();
    this.attemptController = controller;
    const cancelTimeout = this.schedule(() => {
      controller.abort(new Error('lease request timed out'));
    }, this.renewDeadlineMs);
    try {
      return { ok: await this.tryAcquireOrRenew(start, controller.signal), start: start.getTime() };
    } finally {
      cancelTimeout();
      this.attemptController = undefined;
    }
  }

  /** client-go's tryAcquireOrRenew: one attempt to create, take over or renew the lease. */
  private async tryAcquireOrRenew(start: Date, signal: AbortSignal): Promise<boolean> {
    const requestOptions = withSignal(signal);
    const startMs = start.getTime();
    const holdsLease = this.observed?.holder === this.identity;

    // Fast path for the leader: renew with the resourceVersion of our own last write.
    if (holdsLease && this.lease !== undefined && this.leaseValid(startMs)) {
      const spec = this.leaseSpec(this.lease, start, {
        acquireTime: this.observed?.acquireTime ?? start,
        leaseTransitions: this.observed?.leaseTransitions ?? 0,
      });
      try {
        this.observe(await this.replace(this.lease, spec, requestOptions), this.nowMs());
        return true;
      } catch (err: unknown) {
        if (signal.aborted) return false;
        this.log.debug({ err: describe(err) }, 'optimistic renew failed; reading the lease');
      }
    }

    let current: V1Lease;
    try {
      current = await this.read(requestOptions);
    } catch (err: unknown) {
      if (statusOf(err) !== 404) {
        this.log.warn({ err: describe(err) }, 'cannot read the lease');
        return false;
      }
      return this.create(start, requestOptions);
    }
    this.observe(current, this.nowMs());
    const record = recordOf(current);
    // Held by another and not expired, by our clock since we last saw it change.
    if (record.holder !== '' && record.holder !== this.identity && this.leaseValid(startMs)) {
      this.log.debug({ leader: record.holder }, 'the lease is held by another and has not expired');
      return false;
    }
    const ours = record.holder === this.identity;
    const spec = this.leaseSpec(current, start, {
      acquireTime: ours ? (record.acquireTime ?? start) : start,
      leaseTransitions: ours ? record.leaseTransitions : record.leaseTransitions + 1,
    });
    try {
      this.observe(await this.replace(current, spec, requestOptions), this.nowMs());
      return true;
    } catch (err: unknown) {
      if (statusOf(err) === 409) {
        this.log.debug('another candidate wrote the lease first');
      } else if (!signal.aborted) {
        this.log.warn({ err: describe(err) }, 'cannot update the lease');
      }
      return false;
    }
  }

  private observe(next: V1Lease, at: number): void {
    this.lease = next;
    const record = recordOf(next);
    if (record.raw !== this.observed?.raw) {
      this.observed = record;
      this.observedAt = at;
    }
    if (record.holder !== this.reportedLeader) {
      this.reportedLeader = record.holder;
      if (record.holder !== '') {
        this.log.info({ leader: record.holder }, 'new leader observed');
        this.callSafely('onNewLeader', () => this.options.onNewLeader?.(record.holder));
      }
    }
  }

  private leaseValid(at: number): boolean {
    return (
      this.observed !== undefined &&
      this.observedAt + this.observed.leaseDurationSeconds * 1000 > at
    );
  }

  private read(requestOptions: LeaseRequestOptions): Promise<V1Lease> {
    return this.client.readNamespacedLease(
      { name: this.name, namespace: this.namespace },
      requestOptions,
    );
  }

  private async create(start: Date, requestOptions: LeaseRequestOptions): Promise<boolean> {
    const body = new V1Lease();
    body.apiVersion = 'coordination.k8s.io/v1';
    body.kind = 'Lease';
    body.metadata = new V1ObjectMeta();
    body.metadata.name = this.name;
    body.metadata.namespace = this.namespace;
    body.spec = this.leaseSpec(undefined, start, { acquireTime: start, leaseTransitions: 0 });
    try {
      const created = await this.client.createNamespacedLease(
        { namespace: this.namespace, body },
        requestOptions,
      );
      this.observe(created, this.nowMs());
      return true;
    } catch (err: unknown) {
      if (statusOf(err) === 409) this.log.debug('another candidate created the lease first');
      else this.log.warn({ err: describe(err) }, 'cannot create the lease');
      return false;
    }
  }

  private replace(
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
    return this.client.replaceNamespacedLease(
      { name: this.name, namespace: this.namespace, body },
      requestOptions,
    );
  }

  private leaseSpec(
    base: V1Lease | undefined,
    now: Date,
    fields: { acquireTime: Date; leaseTransitions: number },
  ): V1LeaseSpec {
    const spec = new V1LeaseSpec();
    spec.holderIdentity = this.identity;
    spec.leaseDurationSeconds = this.leaseDurationMs / 1000;
    // MicroTime: V1MicroTime serialises as RFC 3339 with six fractional digits.
    spec.acquireTime = new V1MicroTime(fields.acquireTime.getTime());
    spec.renewTime = new V1MicroTime(now.getTime());
    spec.leaseTransitions = fields.leaseTransitions;
    // Kept for coordinated leader election, which we do not take part in.
    if (base?.spec?.strategy !== undefined) spec.strategy = base.spec.strategy;
    if (base?.spec?.preferredHolder !== undefined) spec.preferredHolder = base.spec.preferredHolder;
    return spec;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const cancel = this.schedule(() => {
        this.wakeSleep = undefined;
        resolve();
      }, ms);
      this.wakeSleep = () => {
        cancel();
        this.wakeSleep = undefined;
        resolve();
      };
    });
  }

  private startLeading(renewedAt: number): void {
    const controller = new AbortController();
    const leadership: Leadership = {
      controller,
      deadlineAt: renewedAt + this.renewDeadlineMs,
      cancelTimer: () => undefined,
    };
    this.leading = leadership;
    this.armDeadline(leadership);
    this.log.info('became the leader');
    this.callSafely('onStartedLeading', () => this.options.onStartedLeading(controller.signal));
  }

  /** The deadline is measured from the start of the last successful renewal (see the top). */
  private armDeadline(leadership: Leadership): void {
    leadership.cancelTimer();
    leadership.cancelTimer = this.schedule(
      () => {
        this.checkDeadline(leadership);
      },
      Math.max(0, leadership.deadlineAt - this.nowMs()),
    );
  }

  private checkDeadline(leadership: Leadership): void {
    if (this.leading !== leadership) return;
    const left = leadership.deadlineAt - this.nowMs();
    // Timers may fire a little early against the wall clock: re-arm for what is left.
    if (left > 0) {
      leadership.cancelTimer = this.schedule(() => {
        this.checkDeadline(leadership);
      }, left);
    } else {
      this.loseLeadership('failed to renew the lease before the renew deadline');
    }
  }

  private loseLeadership(reason: string): void {
    const leadership = this.leading;
    if (leadership === undefined) return;
    this.leading = undefined;
    leadership.cancelTimer();
    if (this.stopped) this.log.info(reason);
    else this.log.warn(reason);
    // Abort first so that work started by onStartedLeading stops before anything else runs.
    leadership.controller.abort(new Error(reason));
    this.callSafely('onStoppedLeading', () => {
      this.options.onStoppedLeading();
    });
  }

  /**
   * client-go's release: no holder and a 1 s duration, so the next candidate takes over at its
   * next attempt. `inDoubt`: stop() aborted a request that the server may still have committed,
   * so what we last saw of the lease may be stale: read it first.
   */
  private async release(inDoubt: boolean): Promise<void> {
    if (!inDoubt && (this.lease === undefined || this.observed?.holder !== this.identity)) return;
    const controller = new AbortController();
    const cancelTimeout = this.schedule(() => {
      controller.abort(new Error('lease release timed out'));
    }, this.renewDeadlineMs);
    const requestOptions = withSignal(controller.signal);
    try {
      let base = inDoubt ? undefined : this.lease;
      for (let tries = 0; tries < 2; tries++) {
        if (base === undefined) {
          base = await this.read(requestOptions);
          this.observe(base, this.nowMs());
          if (recordOf(base).holder !== this.identity) return;
        }
        try {
          this.observe(
            await this.replace(base, this.releaseSpec(base), requestOptions),
            this.nowMs(),
          );
          this.log.info('released the lease');
          return;
        } catch (err: unknown) {
          if (statusOf(err) !== 409) throw err;
          // Written since we saw it (by our own aborted renewal, or by another): release it
          // only if it is still ours.
          base = undefined;
        }
      }
    } catch (err: unknown) {
      this.log.warn({ err: describe(err) }, 'cannot release the lease');
    } finally {
      cancelTimeout();
    }
  }

  private releaseSpec(base: V1Lease): V1LeaseSpec {
    const now = this.clock();
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

  private callSafely(what: string, call: () => unknown): void {
    try {
      const result = call();
      if (result instanceof Promise) {
        result.catch((err: unknown) => {
          this.log.error({ err: describe(err) }, `${what} failed`);
        });
      }
    } catch (err: unknown) {
      this.log.error({ err: describe(err) }, `${what} failed`);
    }
  }
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
