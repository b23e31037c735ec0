/**
 * Leader election against the fake API server, with the real client-node.
 *
 * Most tests run on a virtual clock: time moves only when no lease request is in flight, and then
 * straight to the next timer that some candidate has set (a discrete-event simulation over real
 * HTTP). So a 15 s lease takes milliseconds, ordering assertions are exact, and nothing waits on a
 * fixed sleep. One test runs on real timers with short durations.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { CoordinationV1Api, HttpMethod, RequestContext } from '@kubernetes/client-node';
import type { ConfigurationOptions, V1Lease } from '@kubernetes/client-node';
import { pino } from 'pino';
import { startLeaderElection } from '../../src/k8s/leader-election.js';
import type {
  LeaderElection,
  LeaderElectionOptions,
  LeaseClient,
  Schedule,
} from '../../src/k8s/leader-election.js';
import { LEASES, startFakeApiServer, waitUntil } from '../fake-apiserver/index.js';
import type {
  FakeApiServer,
  KubeObject,
  RequestInfo,
  RequestRecord,
} from '../fake-apiserver/index.js';
import { isJsonObject } from '../fake-apiserver/json.js';
import { Signal } from '../fake-apiserver/wait.js';

const NS = 'kube-system';
const LEASE = 'sidecarset-controller';
const LEASE_MS = 15_000;
const RENEW_DEADLINE_MS = 10_000;
const RETRY_MS = 2_000;
const START = Date.parse('2026-11-30T06:40:40.123Z');
const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

/** Virtual time: timers run only when the simulation moves time to them. */
class VirtualClock {
  private t = START;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; run: () => void }>();

  readonly now = (): Date => new Date(this.t);

  readonly schedule: Schedule = (run, ms) => {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + Math.max(0, ms), run });
    return () => {
      this.timers.delete(id);
    };
  };

  ms(): number {
    return this.t;
  }

  /** Moves time without running timers, as when the event loop is blocked. */
  set(ms: number): void {
    this.t = ms;
  }

  /** Moves to the earliest timer, if it is due by `limit`, and runs every timer due then. */
  fireNext(limit: number): boolean {
    const next = Math.min(...[...this.timers.values()].map((timer) => timer.at));
    if (!Number.isFinite(next) || next > limit) return false;
    this.t = Math.max(this.t, next);
    const due = [...this.timers].filter(([, timer]) => timer.at <= this.t);
    for (const [id, timer] of due) {
      // An earlier timer of the batch may have cancelled this one.
      if (this.timers.delete(id)) timer.run();
    }
    return true;
  }
}

/** Counts the lease requests in flight, so that the simulation knows when everyone waits on time. */
class Network {
  private inFlight = 0;
  private readonly changed = new Signal<undefined>();

  track<T>(request: Promise<T>): Promise<T> {
    this.inFlight++;
    return request.finally(() => {
      this.inFlight--;
      this.changed.emit(undefined);
    });
  }

  /** Resolves once no request is in flight and every continuation has run. */
  async settle(): Promise<void> {
    for (;;) {
      // A macrotask turn: the candidates' continuations (microtasks) have all run by then.
      await nextTurn();
      if (this.inFlight === 0) return;
      await waitUntil(
        (wake) => this.changed.subscribe(wake),
        () => (this.inFlight === 0 ? true : undefined),
        { what: 'the lease requests in flight to finish' },
      );
    }
  }
}

type Event =
  | { readonly t: number; readonly kind: 'started' | 'aborted' | 'stopped' }
  | { readonly t: number; readonly kind: 'leader'; readonly leader: string };

/** What the callbacks record about one candidate. */
interface Probe {
  readonly events: Event[];
  signal: AbortSignal | undefined;
  /** When set, this candidate's PUTs never answer (until their signal aborts them). */
  hangPuts: boolean;
}

type Candidate = Probe & { readonly id: string; readonly handle: LeaderElection };

