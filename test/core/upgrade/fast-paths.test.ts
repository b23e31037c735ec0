/**
 * The planner's fast paths give what the plain definitions give: the memo of hash-annotation
 * answers, the numeric candidate order, and the quoting shortcut of the annotation writers.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';

import { goJsonString } from '../../../src/core/json.js';
import type { Pod } from '../../../src/core/k8s-types.js';
import {
  formatPodSidecarSetHashes,
  formatTimestamp,
  parsePodSidecarSetHashes,
  quotedGoJson,
} from '../../../src/core/pod-hash-annotation.js';
import type { UpdatePriorityStrategy } from '../../../src/core/sidecarset-types.js';
import { sortCandidates } from '../../../src/core/upgrade/order.js';
import { planUpgrade } from '../../../src/core/upgrade/plan.js';
import type { LabelSelector } from '../../../src/core/k8s-types.js';
import {
  safeMatches,
  selectorMatcher,
  sidecarSetContext,
} from '../../../src/core/upgrade/context.js';
import { buildPodUpgrade, podUpgradeBuilder } from '../../../src/core/upgrade/change.js';
import {
  hashRecordMatcher,
  readInPlaceUpdateStates,
  recordedStatusesReader,
  recordsHash,
} from '../../../src/core/upgrade/pod-records.js';
import {
  isInjectedBy,
  isStateConsistent,
  upgradability,
} from '../../../src/core/upgrade/pod-state.js';
import {
  asCandidates,
  candidateComparator,
  orderKey,
  sortCandidatesByComparator,
} from '../../support/candidate-order.js';
import { names, upgradePod, upgradeSidecarSet } from '../../support/upgrade-pods.js';

const now = new Date('2026-07-02T10:00:00Z');
const HASH = 'kruise.io/sidecarset-hash';
const WITHOUT_IMAGE = 'kruise.io/sidecarset-hash-without-image';

describe('hash annotation memo', () => {
  it('answers as recordsHash does, for repeated values too', () => {
    const values = [
      undefined,
      '',
      'not json',
      '{"s":{"hash":"h"}}',
      '{"s":"h"}',
      '{"s":{"hash":"\\u0068"}}',
      '{"s":{"hash":"other"}}',
      '{"t":{"hash":"h"}}',
      '{"s":{"hash":"h"},"t":"x"}',
    ];
    for (const hash of ['h', '', 'other']) {
      const matches = hashRecordMatcher('s', hash);
      for (const value of [...values, ...values]) {
        assert.equal(matches(value), recordsHash(value, 's', hash), `${value} against "${hash}"`);
      }
    }
  });

  it('pods sharing one annotation value are still judged on their own other fields', () => {
    const annotation = (pod: Pod, key: string): string => pod.metadata.annotations?.[key] ?? '';
    const ready = upgradePod(0);
    const notReady = upgradePod(1, { ready: false });
    const changed = upgradePod(2, { withoutImage: 'without-old' });
    const upgraded = upgradePod(3, { upgraded: true });
    const done = upgradePod(4, { done: true });
    // The very same strings on every pod: only the memo's key is shared.
    for (const pod of [notReady, changed]) {
      const annotations = pod.metadata.annotations ?? {};
      annotations[HASH] = annotation(ready, HASH);
      if (pod !== changed) annotations[WITHOUT_IMAGE] = annotation(ready, WITHOUT_IMAGE);
    }
    assert.equal(annotation(notReady, HASH), annotation(ready, HASH));
    assert.notEqual(annotation(changed, WITHOUT_IMAGE), annotation(ready, WITHOUT_IMAGE));
    assert.equal(annotation(done, HASH), annotation(upgraded, HASH));
    const plan = planUpgrade(
      upgradeSidecarSet({ maxUnavailable: 1 }),
      [ready, notReady, changed, upgraded, done],
      { now },
    );
    // The not-ready pod needs no budget and goes first; the ready one takes the one slot.
    assert.deepEqual(names(plan.upgrade), ['pod-1']);
    assert.deepEqual(
      plan.held.map((h) => [h.pod.name, h.reason]),
      [['pod-0', 'MaxUnavailable']],
    );
    assert.deepEqual(
      plan.notUpgradable.map((p) => p.pod.name),
      ['pod-2'],
    );
    assert.equal(plan.status.updatedPods, 2);
    assert.equal(plan.status.updatedReadyPods, 1);
  });
});

describe('selectorMatcher', () => {
  it('answers as safeMatches does', () => {
    const keys = fc.constantFrom('a', 'b', 'constructor');
    const values = fc.array(fc.constantFrom('1', '2', ''), { maxLength: 2 });
    const requirement = fc.record({
      key: keys,
      operator: fc.constantFrom('In', 'NotIn', 'Exists', 'DoesNotExist', 'Bad'),
      values,
    });
    const selector: fc.Arbitrary<LabelSelector> = fc.record(
      {
        matchLabels: fc.dictionary(keys, fc.constantFrom('1', '2')),
        matchExpressions: fc.array(requirement, { maxLength: 3 }),
      },
      { requiredKeys: [] },
    );
    const labels = fc.dictionary(keys, fc.constantFrom('1', '2', ''));
    fc.assert(
      fc.property(selector, fc.array(labels, { maxLength: 5 }), (sel, pods) => {
        const matches = selectorMatcher(sel);
        for (const l of pods) assert.equal(matches(l), safeMatches(sel, l));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('isInjectedBy', () => {
  it('reads the list as split(",").includes does', () => {
    const lists = [
      's',
      'a,s',
      's,a',
      'a,s,b',
      'ss',
      'as,sa',
      'a,ss,s',
      ',',
      'a,,b',
      ',a',
      'a,',
      'a',
    ];
    for (const name of ['s', '', 'a,s']) {
      const ss = upgradeSidecarSet();
      ss.metadata.name = name;
      const ctx = sidecarSetContext(ss);
      for (const list of lists) {
        const pod = upgradePod(0);
        const annotations = pod.metadata.annotations ?? {};
        annotations['kruise.io/sidecarset-injected-list'] = list;
        assert.equal(
          isInjectedBy(ctx, pod),
          list.split(',').includes(name),
          `"${name}" in "${list}"`,
        );
      }
    }
  });
});

const times = fc.oneof(
  fc.integer({ min: 0, max: 4 }).map((s) => `2026-01-01T00:00:0${s}Z`),
  fc.constantFrom(
    '',
    '0001-01-01T00:00:00Z',
    '2026-01-01T00:00:02.500Z',
    '2026-01-01T00:00:03+00:00',
    'not a time',
    '2026-01-01T00:00:0xZ',
    '+010000-01-01T00:00:00Z',
  ),
);

const podArb = fc.record({
  ready: fc.boolean(),
  phase: fc.constantFrom('Running', 'Pending', 'Unknown', 'Failed', 'constructor'),
  scheduled: fc.boolean(),
  app: fc.constantFrom('a', 'b'),
  zone: fc.option(fc.constantFrom('sts-1', 'sts-20', 'x'), { nil: undefined }),
  created: times,
  readySince: times,
  restarts: fc.integer({ min: 0, max: 2 }),
  namespace: fc.constantFrom('default', 'other'),
});

function buildPods(specs: (typeof podArb extends fc.Arbitrary<infer T> ? T : never)[]): Pod[] {
  return specs.map((s, i) => {
    const labels: Record<string, string> = { app: s.app };
    if (s.zone !== undefined) labels['zone'] = s.zone;
    const pod = upgradePod(i, {
      namespace: s.namespace,
      labels,
      ready: s.ready,
      phase: s.phase,
      nodeName: s.scheduled ? 'node-1' : '',
      restarts: s.restarts,
    });
    pod.metadata.creationTimestamp = s.created;
    const condition = pod.status?.conditions?.[0];
    if (condition !== undefined) condition.lastTransitionTime = s.readySince;
    return pod;
  });
}

describe('sortCandidates', () => {
  it('orders exactly as its plain twin, the field-by-field comparator', () => {
    const priorities: (UpdatePriorityStrategy | undefined)[] = [
      undefined,
      {
        weightPriority: [
          { weight: 50, matchSelector: { matchLabels: { app: 'a' } } },
          {
            weight: 20,
            matchSelector: { matchExpressions: [{ key: 'zone', operator: 'Exists' }] },
          },
          { weight: 90, matchSelector: { matchExpressions: [{ key: 'app', operator: 'In' }] } },
        ],
      },
      { orderPriority: [{ orderedKey: 'zone' }, { orderedKey: 'app' }] },
    ];
    fc.assert(
      fc.property(
        fc.array(podArb, { maxLength: 40 }),
        fc.constantFrom(...priorities),
        (specs, p) => {
          const candidates = asCandidates(buildPods(specs));
          assert.deepEqual(
            sortCandidates(candidates, p),
            sortCandidatesByComparator(candidates, p),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('annotation writers', () => {
  it('quotedGoJson is goJsonString', () => {
    const samples = ['', 'plain', 'a"b', 'a\\b', '<tag>', 'a&b', 'tab\t', '\u2028', 'é', '~/'];
    for (const s of samples) assert.equal(quotedGoJson(s), goJsonString(s));
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => quotedGoJson(s) === goJsonString(s)),
      { numRuns: 500 },
    );
  });

  it('formatTimestamp drops the milliseconds, far years included', () => {
    assert.equal(formatTimestamp(new Date('2026-07-02T10:00:00.123Z')), '2026-07-02T10:00:00Z');
    assert.equal(formatTimestamp(new Date('+010000-01-01T00:00:00Z')), '+010000-01-01T00:00:00Z');
  });
});

describe("the plan's candidate order", () => {
  it("is candidateComparator's (namespace/name last), whatever order the pods come in", () => {
    const priorities: (UpdatePriorityStrategy | undefined)[] = [
      undefined,
      { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { app: 'a' } } }] },
      { orderPriority: [{ orderedKey: 'zone' }] },
    ];
    fc.assert(
      fc.property(
        fc.array(podArb, { maxLength: 40 }),
        fc.constantFrom(...priorities),
        fc.nat(),
        (specs, priority, turn) => {
          const pods = buildPods(specs);
          const at = pods.length === 0 ? 0 : turn % pods.length;
          const given = [...pods.slice(at), ...pods.slice(0, at)].reverse();
          const ss = upgradeSidecarSet({
            maxUnavailable: 2,
            partition: 1,
            ...(priority === undefined ? {} : { priorityStrategy: priority }),
          });
          const plan = planUpgrade(ss, given, { now });
          const excluded = new Set(plan.excluded.map((e) => e.pod.name));
          const compare = candidateComparator(priority);
          const expected = pods
            .filter((pod) => !excluded.has(pod.metadata.name ?? ''))
            .map((pod) => orderKey(pod, pod.metadata.namespace ?? '', priority))
            .sort(compare)
            .map((k) => k.name);
          const listed = [
            ...plan.upgrade.map((u) => u.pod.name),
            ...plan.held
              .filter((h) => h.reason === 'MaxUnavailable' || h.reason === 'Partition')
              .map((h) => h.pod.name),
          ];
          assert.deepEqual(listed, expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('podUpgradeBuilder', () => {
  it('gives each pod what buildPodUpgrade alone gives, whatever hash annotations the pods share', () => {
    const ss = upgradeSidecarSet({}, { latestRevision: 'rev-2' });
    const ctx = sidecarSetContext(ss);
    const objectForm = upgradePod(0).metadata.annotations?.[HASH] ?? '';
    const legacy = '{"test-sidecarset":"aaa","other":"o"}';
    const values: (string | undefined)[] = [objectForm, legacy, undefined, 'not json', objectForm];
    const pods = [...values, ...values].map((value, i) => {
      const pod = upgradePod(i);
      const annotations = pod.metadata.annotations ?? {};
      if (value === undefined) delete annotations[HASH];
      else annotations[HASH] = value;
      // Legacy pods carry a legacy without-image map too, which the rewrite converts.
      if (value === legacy) annotations[WITHOUT_IMAGE] = `{"test-sidecarset":"w${i}"}`;
      return pod;
    });
    const build = podUpgradeBuilder(ctx, [], now);
    const ref = (pod: Pod): { namespace: string; name: string } => ({
      namespace: pod.metadata.namespace ?? '',
      name: pod.metadata.name ?? '',
    });
    const together = pods.map((pod) => build(pod, ref(pod)));
    const alone = pods.map((pod) => buildPodUpgrade(ctx, pod, ref(pod), [], now));
    assert.deepEqual(together, alone);
    // The legacy pods' own without-image values survive the shared rewrite.
    assert.match(together[1]?.annotations[WITHOUT_IMAGE] ?? '', /"hash":"w1"/);
    assert.match(together[6]?.annotations[WITHOUT_IMAGE] ?? '', /"hash":"w6"/);
    // Each upgrade has its own hash entry: changing one leaves the others alone.
    together[0]?.hashEntry.sidecarList?.push('x');
    assert.deepEqual(together[4]?.hashEntry.sidecarList, ['test-sidecar']);
  });

  it('writes the parsed map with this SidecarSet entry replaced, however the value is laid out', () => {
    const ctx = sidecarSetContext(upgradeSidecarSet({}, { latestRevision: 'rev-2' }));
    const entry = (name: string, hash: string, extra = ''): string =>
      `"${name}":{"updateTimestamp":"2025-01-01T00:00:00Z","hash":"${hash}","sidecarSetName":"${name}","sidecarList":["c"]${extra}}`;
    const values = [
      `{${entry('test-sidecarset', 'aaa')}}`,
      `{${entry('test-sidecarset', 'aaa', ',"controllerRevision":"rev-1"')}}`,
      `{ ${entry('test-sidecarset', 'aaa')}}`,
      `{${entry('other', 'o')},${entry('test-sidecarset', 'aaa')}}`,
      `{${entry('other', 'o')}}`,
      `{${entry('test-sidecarset', 'a\\u0061a')}}`,
    ];
    const build = podUpgradeBuilder(ctx, [], now);
    for (const [i, value] of [...values, ...values].entries()) {
      const pod = upgradePod(i);
      const annotations = pod.metadata.annotations ?? {};
      annotations[HASH] = value;
      const upgrade = build(pod, { namespace: 'default', name: `pod-${i}` });
      const expected = formatPodSidecarSetHashes({
        ...parsePodSidecarSetHashes(value, HASH),
        'test-sidecarset': upgrade.hashEntry,
      });
      assert.equal(upgrade.annotations[HASH], expected, value);
      assert.equal(upgrade.annotations[WITHOUT_IMAGE], undefined);
    }
  });
});

describe('in-place update state memo', () => {
  it('answers as reading the annotation does, for repeated values too', () => {
    const values = [
      '',
      'null',
      'not json',
      '[]',
      '{"test-sidecarset":null}',
      '{"test-sidecarset":{"revision":"r","lastContainerStatuses":{"c":{"imageID":"i"}}}}',
      '{"other":{"revision":"r","lastContainerStatuses":{"c":{"imageID":"i"}}}}',
      '{"test-sidecarset":{"revision":1}}',
    ];
    const read = recordedStatusesReader('test-sidecarset');
    for (const value of [...values, ...values]) {
      const states = readInPlaceUpdateStates(value);
      const expected =
        states === undefined ? undefined : (states['test-sidecarset']?.lastContainerStatuses ?? {});
      assert.deepEqual(read(value), expected, value);
    }
  });

  it('upgradability given the pod-wide consistency answers as it does alone (one sidecar)', () => {
    const ctx = sidecarSetContext(upgradeSidecarSet());
    const inFlight = upgradePod(1, { upgraded: true });
    // An upgraded pod whose kubelet has not applied v2 yet, offered again as an old pod.
    const annotations = inFlight.metadata.annotations ?? {};
    annotations[HASH] = upgradePod(0).metadata.annotations?.[HASH] ?? '';
    const pods = [upgradePod(0), upgradePod(2, { ready: false }), inFlight];
    const verdicts = pods.map((pod) => upgradability(ctx, pod));
    assert.deepEqual(verdicts, ['candidate', 'candidate', 'inFlight']);
    for (const [k, pod] of pods.entries()) {
      assert.equal(upgradability(ctx, pod, isStateConsistent(ctx, pod)), verdicts[k]);
    }
  });
});
