import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, it } from 'node:test';

import { pino } from 'pino';

import { writeLinesTogether } from '../../src/server/log-batching.js';

/** A destination that records each write it is asked to do, as the lines it holds. */
function recordingStream(): { stream: Writable; writes: string[][] } {
  const writes: string[][] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      writes.push([chunk.toString()]);
      callback();
    },
    writev(chunks, callback) {
      writes.push(chunks.map(({ chunk }) => String(chunk)));
      callback();
    },
  });
  return { stream, writes };
}

const messages = (writes: string[][]): string[] =>
  writes.flat().map((line) => (JSON.parse(line) as { msg: string }).msg);

describe('writeLinesTogether', () => {
  it('sends the lines of one turn in one write, in order, at the end of the turn', async () => {
    const { stream, writes } = recordingStream();
    const logger = pino({ base: null }, stream);
    const together = writeLinesTogether(stream);
    for (const msg of ['a', 'b', 'c']) {
      together();
      logger.info(msg);
    }
    assert.deepEqual(writes, [], 'held until the end of the turn');
    await nextTurn();
    assert.equal(writes.length, 1);
    assert.deepEqual(messages(writes), ['a', 'b', 'c']);

    together();
    logger.child({ uid: 'u' }).warn('d');
    await nextTurn();
    assert.equal(writes.length, 2);
    assert.deepEqual(messages(writes), ['a', 'b', 'c', 'd']);
  });

  it('leaves lines written without it alone', async () => {
    const { stream, writes } = recordingStream();
    const logger = pino({ base: null }, stream);
    writeLinesTogether(stream);
    logger.info('a');
    logger.info('b');
    await nextTurn();
    assert.deepEqual(writes.length, 2);
    assert.deepEqual(messages(writes), ['a', 'b']);
  });

  it('does nothing to a destination that is not a Node stream', async () => {
    const lines: string[] = [];
    const destination = { write: (line: string) => lines.push(line) > 0 };
    const logger = pino({ base: null }, destination);
    const together = writeLinesTogether(destination as unknown as NodeJS.WritableStream);
    together();
    logger.info('a');
    assert.equal(lines.length, 1, 'written at once');
    await nextTurn();
    assert.equal(lines.length, 1);
  });
});