class Sim {
  readonly clock = new VirtualClock();
  readonly network = new Network();
  readonly candidates: Candidate[] = [];

  readonly server: FakeApiServer;

  constructor(server: FakeApiServer) {
    this.server = server;
  }

  start(id: string, overrides: Partial<LeaderElectionOptions> = {}): Candidate {
    const real = this.server.kubeConfig().makeApiClient(CoordinationV1Api);
    const candidate: Probe = { events: [], signal: undefined, hangPuts: false };
    const record = (event: Event): void => {
      candidate.events.push(event);
    };
    const client: LeaseClient = {
      readNamespacedLease: (param, options) =>
        this.network.track(real.readNamespacedLease(param, options)),
      createNamespacedLease: (param, options) =>
        this.network.track(real.createNamespacedLease(param, options)),
      replaceNamespacedLease: (param, options) =>
        candidate.hangPuts
          ? hangUntilAborted(options)
          : this.network.track(real.replaceNamespacedLease(param, options)),
    };
    const handle = startLeaderElection({
      kubeConfig: this.server.kubeConfig(),
      namespace: NS,
      name: LEASE,
      identity: id,
      leaseDurationMs: LEASE_MS,
      renewDeadlineMs: RENEW_DEADLINE_MS,
      retryPeriodMs: RETRY_MS,
      jitterFactor: 0,
      logger: pino({ level: 'silent' }),
      now: this.clock.now,
      schedule: this.clock.schedule,
      client,
      onStartedLeading: (signal) => {
        candidate.signal = signal;
        record({ t: this.clock.ms(), kind: 'started' });
        signal.addEventListener('abort', () => {
          record({ t: this.clock.ms(), kind: 'aborted' });
        });
      },
      onStoppedLeading: () => {
        record({ t: this.clock.ms(), kind: 'stopped' });
      },
      onNewLeader: (leader) => {
        record({ t: this.clock.ms(), kind: 'leader', leader });
      },
      ...overrides,
    });
    const started = Object.assign(candidate, { id, handle });
    this.candidates.push(started);
    return started;
  }

  /** Runs the simulation until `check` returns a value, for at most `maxMs` of virtual time. */
  async runUntil<T>(check: () => T | undefined, what: string, maxMs = 120_000): Promise<T> {
    const limit = this.clock.ms() + maxMs;
    for (;;) {
      await this.network.settle();
      const value = check();
      if (value !== undefined) return value;
      if (!this.clock.fireNext(limit)) {
        throw new Error(`not within ${maxMs} virtual ms: ${what}`);
      }
    }
  }

  /** Runs the simulation for `ms` of virtual time. */
  async runFor(ms: number): Promise<void> {
    const until = this.clock.ms() + ms;
    await this.network.settle();
    while (this.clock.fireNext(until)) await this.network.settle();
    this.clock.set(until);
  }

  leads(candidate: Candidate): Promise<true> {
    return this.runUntil(
      () => (candidate.handle.isLeader() ? true : undefined),
      `${candidate.id} to lead`,
    );
  }

  async stopAll(): Promise<void> {
    for (const candidate of this.candidates) candidate.hangPuts = false;
    await Promise.all(this.candidates.map((c) => c.handle.stop()));
  }
}

/** A PUT that never reaches the server and fails only when the elector aborts it. */
async function hangUntilAborted(options: ConfigurationOptions | undefined): Promise<V1Lease> {
  // The elector passes its abort signal through a client-node middleware: run it to get the signal.
  const context = new RequestContext('http://hang.invalid/', HttpMethod.PUT);
  for (const middleware of options?.middleware ?? []) await middleware.pre(context).toPromise();
  const signal = context.getSignal();
  assert.ok(signal !== undefined, 'the elector gives every request an abort signal');
  return new Promise<V1Lease>((_resolve, reject) => {
    signal.addEventListener('abort', () => {
      reject(new Error('aborted'));
    });
  });
}

