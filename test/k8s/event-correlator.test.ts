import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { EventCorrelator, correlationKey } from '../../src/k8s/event-correlator.js';
import type { ObjectReference } from '../../src/controller/ports.js';

const pod: ObjectReference = { kind: 'Pod', apiVersion: 'v1', name: 'web-0', namespace: 'ns' };

describe('EventCorrelator', () => {
  it('keys on the object, type and reason, not the message', () => {
    const key = correlationKey(pod, 'Normal', 'UpgradeStarted');
    assert.equal(key, correlationKey({ ...pod }, 'Normal', 'UpgradeStarted'));
    assert.notEqual(key, correlationKey(pod, 'Warning', 'UpgradeStarted'));
    assert.notEqual(key, correlationKey(pod, 'Normal', 'RolloutPaused'));
    assert.notEqual(key, correlationKey({ ...pod, uid: 'u' }, 'Normal', 'UpgradeStarted'));
  });

  it('remembers the most recently used entries, forgets on request', () => {
    const c = new EventCorrelator(2);
    c.remember('a', { namespace: 'ns', name: 'a.1', count: 1 });
    c.remember('b', { namespace: 'ns', name: 'b.1', count: 1 });
    assert.equal(c.lookup('a')?.name, 'a.1');
    c.remember('c', { namespace: 'ns', name: 'c.1', count: 1 });
    assert.equal(c.lookup('b'), undefined, 'the least recently used went');
    assert.equal(c.lookup('a')?.count, 1);
    c.forget('a');
    assert.equal(c.lookup('a'), undefined);
    assert.equal(c.lookup('c')?.name, 'c.1');
  });

  it('runs the sends of one key one after another, even after a failure', async () => {
    const c = new EventCorrelator();
    const order: string[] = [];
    const step =
      (label: string, ms: number, fail = false) =>
      async (): Promise<void> => {
        order.push(`${label} start`);
        await new Promise((resolve) => setTimeout(resolve, ms));
        order.push(`${label} end`);
        if (fail) throw new Error(label);
      };
    const first = c.serialize('k', step('1', 20, true));
    const second = c.serialize('k', step('2', 1));
    const other = c.serialize('other', step('x', 1));
    await assert.rejects(first, /1/);
    await Promise.all([second, other]);
    assert.deepEqual(
      order.filter((o) => !o.startsWith('x')),
      ['1 start', '1 end', '2 start', '2 end'],
    );
    assert.ok(order.indexOf('x end') < order.indexOf('1 end'), 'other keys do not wait');
  });
});
