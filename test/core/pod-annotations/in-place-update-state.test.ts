/** The in-place update state codec (src/core/pod-annotations/in-place-update-state.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  formatInPlaceUpdateStates,
  readInPlaceUpdateStates,
} from '../../../src/core/pod-annotations/in-place-update-state.js';

describe('in-place update state', () => {
  it('reads and writes in Go order, keeping extra fields', () => {
    const raw =
      '{"b":{"lastContainerStatuses":{"y":{"imageID":"i"},"x":null},"updateImages":true,"revision":"r","updateTimestamp":"t"},"a":null}';
    const states = readInPlaceUpdateStates(raw);
    assert.ok(states);
    assert.equal(
      formatInPlaceUpdateStates(states),
      '{"b":{"revision":"r","updateTimestamp":"t","lastContainerStatuses":{"x":{},"y":{"imageID":"i"}},"updateImages":true}}',
    );
    assert.deepEqual(readInPlaceUpdateStates('null'), {});
  });

  const bad = [
    'x',
    '[]',
    '{"a":1}',
    '{"a":{"revision":1}}',
    '{"a":{"lastContainerStatuses":[]}}',
    '{"a":{"lastContainerStatuses":{"c":1}}}',
    '{"a":{"lastContainerStatuses":{"c":{"imageID":1}}}}',
  ];
  for (const value of bad) {
    it(`${value} does not parse`, () => {
      assert.equal(readInPlaceUpdateStates(value), undefined);
    });
  }
});