async function withSim(body: (sim: Sim) => Promise<void>): Promise<void> {
  const server = await startFakeApiServer();
  const sim = new Sim(server);
  try {
    await body(sim);
  } finally {
    await sim.stopAll();
    await server.close();
  }
}

function leaseSpec(server: FakeApiServer): Record<string, unknown> {
  const spec = server.store.get(LEASES, NS, LEASE)?.['spec'];
  assert.ok(isJsonObject(spec), 'the lease exists');
  return spec;
}

function specOf(object: KubeObject): Record<string, unknown> {
  const spec = object['spec'];
  return isJsonObject(spec) ? spec : {};
}

function bodySpec(record: RequestRecord): Record<string, unknown> {
  const spec = isJsonObject(record.body) ? record.body['spec'] : undefined;
  return isJsonObject(spec) ? spec : {};
}

const isLeaseRequest = (r: RequestRecord): boolean => r.resource === 'leases';
function holderIn(r: RequestInfo): unknown {
  const spec = isJsonObject(r.body) ? r.body['spec'] : undefined;
  return isJsonObject(spec) ? spec['holderIdentity'] : undefined;
}

const isPutBy =
  (id: string) =>
  (r: RequestInfo): boolean =>
    r.resource === 'leases' && r.verb === 'update' && holderIn(r) === id;

function timeOf(value: unknown): number {
  assert.equal(typeof value, 'string');
  return Date.parse(String(value));
}

function eventTime(candidate: Candidate, kind: Event['kind']): number {
  const found = candidate.events.find((e) => e.kind === kind);
  assert.ok(found !== undefined, `${candidate.id} has a ${kind} event`);
  return found.t;
}

function lastSuccessfulRenew(server: FakeApiServer, id: string): number {
  const puts = server.control.requests((r) => isPutBy(id)(r) && r.status === 200);
  const last = puts.at(-1);
  assert.ok(last !== undefined, `${id} renewed at least once`);
  return timeOf(bodySpec(last)['renewTime']);
}

/** Fails every PUT by `id` with 500, as when its API server connection is broken. */
function breakPutsOf(server: FakeApiServer, id: string): { cancel(): void } {
  return server.control.failNext({ match: isPutBy(id), status: 500, times: 1_000_000 });
}

/**
 * Checks at every committed lease change that at most one candidate reports isLeader(), and
 * that a leader is the lease's holder: the old leader must have stopped before a takeover commits.
 */
function checkOneLeader(sim: Sim): { changes: string[]; unsubscribe: () => void } {
  const changes: string[] = [];
  const unsubscribe = sim.server.store.subscribe((event) => {
    if (event.resource.resource !== 'leases') return;
    const found = specOf(event.object)['holderIdentity'];
    const holder = typeof found === 'string' ? found : '';
    changes.push(holder);
    const leaders = sim.candidates.filter((c) => c.handle.isLeader());
    assert.ok(leaders.length <= 1, `two leaders at once: ${leaders.map((c) => c.id).join(', ')}`);
    for (const leader of leaders) {
      assert.equal(holder, leader.id, `${leader.id} still leads while the lease goes to ${holder}`);
    }
  });
  return { changes, unsubscribe };
}

/** No two leadership periods (started … aborted) of different candidates overlap. */
function assertNoOverlap(candidates: readonly Candidate[]): void {
  const edges = candidates
    .flatMap((c) =>
      c.events
        .filter((e) => e.kind === 'started' || e.kind === 'aborted')
        .map((e) => ({ t: e.t, id: c.id, up: e.kind === 'started' })),
    )
    // At equal times an abort comes first: it happened first (see checkOneLeader).
    .sort((a, b) => a.t - b.t || Number(a.up) - Number(b.up));
  const active = new Set<string>();
  for (const edge of edges) {
    if (edge.up) {
      assert.equal(active.size, 0, `${edge.id} started while ${[...active].join()} led`);
      active.add(edge.id);
    } else {
      active.delete(edge.id);
    }
  }
}

