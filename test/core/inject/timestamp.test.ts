import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';

import { timestampOf } from '../../../src/core/inject/pod-annotations.js';
import { diffAsJsonPatch } from '../../../src/core/mutation/patch.js';
import { formatTimestamp } from '../../../src/core/pod-annotations/pod-hash-annotation.js';

describe('timestampOf', () => {
  it('is formatTimestamp, whatever the order of the instants', () => {
    fc.assert(
      fc.property(
        fc.array(fc.date({ noInvalidDate: true, min: new Date(-1e13), max: new Date(1e13) })),
        (dates) => {
          for (const d of dates) assert.equal(timestampOf(d), formatTimestamp(d));
        },
      ),
    );
  });

  it('gives the same text within a second and a new one in the next', () => {
    assert.equal(timestampOf(new Date('2024-05-06T07:08:09.001Z')), '2024-05-06T07:08:09Z');
    assert.equal(timestampOf(new Date('2024-05-06T07:08:09.999Z')), '2024-05-06T07:08:09Z');
    assert.equal(timestampOf(new Date('2024-05-06T07:08:10.000Z')), '2024-05-06T07:08:10Z');
    assert.equal(timestampOf(new Date('1969-12-31T23:59:59.500Z')), '1969-12-31T23:59:59Z');
  });

  it('throws on an invalid date, as formatTimestamp does', () => {
    assert.throws(() => timestampOf(new Date(NaN)), RangeError);
  });
});

describe('diffAsJsonPatch paths', () => {
  it('escapes ~ and / in keys and leaves other keys as they are', () => {
    const ops = diffAsJsonPatch(
      { metadata: { annotations: { plain: 'a' } } },
      { metadata: { annotations: { plain: 'b', 'a/b~c': 'x' } } },
    );
    assert.deepEqual(
      ops.map((o) => o.path),
      ['/metadata/annotations/plain', '/metadata/annotations/a~1b~0c'],
    );
  });
});
