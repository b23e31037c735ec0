/** Property tests: budget, partition and determinism hold for random fleets and strategies. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';

import type { IntOrString, Pod } from '../../../src/core/api/k8s-types.js';
import type {
  SidecarSetUpdateStrategy,
  UpdatePriorityStrategy,
  UpdateScatterTerm,
} from '../../../src/core/api/sidecarset-types.js';
import { scaleMaxUnavailable } from '../../../src/core/encoding/intstr.js';
import { applyPodUpgrade } from '../../../src/core/rollout/simulate.js';
import { planUpgrade } from '../../../src/core/upgrade/plan.js';
import { simulateRollout } from '../../../src/core/rollout/simulate.js';
import { runsSpecReady, upgradePod, upgradeSidecarSet } from '../../support/upgrade-pods.js';

const now = new Date('2026-07-02T10:00:00Z');

const podArb = fc.record({
  state: fc.constantFrom(
    'old',
    'old',
    'old',
    'upgraded',
    'done',
    'notUpgradable',
    'previous',
    'previousDone',
  ),
  ready: fc.boolean(),
  phase: fc.constantFrom('Running', 'Running', 'Pending', 'Unknown'),
  scheduled: fc.boolean(),
  app: fc.constantFrom('a', 'b', 'c'),
  zone: fc.option(fc.constantFrom('z1', 'z2'), { nil: undefined }),
  canary: fc.boolean(),
  createdAt: fc.integer({ min: 0, max: 5 }),
  restarts: fc.integer({ min: 0, max: 2 }),
  namespace: fc.constantFrom('default', 'other'),
});

const intOrPercent = (max: number): fc.Arbitrary<IntOrString> =>
  fc.oneof(
    fc.integer({ min: 0, max }),
    fc.integer({ min: 0, max: 100 }).map((n) => `${n}%`),
  );

const strategyArb: fc.Arbitrary<SidecarSetUpdateStrategy> = fc.record(
  {
    partition: intOrPercent(40),
    maxUnavailable: intOrPercent(10),
    selector: fc.constant<NonNullable<SidecarSetUpdateStrategy['selector']>>({
      matchLabels: { canary: 'true' },
    }),
    priorityStrategy: fc.oneof(
      fc.constant<UpdatePriorityStrategy>({
        weightPriority: [{ weight: 50, matchSelector: { matchLabels: { app: 'a' } } }],
      }),
      fc.constant<UpdatePriorityStrategy>({ orderPriority: [{ orderedKey: 'zone' }] }),
    ),
    scatterStrategy: fc.oneof(
      fc.constant<UpdateScatterTerm[]>([{ key: 'app', value: '*' }]),
      fc.constant<UpdateScatterTerm[]>([{ key: 'app', value: 'b' }, { key: 'zone' }]),
    ),
  },
  { requiredKeys: [] },
);

type PodSpec = typeof podArb extends fc.Arbitrary<infer T> ? T : never;

function buildPods(specs: PodSpec[]): Pod[] {
  return specs.map((s, i) => {
    const labels: Record<string, string> = { app: s.app };
    if (s.zone !== undefined) labels['zone'] = s.zone;
    if (s.canary) labels['canary'] = 'true';
    return upgradePod(i, {
      namespace: s.namespace,
      labels,
      upgraded: s.state === 'upgraded' || s.state === 'previous',
      done: s.state === 'done' || s.state === 'previousDone',
      previous: s.state === 'previous' || s.state === 'previousDone',
      withoutImage: s.state === 'notUpgradable' ? 'without-old' : 'without-bbb',
      ready: s.ready,
      phase: s.phase,
      nodeName: s.scheduled ? 'node-1' : '',
      createdAt: s.createdAt,
      restarts: s.restarts,
    });
  });
}

function unavailableUpdated(pods: Pod[]): number {
  const s = planUpgrade(upgradeSidecarSet(), pods, { now }).status;
  return s.updatedPods - s.updatedReadyPods;
}

/**
 * Pods the controller wrote (updated, or upgraded in place to an earlier revision) that are not
 * Running and Ready on their spec image, counted from the pods alone: what maxUnavailable bounds.
 */
function unavailableWritten(pods: Pod[]): number {
  return pods.filter(
    (p) =>
      p.metadata.annotations?.['kruise.io/sidecarset-inplace-update-state'] !== undefined &&
      !runsSpecReady(p),
  ).length;
}

const fleet = fc.array(podArb, { minLength: 0, maxLength: 40 });

describe('planUpgrade properties', () => {
  it('applying the plan makes at most maxUnavailable pods unavailable (ready pods taken)', () => {
    fc.assert(
      fc.property(fleet, strategyArb, (specs, strategy) => {
        const pods = buildPods(specs);
        const ss = upgradeSidecarSet(strategy);
        const plan = planUpgrade(ss, pods, { now });
        const byName = new Map(plan.upgrade.map((u) => [u.pod.name, u]));
        const readyTaken = pods.filter((p) => {
          const taken = byName.has(p.metadata.name ?? '');
          return (
            taken && p.status?.phase === 'Running' && p.status.conditions?.[0]?.status === 'True'
          );
        }).length;
        const after = pods.map((p) => {
          const u = byName.get(p.metadata.name ?? '');
          return u === undefined ? p : applyPodUpgrade(p, u);
        });
        const before = unavailableUpdated(pods);
        const written = unavailableWritten(pods);
        assert.equal(plan.budget.unavailable, written);
        const k = scaleMaxUnavailable(strategy.maxUnavailable, pods.length);
        assert.ok(written + readyTaken <= Math.max(k, written));
        // Everything taken becomes updated and unavailable until the kubelet applies it.
        assert.equal(unavailableUpdated(after), before + plan.upgrade.length);
      }),
      { numRuns: 200 },
    );
  });

  it('never upgrades into the partition, over a whole simulated rollout', () => {
    fc.assert(
      fc.property(fleet, strategyArb, (specs, strategy) => {
        const pods = buildPods(specs);
        const ss = upgradeSidecarSet(strategy);
        const first = planUpgrade(ss, pods, { now });
        const sim = simulateRollout(ss, pods, { now });
        const upgraded = sim.waves.reduce((n, w) => n + w.pods.length, 0);
        assert.ok(
          first.upgrade.length <= Math.max(0, first.budget.candidates - first.budget.partition),
        );
        assert.ok(upgraded <= Math.max(0, first.budget.candidates - first.budget.partition));
        for (const w of sim.waves)
          assert.ok(w.unavailable <= Math.max(sim.maxUnavailable, first.budget.unavailable));
      }),
      { numRuns: 100 },
    );
  });

  it('the plan is identical when the input pods are shuffled', () => {
    fc.assert(
      fc.property(
        fleet.chain((specs) =>
          fc.tuple(
            fc.constant(specs),
            fc.shuffledSubarray(
              specs.map((_, i) => i),
              { minLength: specs.length },
            ),
          ),
        ),
        strategyArb,
        ([specs, order], strategy) => {
          const pods = buildPods(specs);
          const ss = upgradeSidecarSet(strategy);
          const a = planUpgrade(ss, pods, { now });
          const b = planUpgrade(
            ss,
            order.map((i) => pods[i] as Pod),
            { now },
          );
          assert.deepEqual(b, a);
        },
      ),
      { numRuns: 200 },
    );
  });
});