describe('leader election (virtual clock)', () => {
  it('a single candidate creates the lease, then renews it with PUTs every retry period', async () => {
    await withSim(async (sim) => {
      const a = sim.start('a');
      await sim.leads(a);
      assert.equal(eventTime(a, 'started'), START);
      assert.deepEqual(
        sim.server.control.requests(isLeaseRequest).map((r) => `${r.method} ${r.status}`),
        ['GET 404', 'POST 201'],
      );
      const created = leaseSpec(sim.server);
      assert.equal(created['holderIdentity'], 'a');
      assert.equal(created['leaseDurationSeconds'], 15);
      assert.equal(created['leaseTransitions'], 0);
      // MicroTime: six fractional digits, as client-go writes it.
      assert.equal(created['acquireTime'], '2026-11-30T06:40:40.123000Z');
      assert.equal(created['renewTime'], '2026-11-30T06:40:40.123000Z');
      assert.deepEqual(
        a.events.filter((e) => e.kind === 'leader'),
        [{ t: START, kind: 'leader', leader: 'a' }],
      );
      assert.equal(a.handle.leader(), 'a');

      sim.server.control.clearRequests();
      await sim.runFor(10_000);
      const renewals = sim.server.control.requests(isLeaseRequest);
      // The leader's fast path: PUT with the resourceVersion of its own last write, no GET.
      assert.deepEqual(
        renewals.map((r) => `${r.method} ${r.status}`),
        Array.from({ length: 5 }, () => 'PUT 200'),
      );
      assert.deepEqual(
        renewals.map((r) => timeOf(bodySpec(r)['renewTime']) - START),
        [2000, 4000, 6000, 8000, 10_000],
      );
      for (const r of renewals) {
        const spec = bodySpec(r);
        assert.match(String(spec['renewTime']), MICRO_TIME);
        assert.equal(spec['acquireTime'], '2026-11-30T06:40:40.123000Z');
        assert.equal(spec['leaseTransitions'], 0);
        assert.equal(spec['holderIdentity'], 'a');
      }
      assert.equal(a.handle.isLeader(), true);
      assert.equal(a.signal?.aborted, false);

      await a.handle.stop();
      assert.equal(a.signal.aborted, true);
      assert.deepEqual(
        a.events.map((e) => e.kind),
        ['leader', 'started', 'aborted', 'stopped'],
      );
      // Without release the lease stays as it was: the next leader waits for it to expire.
      assert.equal(leaseSpec(sim.server)['holderIdentity'], 'a');
    });
  });

  it('two candidates: exactly one leads at any instant, across a crash and a takeover', async () => {
    await withSim(async (sim) => {
      const invariant = checkOneLeader(sim);
      // Both start at the same instant: both see no lease, both create it, one gets 409 AlreadyExists.
      const a = sim.start('a');
      const b = sim.start('b');
      const first = await sim.runUntil(
        () => sim.candidates.find((c) => c.handle.isLeader()),
        'a leader',
      );
      const second = first === a ? b : a;
      await sim.runFor(30_000);
      assert.equal(first.handle.isLeader(), true);
      assert.equal(second.handle.isLeader(), false);
      assert.equal(second.handle.leader(), first.id);
      // The follower only reads; its create, if it raced the leader's, got 409 AlreadyExists.
      const followerWrites = sim.server.control.requests(
        (r) => r.resource === 'leases' && r.method !== 'GET' && holderIn(r) === second.id,
      );
      assert.ok(followerWrites.every((r) => r.method === 'POST' && r.status === 409));

      // The leader's API writes start failing: it must stop leading by the renew deadline,
      // and the follower may take over only once the lease has expired, by its own clock.
      const broken = breakPutsOf(sim.server, first.id);
      await sim.leads(second);
      const lastRenew = lastSuccessfulRenew(sim.server, first.id);
      const aborted = eventTime(first, 'aborted');
      const takeover = eventTime(second, 'started');
      assert.equal(aborted, lastRenew + RENEW_DEADLINE_MS, 'aborted at the renew deadline');
      assert.ok(aborted < takeover, 'the old leader stopped before the new one started');
      assert.ok(takeover >= lastRenew + LEASE_MS, 'taken over only after the lease expired');
      assert.ok(takeover <= lastRenew + LEASE_MS + 2 * RETRY_MS, 'taken over soon after expiry');
      assert.match(String(first.signal?.reason), /renew deadline/);
      assert.deepEqual(
        first.events.filter((e) => e.kind === 'started' || e.kind === 'stopped').map((e) => e.kind),
        ['started', 'stopped'],
      );
      const spec = leaseSpec(sim.server);
      assert.equal(spec['holderIdentity'], second.id);
      assert.equal(spec['leaseTransitions'], 1);
      assert.equal(timeOf(spec['acquireTime']), takeover);

      // The old leader is a candidate again; it sees the new leader and stays a follower.
      broken.cancel();
      await sim.runFor(60_000);
      assert.equal(second.handle.isLeader(), true);
      assert.equal(first.handle.isLeader(), false);
      assert.equal(first.handle.leader(), second.id);
      assert.deepEqual(
        first.events.flatMap((e) => (e.kind === 'leader' ? [e.leader] : [])),
        [first.id, second.id],
      );
      assertNoOverlap(sim.candidates);
      // The lease went from one holder to the other exactly once.
      const holders = invariant.changes.filter((h, i, all) => i === 0 || all[i - 1] !== h);
      assert.deepEqual(holders, [first.id, second.id]);
      invariant.unsubscribe();
    });
  });

  it('with jitter, three candidates and repeated crashes: never two leaders', async () => {
    await withSim(async (sim) => {
      const invariant = checkOneLeader(sim);
      const ids = ['a', 'b', 'c'];
      for (const id of ids) sim.start(id, { jitterFactor: 1.2 });
      const broken = new Map<string, { cancel(): void }>();
      for (let round = 0; round < 4; round++) {
        const leader = await sim.runUntil(
          () => sim.candidates.find((c) => c.handle.isLeader()),
          `a leader in round ${round}`,
        );
        await sim.runFor(5_000);
        for (const fault of broken.values()) fault.cancel();
        broken.clear();
        broken.set(leader.id, breakPutsOf(sim.server, leader.id));
        await sim.runUntil(
          () =>
            sim.candidates.some((c) => c !== leader && c.handle.isLeader()) ? true : undefined,
          `a new leader after ${leader.id} in round ${round}`,
        );
      }
      assertNoOverlap(sim.candidates);
      assert.equal(leaseSpec(sim.server)['leaseTransitions'], 4);
      invariant.unsubscribe();
    });
  });

  it('a leader that stops without releasing aborts at once; another takes over after the lease expires', async () => {
    await withSim(async (sim) => {
      const a = sim.start('a');
      await sim.leads(a);
      const b = sim.start('b');
      await sim.runUntil(() => (b.handle.leader() === 'a' ? true : undefined), 'b to see a');
      await sim.runFor(3_000);

      const stopping = a.handle.stop();
      // Synchronously, before the loop has even noticed.
      assert.equal(a.signal?.aborted, true);
      assert.equal(a.handle.isLeader(), false);
      await stopping;
      const lastRenew = lastSuccessfulRenew(sim.server, 'a');
      const putsByA = sim.server.control.requests(isPutBy('a')).length;

      await sim.leads(b);
      const takeover = eventTime(b, 'started');
      assert.ok(takeover >= lastRenew + LEASE_MS, 'not before the lease expired');
      assert.ok(takeover <= lastRenew + LEASE_MS + 2 * RETRY_MS, 'within a retry or two of it');
      assert.equal(sim.server.control.requests(isPutBy('a')).length, putsByA, 'a wrote nothing');
      const spec = leaseSpec(sim.server);
      assert.equal(spec['holderIdentity'], 'b');
      assert.equal(spec['leaseTransitions'], 1);
      assert.equal(timeOf(spec['acquireTime']), takeover);
      assert.deepEqual(
        a.events.map((e) => e.kind),
        ['leader', 'started', 'aborted', 'stopped'],
      );
    });
  });

  it('release on stop clears the holder, and the next candidate takes over at its next attempt', async () => {
    await withSim(async (sim) => {
      const a = sim.start('a');
      await sim.leads(a);
      const b = sim.start('b');
      await sim.runUntil(() => (b.handle.leader() === 'a' ? true : undefined), 'b to see a');
      await sim.runFor(5_000);

      const released = sim.clock.ms();
      await a.handle.stop({ release: true });
      assert.equal(a.signal?.aborted, true);
      const spec = leaseSpec(sim.server);
      assert.equal(spec['holderIdentity'], '');
      assert.equal(spec['leaseDurationSeconds'], 1);
      assert.equal(spec['leaseTransitions'], 0);
      assert.equal(timeOf(spec['renewTime']), released);
      assert.match(String(spec['renewTime']), MICRO_TIME);
      // The release PUT came after the signal was aborted.
      assert.ok(a.events.some((e) => e.kind === 'aborted'));

      await sim.leads(b);
      assert.ok(eventTime(b, 'started') - released <= RETRY_MS, 'at once, not after expiry');
      const taken = leaseSpec(sim.server);
      assert.equal(taken['holderIdentity'], 'b');
      assert.equal(taken['leaseTransitions'], 1);
    });
  });

  it('release still works when the last renewal committed but its reply was lost', async () => {
    await withSim(async (sim) => {
      const a = sim.start('a');
      await sim.leads(a);
      // The renewal takes effect, but a sees a 500, and the read that would tell it the new
      // resourceVersion fails too: the version a knows is now stale.
      const lost = sim.server.control.failNext({
        match: isPutBy('a'),
        status: 500,
        phase: 'after',
      });
      const read = sim.server.control.failNext({
        match: (r) => r.resource === 'leases' && r.verb === 'get',
        status: 500,
      });
      await sim.runUntil(
        () => (lost.hits() === 1 && read.hits() === 1 ? true : undefined),
        'the lost reply and the failed read',
      );
      assert.equal(a.handle.isLeader(), true, 'still within the renew deadline');
      await a.handle.stop({ release: true });
      const releases = sim.server.control.requests(
        (r) => r.resource === 'leases' && r.verb === 'update' && holderIn(r) === '',
      );
      // The first try conflicts; a reads the lease, sees it is still its own, and releases it.
      assert.deepEqual(
        releases.map((r) => r.status),
        [409, 200],
      );
      assert.equal(leaseSpec(sim.server)['holderIdentity'], '');
    });
  });

  it('expiry is measured from when the candidate saw the lease change, not from the holder clock', async () => {
    await withSim(async (sim) => {
      // A holder whose clock is an hour behind: its renewTime looks long expired.
      sim.server.store.create(LEASES, NS, {
        metadata: { name: LEASE },
        spec: {
          holderIdentity: 'skewed',
          leaseDurationSeconds: 15,
          acquireTime: '2026-11-30T05:40:00.000000Z',
          renewTime: '2026-11-30T05:40:40.000000Z',
          leaseTransitions: 3,
        },
      });
      const b = sim.start('b');
      await sim.runUntil(() => (b.handle.leader() === 'skewed' ? true : undefined), 'b sees it');
      // The holder renews (by its own skewed clock) twice, 10 s apart.
      for (const renewTime of ['2026-11-30T05:40:50.000000Z', '2026-11-30T05:41:00.000000Z']) {
        await sim.runFor(10_000);
        sim.server.store.mutate(LEASES, NS, LEASE, (lease) => {
          lease['spec'] = { ...specOf(lease), renewTime };
        });
      }
      const lastChange = sim.clock.ms();
      await sim.leads(b);
      const takeover = eventTime(b, 'started');
      assert.ok(takeover >= lastChange + LEASE_MS, 'waited a full lease after the last change');
      // b sees the change at its next poll, then waits a full lease, then polls again.
      assert.ok(takeover <= lastChange + LEASE_MS + 2 * RETRY_MS);
      assert.equal(leaseSpec(sim.server)['leaseTransitions'], 4);
    });
  });

  it('a takeover that loses the race (409 Conflict) leaves the candidate a follower', async () => {
    await withSim(async (sim) => {
      sim.server.store.create(LEASES, NS, {
        metadata: { name: LEASE },
        spec: { holderIdentity: 'dead', leaseDurationSeconds: 15, leaseTransitions: 0 },
      });
      // Right before b's takeover PUT is served, candidate c takes the lease over: b's PUT
      // carries the version b read, which is now stale.
      let raced = false;
      const hook = sim.server.control.failNext({
        match: (r) => {
          if (!raced && isPutBy('b')(r)) {
            raced = true;
            sim.server.store.mutate(LEASES, NS, LEASE, (lease) => {
              lease['spec'] = {
                ...specOf(lease),
                holderIdentity: 'c',
                renewTime: sim.clock.now().toISOString(),
                leaseTransitions: 1,
              };
            });
          }
          return false;
        },
        status: 500,
      });
      const b = sim.start('b');
      const conflict = await sim.runUntil(
        () => sim.server.control.requests((r) => isPutBy('b')(r) && r.status === 409)[0],
        'b to lose the race',
      );
      hook.cancel();
      const raceAt = timeOf(bodySpec(conflict)['renewTime']);
      assert.equal(b.handle.isLeader(), false);
      assert.ok(!b.events.some((e) => e.kind === 'started'));
      await sim.runUntil(() => (b.handle.leader() === 'c' ? true : undefined), 'b to see c');
      // c never renews: b takes over a full lease after it saw c's write.
      await sim.leads(b);
      assert.ok(eventTime(b, 'started') >= raceAt + LEASE_MS);
      assert.equal(leaseSpec(sim.server)['leaseTransitions'], 2);
    });
  });

  it('a create that loses the race (409 AlreadyExists) leaves the candidate a follower', async () => {
    await withSim(async (sim) => {
      let raced = false;
      const hook = sim.server.control.failNext({
        match: (r) => {
          if (!raced && r.resource === 'leases' && r.verb === 'create') {
            raced = true;
            sim.server.store.create(LEASES, NS, {
              metadata: { name: LEASE },
              spec: {
                holderIdentity: 'c',
                leaseDurationSeconds: 15,
                renewTime: sim.clock.now().toISOString(),
              },
            });
          }
          return false;
        },
        status: 500,
      });
      const b = sim.start('b');
      await sim.runUntil(() => (b.handle.leader() === 'c' ? true : undefined), 'b to see c');
      hook.cancel();
      assert.deepEqual(
        sim.server.control.requests(isLeaseRequest).map((r) => `${r.method} ${r.status}`),
        ['GET 404', 'POST 409', 'GET 200'],
      );
      assert.equal(b.handle.isLeader(), false);
      await sim.leads(b);
      assert.ok(eventTime(b, 'started') >= START + LEASE_MS);
      assert.equal(leaseSpec(sim.server)['leaseTransitions'], 1);
    });
  });

  it('a renewal that hangs: leadership ends at the renew deadline, while the request is pending', async () => {
    await withSim(async (sim) => {
      const a = sim.start('a');
      await sim.leads(a);
      await sim.runFor(4_000);
      const lastRenew = lastSuccessfulRenew(sim.server, 'a');
      a.hangPuts = true;
      await sim.runUntil(() => a.signal?.aborted || undefined, 'a to give up');
      assert.equal(eventTime(a, 'aborted'), lastRenew + RENEW_DEADLINE_MS);
      assert.match(String(a.signal?.reason), /renew deadline/);
      // Back as a candidate: once the API answers again, the lease is still its own, so it
      // renews it and leads again, with a new signal.
      a.hangPuts = false;
      const firstSignal = a.signal;
      await sim.leads(a);
      assert.notEqual(a.signal, firstSignal);
      assert.equal(leaseSpec(sim.server)['leaseTransitions'], 0, 'no other holder in between');
    });
  });

  it('isLeader() follows the clock even when the deadline timer has not run yet', async () => {
    await withSim(async (sim) => {
      const a = sim.start('a');
      await sim.leads(a);
      breakPutsOf(sim.server, 'a');
      await sim.runFor(RENEW_DEADLINE_MS - 1);
      assert.equal(a.handle.isLeader(), true);
      // A blocked event loop: the clock passes the deadline before any timer fires.
      sim.clock.set(START + RENEW_DEADLINE_MS);
      assert.equal(a.signal?.aborted, false);
      assert.equal(a.handle.isLeader(), false);
      assert.equal(a.signal.aborted, true);
      assert.deepEqual(
        a.events.map((e) => e.kind),
        ['leader', 'started', 'aborted', 'stopped'],
      );
    });
  });

  it('rejects timings that cannot be safe', () => {
    const base = {
      kubeConfig: undefined as never,
      namespace: NS,
      name: LEASE,
      identity: 'a',
      logger: pino({ level: 'silent' }),
      onStartedLeading: () => undefined,
      onStoppedLeading: () => undefined,
    };
    assert.throws(() => startLeaderElection({ ...base, leaseDurationMs: 1500 }), /whole number/);
    assert.throws(
      () => startLeaderElection({ ...base, leaseDurationMs: 10_000, renewDeadlineMs: 10_000 }),
      /greater than renewDeadlineMs/,
    );
    assert.throws(
      () => startLeaderElection({ ...base, renewDeadlineMs: 2000, retryPeriodMs: 2000 }),
      /greater than retryPeriodMs/,
    );
    assert.throws(() => startLeaderElection({ ...base, identity: '' }), /identity/);
  });
});

