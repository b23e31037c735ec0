/**
 * The missed-pods scanner over plain caches, writing to a writer that records what it is asked
 * to write: the counts, one event per missed pod, one aggregated event per SidecarSet when the
 * count grows, the status count beside an existing status.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { pino } from 'pino';

import type { Pod } from '../../src/core/api/k8s-types.js';
import { ANY_NAMESPACE } from '../../src/core/matching/match.js';
import type { SidecarSet } from '../../src/core/api/sidecarset-types.js';
import { MISSED_REASON, createMissedPodsScanner } from '../../src/controller/missed-pods.js';
import type { ClusterWriter, ObjectReference } from '../../src/controller/ports.js';
import { makePod, makeSidecarSet } from '../support/factories.js';

interface Recorded {
  events: { about: ObjectReference; type: string; reason: string; message: string }[];
  statuses: { name: string; status: unknown }[];
}

function recordingWriter(): ClusterWriter & Recorded {
  const events: Recorded['events'] = [];
  const statuses: Recorded['statuses'] = [];
  return {
    events,
    statuses,
    getPod: () => Promise.resolve(undefined),
    patchPod: () => Promise.resolve(),
    canResizePods: () => Promise.resolve(true),
    resizePod: () => Promise.resolve(),
    evictPod: () => Promise.resolve(false),
    setPodConditions: () => Promise.resolve(),
    writeSidecarSetStatus: (name, status) => {
      statuses.push({ name, status });
      return Promise.resolve();
    },
    event: (about, type, reason, message) => {
      events.push({ about, type, reason, message });
      return Promise.resolve();
    },
  };
}

function late(name: string, labels: Record<string, string> = { app: 'web' }): Pod {
  const pod = makePod({ name, namespace: 'shop', labels });
  pod.metadata.creationTimestamp = '2026-12-01T12:00:05Z';
  return pod;
}

describe('createMissedPodsScanner', () => {
  it('counts, and reports each pod once and the SidecarSet when its count grows', async () => {
    const ss: SidecarSet = makeSidecarSet('agent');
    ss.metadata.creationTimestamp = '2026-12-01T12:00:00Z';
    ss.status = { matchedPods: 0, updatedPods: 0, readyPods: 0 };
    const other = makeSidecarSet('other', { selector: { matchLabels: { app: 'db' } } });
    other.metadata.creationTimestamp = '2026-12-01T12:00:00Z';
    let pods = [late('a'), late('b')];
    const writer = recordingWriter();
    const counts: Map<string, number>[] = [];
    const scanner = createMissedPodsScanner({
      sidecarSets: () => [ss, other],
      pods: () => pods,
      namespaces: ANY_NAMESPACE,
      webhookSelectors: () => ({}),
      writer,
      logger: pino({ level: 'silent' }),
      onCounts: (c) => counts.push(new Map(c)),
    });

    await scanner.scan();
    assert.deepEqual(
      counts.at(-1),
      new Map([
        ['agent', 2],
        ['other', 0],
      ]),
    );
    const podEvents = writer.events.filter((e) => e.about.kind === 'Pod');
    assert.deepEqual(
      podEvents.map((e) => [e.about.name, e.type, e.reason]),
      [
        ['a', 'Warning', MISSED_REASON],
        ['b', 'Warning', MISSED_REASON],
      ],
    );
    const setEvents = writer.events.filter((e) => e.about.kind === 'SidecarSet');
    assert.equal(setEvents.length, 1);
    assert.match(setEvents[0]?.message ?? '', /^2 pods .*shop\/a, shop\/b$/);
    assert.deepEqual(writer.statuses, [{ name: 'agent', status: { missedPods: 2 } }]);

    await scanner.scan();
    assert.equal(writer.events.length, 3, 'nothing new: no event again');

    pods = [...pods, late('c')];
    await scanner.scan();
    assert.deepEqual(
      writer.events.slice(3).map((e) => [e.about.kind, e.about.name]),
      [
        ['Pod', 'c'],
        ['SidecarSet', 'agent'],
      ],
    );
    assert.equal(counts.at(-1)?.get('agent'), 3);
  });

  it('reports a pod recreated under the same name and missed again', async () => {
    const ss = makeSidecarSet('agent');
    ss.metadata.creationTimestamp = '2026-12-01T12:00:00Z';
    let pods = [late('web-0')];
    const writer = recordingWriter();
    const scanner = createMissedPodsScanner({
      sidecarSets: () => [ss],
      pods: () => pods,
      namespaces: ANY_NAMESPACE,
      webhookSelectors: () => ({}),
      writer,
      logger: pino({ level: 'silent' }),
    });
    const podEvents = (): string[] =>
      writer.events.filter((e) => e.about.kind === 'Pod').map((e) => e.about.name);
    await scanner.scan();
    assert.deepEqual(podEvents(), ['web-0']);
    pods = [];
    await scanner.scan();
    pods = [late('web-0')];
    await scanner.scan();
    assert.deepEqual(podEvents(), ['web-0', 'web-0'], 'the new pod gets its own event');
    await scanner.scan();
    assert.equal(podEvents().length, 2, 'once while it stays missed');
  });

  it('writes no count beside a status the reconcile has not written yet', async () => {
    const ss = makeSidecarSet('agent');
    ss.metadata.creationTimestamp = '2026-12-01T12:00:00Z';
    const writer = recordingWriter();
    const scanner = createMissedPodsScanner({
      sidecarSets: () => [ss],
      pods: () => [late('a')],
      namespaces: ANY_NAMESPACE,
      webhookSelectors: () => ({}),
      writer,
      logger: pino({ level: 'silent' }),
    });
    await scanner.scan();
    assert.deepEqual(writer.statuses, []);
    assert.equal(writer.events.length, 2);
  });

  it('scans when it starts leading and after a change, until leadership ends', async () => {
    const ss = makeSidecarSet('agent');
    ss.metadata.creationTimestamp = '2026-12-01T12:00:00Z';
    const passes: number[] = [];
    const scanner = createMissedPodsScanner({
      sidecarSets: () => [ss],
      pods: () => [],
      namespaces: ANY_NAMESPACE,
      webhookSelectors: () => ({}),
      writer: recordingWriter(),
      logger: pino({ level: 'silent' }),
      debounceMs: 1,
      onCounts: () => passes.push(Date.now()),
    });
    const leadership = new AbortController();
    scanner.changed();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(passes.length, 0, 'not leading: no pass');
    scanner.lead(leadership.signal);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(passes.length, 1);
    scanner.changed();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(passes.length, 2);
    leadership.abort();
    scanner.changed();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(passes.length, 2);
  });

  it('a pass that throws is logged, does not end the process, and the next pass runs', async () => {
    const ss = makeSidecarSet('agent');
    ss.metadata.creationTimestamp = '2026-12-01T12:00:00Z';
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    const logged: string[] = [];
    const logger = pino(
      { level: 'error' },
      { write: (line: string) => logged.push((JSON.parse(line) as { msg: string }).msg) },
    );
    let calls = 0;
    const passes: number[] = [];
    const scanner = createMissedPodsScanner({
      sidecarSets: () => [ss],
      pods: () => {
        calls++;
        if (calls === 1) throw new Error('the pod cache is broken');
        return [];
      },
      namespaces: ANY_NAMESPACE,
      webhookSelectors: () => ({}),
      writer: recordingWriter(),
      logger,
      resyncMs: 5,
      onCounts: () => passes.push(calls),
    });
    const leadership = new AbortController();
    try {
      scanner.lead(leadership.signal);
      await new Promise((r) => setTimeout(r, 40));
    } finally {
      leadership.abort();
      process.off('unhandledRejection', onUnhandled);
    }
    assert.deepEqual(unhandled, []);
    assert.deepEqual(logged.slice(0, 1), ['cannot scan for missed pods']);
    assert.ok(passes.length >= 1, 'the next pass ran');
  });

  it('a pass under way when leadership ends writes nothing more, and no pass follows', async () => {
    const ss = makeSidecarSet('agent');
    ss.metadata.creationTimestamp = '2026-12-01T12:00:00Z';
    ss.status = { matchedPods: 0, updatedPods: 0, readyPods: 0 };
    const writer = recordingWriter();
    // The first event is held until leadership has ended.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const record = writer.event.bind(writer);
    let calls = 0;
    writer.event = async (...args) => {
      calls++;
      if (calls === 1) await held;
      return record(...args);
    };
    const passes: Map<string, number>[] = [];
    const scanner = createMissedPodsScanner({
      sidecarSets: () => [ss],
      pods: () => [late('a'), late('b')],
      namespaces: ANY_NAMESPACE,
      webhookSelectors: () => ({}),
      writer,
      logger: pino({ level: 'silent' }),
      resyncMs: 5,
      onCounts: (c) => passes.push(new Map(c)),
    });
    const leadership = new AbortController();
    scanner.lead(leadership.signal);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(calls, 1, 'the pass waits on its first event');
    leadership.abort();
    release();
    await new Promise((r) => setTimeout(r, 30));
    assert.deepEqual(
      writer.events.map((e) => e.about.name),
      ['a'],
      'only the event sent before the end',
    );
    assert.deepEqual(writer.statuses, [], 'no status count written after the end');
    assert.equal(passes.length, 1, 'no pass after the end');
    await scanner.scan();
    assert.equal(passes.length, 1, 'a pass asked for after the end reports nothing');
  });
});
