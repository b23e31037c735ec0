import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { scaleMaxUnavailable, scalePartition } from '../../../src/core/encoding/intstr.js';
import type { IntOrString } from '../../../src/core/api/k8s-types.js';

describe('scalePartition (CalculatePartitionReplicas)', () => {
  const cases: [IntOrString | undefined, number, number][] = [
    [undefined, 10, 0],
    [0, 10, 0],
    [3, 10, 3],
    [30, 10, 10],
    [-2, 10, 0],
    [980, 1000, 980],
    ['18%', 1000, 180],
    ['10%', 1000, 100],
    ['50%', 7, 4],
    ['99%', 5, 4],
    ['1%', 5, 1],
    ['100%', 5, 5],
    ['50%', 1, 1],
    ['100%', 1, 1],
    ['0%', 5, 0],
    ['12.5%', 8, 1],
    ['150%', 4, 4],
    ['-50%', 4, 0],
    ['50', 4, 0],
    ['abc%', 4, 0],
    ['0x10%', 4, 0],
    ['%', 4, 0],
    ['50%', 0, 0],
  ];
  for (const [partition, matched, expected] of cases) {
    it(`${JSON.stringify(partition)} of ${matched} keeps ${expected}`, () => {
      assert.equal(scalePartition(partition, matched), expected);
    });
  }
});

describe('scalePartition: TestCalculatePartitionReplicas (pkg/util/tools_test.go)', () => {
  // Go's nil replicas means 1; an illegal value ("99") scales to 0, as the controller ignores the error.
  const cases: [number, IntOrString | undefined, number][] = [
    [0, '99%', 0],
    [10, undefined, 0],
    [9, '99%', 8],
    [10, '90%', 9],
    [10, '1%', 1],
    [99, '99%', 98],
    [99, '100%', 99],
    [99, '0%', 0],
    [1, '100%', 1],
    [1, undefined, 0],
    [1, '1%', 1],
    [10, 5, 5],
    [10, 1, 1],
    [10, 0, 0],
    [10, 10, 10],
    [9, '99', 0],
    [9, '0.01%', 1],
    [999, '99.99%', 998],
  ];
  for (const [replicas, partition, expected] of cases) {
    it(`replicas ${replicas}, partition ${JSON.stringify(partition)} → ${expected}`, () => {
      assert.equal(scalePartition(partition, replicas), expected);
    });
  }
});

describe('scaleMaxUnavailable (GetValueFromIntOrPercent, round up)', () => {
  const cases: [IntOrString | undefined, number, number][] = [
    [undefined, 100, 1],
    [0, 100, 0],
    [10, 100, 10],
    [-3, 100, -3],
    ['10%', 1000, 100],
    ['10%', 15, 2],
    ['10%', 20, 2],
    ['5%', 5, 1],
    ['5%', 1000, 50],
    ['50%', 4, 2],
    ['3', 100, 3],
    ['1%%', 100, 1],
    ['12.5%', 100, 0],
    ['x%', 100, 0],
    ['99999999999999999999%', 100, 0],
  ];
  for (const [value, matched, expected] of cases) {
    it(`${JSON.stringify(value)} of ${matched} is ${expected}`, () => {
      assert.equal(scaleMaxUnavailable(value, matched), expected);
    });
  }
});