describe('leader election (real timers)', () => {
  it('acquires, renews and hands over on release with short real durations', async () => {
    const server = await startFakeApiServer();
    const started = new Signal<string>();
    const leaders: string[] = [];
    const elect = (identity: string): LeaderElection =>
      startLeaderElection({
        kubeConfig: server.kubeConfig(),
        namespace: NS,
        name: LEASE,
        identity,
        leaseDurationMs: 5000,
        renewDeadlineMs: 500,
        retryPeriodMs: 50,
        logger: pino({ level: 'silent' }),
        onStartedLeading: () => {
          leaders.push(identity);
          started.emit(identity);
        },
        onStoppedLeading: () => undefined,
      });
    const a = elect('a');
    let b: LeaderElection | undefined;
    try {
      await waitUntil(
        (wake) => started.subscribe(wake),
        () => (a.isLeader() ? true : undefined),
        { what: 'a to lead' },
      );
      b = elect('b');
      const follower = b;
      await server.control.waitForRequest((r) => isPutBy('a')(r) && r.status === 200, {
        what: 'a renewal',
      });
      await waitUntil(
        (wake) => server.control.onRequest(wake),
        () => (follower.leader() === 'a' ? true : undefined),
        { what: 'b to see a' },
      );
      const releasedAt = Date.now();
      await a.stop({ release: true });
      await waitUntil(
        (wake) => started.subscribe(wake),
        () => (follower.isLeader() ? true : undefined),
        { what: 'b to lead' },
      );
      // Well before the 5 s lease could have expired: the release handed it over.
      assert.ok(Date.now() - releasedAt < 4000);
      assert.deepEqual(leaders, ['a', 'b']);
      assert.equal(leaseSpec(server)['holderIdentity'], 'b');
    } finally {
      await a.stop();
      await b?.stop();
      await server.close();
    }
  });
});
