/** The codec of the pod hash annotations (src/core/pod-annotations/pod-hash-annotation.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  formatTimestamp,
  readHashes,
  recordedHash,
} from '../../../src/core/pod-annotations/pod-hash-annotation.js';

describe('hash annotation reading (TestGetPodSidecarSetRevision)', () => {
  const cases: [string | undefined, string][] = [
    ['{"test-sidecarset":{"hash":"aaa","sidecarSetName":"test-sidecarset"}}', 'aaa'],
    ['{"test-sidecarset":"aaa"}', 'aaa'],
    ['garbage', ''],
    ['[1]', ''],
    ['{"test-sidecarset":"aaa","other":{"hash":"x"}}', ''],
    ['{"test-sidecarset":5}', ''],
    ['{"test-sidecarset":{"hash":5}}', ''],
    ['{"other":{"hash":"x"}}', ''],
    [undefined, ''],
    ['', ''],
  ];
  for (const [value, expected] of cases) {
    it(`${String(value)} → "${expected}"`, () => {
      assert.equal(recordedHash(value, 'test-sidecarset'), expected);
    });
  }

  it('readHashes names the form', () => {
    assert.equal(readHashes('{"a":"b"}').form, 'legacy');
    assert.equal(readHashes('{}').form, 'object');
    assert.equal(readHashes('x').form, 'invalid');
    assert.equal(readHashes(undefined).form, 'absent');
  });
});

describe('formatTimestamp', () => {
  it('formatTimestamp drops the milliseconds, far years included', () => {
    assert.equal(formatTimestamp(new Date('2026-07-02T10:00:00.123Z')), '2026-07-02T10:00:00Z');
    assert.equal(formatTimestamp(new Date('+010000-01-01T00:00:00Z')), '+010000-01-01T00:00:00Z');
  });
});
