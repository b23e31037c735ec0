/** registerLatestRevision's writes, against a recording RevisionWriter. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { pino } from 'pino';

import { SIDECARSET_CUSTOM_VERSION_LABEL } from '../../src/core/api/annotations.js';
import type { NewRevision, StoredRevision } from '../../src/core/revisions/history.js';
import { revisionData, revisionHash } from '../../src/core/revisions/history.js';
import { withHashes } from '../../src/core/api/hash.js';
import type { SidecarSet } from '../../src/core/api/sidecarset-types.js';
import { dryRunRevisionWriter, registerLatestRevision } from '../../src/controller/revisions.js';
import type { CreateOutcome, RevisionWriter } from '../../src/k8s/revisions.js';

const log = pino({ level: 'silent' });

function sidecarSet(image: string, labels: Record<string, string> = {}): SidecarSet {
  return withHashes({
    metadata: { name: 'agent', labels },
    spec: { containers: [{ name: 'agent', image }], revisionHistoryLimit: 1 },
  });
}

function recorder(outcomes: CreateOutcome[] = []): { writer: RevisionWriter; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    writer: {
      create: (r: NewRevision) => {
        calls.push(`create ${r.name} #${r.revision}`);
        return Promise.resolve(outcomes.shift() ?? { kind: 'created' });
      },
      renumber: (name, revision) => {
        calls.push(`renumber ${name} #${revision}`);
        return Promise.resolve();
      },
      setLabel: (name, key, value) => {
        calls.push(`label ${name} ${key}=${value}`);
        return Promise.resolve();
      },
      delete: (name) => {
        calls.push(`delete ${name}`);
        return name === 'broken' ? Promise.reject(new Error('boom')) : Promise.resolve();
      },
    },
  };
}

function stored(ss: SidecarSet, name: string, revision: number): StoredRevision {
  return {
    name,
    revision,
    data: revisionData(ss),
    labels: { 'kruise.io/sidecarset-name': 'agent' },
    annotations: {},
  };
}

describe('registerLatestRevision', () => {
  it('retries with a higher collision count when the API holds the name with other data', async () => {
    const ss = sidecarSet('agent:1');
    const data = revisionData(ss);
    const { writer, calls } = recorder([
      { kind: 'exists', sameData: false },
      { kind: 'exists', sameData: true },
    ]);
    const result = await registerLatestRevision(ss, [], [], writer, log);
    assert.deepEqual(result, {
      latestRevision: `agent-${revisionHash(data, 1)}`,
      collisionCount: 1,
    });
    assert.deepEqual(calls, [
      `create agent-${revisionHash(data, 0)} #1`,
      `create agent-${revisionHash(data, 1)} #1`,
    ]);
  });

  it('gives up after too many collisions', async () => {
    const outcomes = Array.from({ length: 20 }, (): CreateOutcome => ({
      kind: 'exists',
      sameData: false,
    }));
    await assert.rejects(
      registerLatestRevision(sidecarSet('agent:1'), [], [], recorder(outcomes).writer, log),
      /too many hash collisions/,
    );
  });

  it('renumbers on rollback, labels the custom version, and survives a failed truncation', async () => {
    const old = sidecarSet('agent:1');
    const existing = [
      stored(sidecarSet('agent:0'), 'broken', 1),
      stored(old, 'agent-one', 2),
      stored(sidecarSet('agent:2'), 'agent-two', 3),
    ];
    const { writer, calls } = recorder();
    const result = await registerLatestRevision(
      sidecarSet('agent:1', { [SIDECARSET_CUSTOM_VERSION_LABEL]: 'v1' }),
      [],
      existing,
      writer,
      log,
    );
    assert.deepEqual(result, { latestRevision: 'agent-one', collisionCount: 0 });
    assert.deepEqual(calls, [
      'renumber agent-one #4',
      `label agent-one ${SIDECARSET_CUSTOM_VERSION_LABEL}=v1`,
      'delete broken',
    ]);
  });

  it('warns when revisions in use keep the history over its limit', async () => {
    const ss: SidecarSet = {
      ...sidecarSet('agent:3'),
      spec: {
        ...sidecarSet('agent:3').spec,
        injectionStrategy: { revision: { revisionName: 'agent-one' } },
      },
    };
    const { writer, calls } = recorder();
    await registerLatestRevision(
      ss,
      [],
      [stored(sidecarSet('agent:1'), 'agent-one', 1)],
      writer,
      log,
    );
    assert.equal(calls.length, 1);
  });

  it('writes nothing in a dry run', async () => {
    const lines: string[] = [];
    const writer = dryRunRevisionWriter((msg) => lines.push(msg));
    assert.deepEqual(await writer.create({} as NewRevision, sidecarSet('x')), { kind: 'created' });
    await writer.renumber('a', 2);
    await writer.setLabel('a', 'k', 'v');
    await writer.delete('a');
    assert.equal(lines.length, 4);
  });
});
