import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';

import { pino } from 'pino';

import type { ShutdownStep } from '../../src/cli/shutdown-steps.js';
import { runShutdownSteps } from '../../src/cli/shutdown-steps.js';

function recordingLogger(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      callback();
    },
  });
  return { logger: pino({ base: null }, stream), lines };
}

describe('runShutdownSteps', () => {
  it('stops the last started first, goes on after a failure, and runs once', async () => {
    const { logger, lines } = recordingLogger();
    const order: string[] = [];
    const step = (what: string, fail = false): ShutdownStep => ({
      what,
      stop: () => {
        order.push(what);
        return fail ? Promise.reject(new Error(`${what} broke`)) : Promise.resolve();
      },
    });
    const steps = [step('cache'), step('controller', true), step('server')];
    await runShutdownSteps(steps, logger);
    assert.deepEqual(order, ['server', 'controller', 'cache']);
    const errors = lines.filter((l) => l['msg'] === 'error while stopping');
    assert.deepEqual(
      errors.map((l) => l['stopping']),
      ['controller'],
    );
    await runShutdownSteps(steps, logger);
    assert.equal(order.length, 3, 'nothing left to stop');
  });

  it('names a step that is slow while it runs', async () => {
    const { logger, lines } = recordingLogger();
    await runShutdownSteps(
      [
        { what: 'quick', stop: () => Promise.resolve() },
        { what: 'stuck watch', stop: () => sleep(80) },
      ],
      logger,
      20,
    );
    await sleep(40);
    const slow = lines.filter((l) => l['msg'] === 'still stopping');
    assert.deepEqual(
      slow.map((l) => l['stopping']),
      ['stuck watch'],
    );
  });
});
