import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkResourceExpression,
  evaluateResourceExpression,
} from '../../../src/core/inject/resource-expression.js';
import { parseQuantityValue, quantityOf } from '../../../src/core/encoding/quantity-value.js';

// TestValidateResourceExpression, by essence: valid forms parse; each broken form is one error.
const valid = [
  'cpu',
  'cpu*50%',
  'max(cpu*50%, 50m)',
  'min(cpu, 2)',
  '(cpu + 100m) / 2',
  '-(-cpu)',
  '.5 + 1e3',
  '1.5Gi',
  'CPU * 2',
  'Max(cpu, 1)',
];
const invalid: [string, RegExp][] = [
  ['cpu +', /unexpected end of input/],
  ['(cpu', /expected "\)"/],
  ['cpu)', /unexpected "\)"/],
  ['memory', /unknown variable: memory/],
  ['avg(cpu, 1)', /unknown function: avg/],
  ['max(cpu)', /max function requires exactly 2 arguments, got 1/],
  ['min(1, 2, 3)', /min function requires exactly 2 arguments, got 3/],
  ['50m * 50m', /multiplication of two quantities/],
  ['cpu / 0', /division by zero/],
  ['cpu / 1m', /division by quantity/],
  ['1 - 2', /calculation result is negative/],
  ['2e', /invalid number/],
  ['5Xi', /invalid quantity/],
  ['1e3m', /invalid quantity/],
  ['cpu $', /unexpected character/],
];

test('an empty expression is valid: it sets nothing (TestValidateResourceExpression)', () => {
  assert.equal(checkResourceExpression('', 'cpu'), undefined);
  // The evaluator itself still refuses it; the injector never evaluates an empty expression.
  assert.equal(evaluateResourceExpression('', {}).ok, false);
});

for (const e of valid) {
  test(`expression parses: ${e}`, () => {
    assert.equal(checkResourceExpression(e, 'cpu'), undefined);
  });
}
for (const [e, re] of invalid) {
  test(`expression fails: ${JSON.stringify(e)}`, () => {
    assert.match(checkResourceExpression(e, 'cpu') ?? '', /^invalid expression: /);
    assert.match(checkResourceExpression(e, 'cpu') ?? '', re);
  });
}

test('evaluation', () => {
  const cpu = { cpu: { quantity: true, value: 2 } };
  assert.deepEqual(evaluateResourceExpression('max(cpu*50%, 50m)', cpu), {
    ok: true,
    value: { quantity: true, value: 1 },
  });
  assert.deepEqual(evaluateResourceExpression('min(cpu, 500m)', cpu), {
    ok: true,
    value: { quantity: true, value: 0.5 },
  });
  assert.deepEqual(evaluateResourceExpression('2 * 3 - 1', {}), {
    ok: true,
    value: { quantity: false, value: 5 },
  });
});

test('quantities', () => {
  assert.equal(parseQuantityValue('1Gi'), 2 ** 30);
  assert.equal(parseQuantityValue('100m'), 0.1);
  assert.equal(parseQuantityValue('1e3'), 1000);
  assert.equal(parseQuantityValue('2'), 2);
  assert.equal(parseQuantityValue('x'), undefined);
  assert.equal(quantityOf(3), 3);
  assert.equal(quantityOf(Infinity), undefined);
  assert.equal(quantityOf({}), undefined);
});
