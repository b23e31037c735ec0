import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { SidecarSetError } from '../../../src/core/errors.js';
import {
  canonicalQuantity,
  defaultQuantity,
  formatQuantity,
  parseQuantity,
  roundUpQuantity,
} from '../../../src/core/encoding/quantity.js';

// [input, Go json.Marshal after ParseQuantity, after RoundUp(-3) as SetDefaults_ResourceList does].
// Every row was produced by the real apimachinery v0.32.10 resource package (Go), see the report.
const GO_VERIFIED: [string, string, string][] = [
  ['0', '0', '0'],
  ['1', '1', '1'],
  ['1000m', '1', '1'],
  ['0.5', '500m', '500m'],
  ['1024Mi', '1Gi', '1Gi'],
  ['512Mi', '512Mi', '512Mi'],
  ['1e3', '1e3', '1e3'],
  ['100m', '100m', '100m'],
  ['1.5Gi', '1536Mi', '1536Mi'],
  ['1Ki', '1Ki', '1Ki'],
  ['1023', '1023', '1023'],
  ['1024', '1024', '1024'],
  ['2048', '2048', '2048'],
  ['0.1', '100m', '100m'],
  ['1.1Ki', '1126400m', '1126400m'],
  ['100u', '100u', '1m'],
  ['1n', '1n', '1m'],
  ['0.0000000001', '1n', '1m'],
  ['1e-10', '1e-9', '1e-3'],
  ['1000E', '1', '1'],
  ['1024Ei', '9223372036854775807', '9223372036854775807'],
  ['8Ei', '9223372036854775807', '9223372036854775807'],
  ['12345678901234567890', '12345678901234567890', '12345678901234567890'],
  ['-1', '-1', '-1'],
  ['-1.5Gi', '-1536Mi', '-1536Mi'],
  ['-2048', '-2048', '-2048'],
  ['+1', '+1', '+1'],
  ['.5', '500m', '500m'],
  ['1.', '1.', '1.'],
  ['.', '0', '0'],
  ['m', '0', '0'],
  ['-Gi', '0', '0'],
  ['1E', '1E', '1E'],
  ['1E3', '1E3', '1E3'],
  ['1e+3', '1e+3', '1e+3'],
  ['1e-3', '1e-3', '1e-3'],
  ['1.5e3', '1500', '1500'],
  ['10e2', '1e3', '1e3'],
  ['1k', '1k', '1k'],
  ['1000k', '1M', '1M'],
  ['1500k', '1500k', '1500k'],
  ['999999999999999999', '999999999999999999', '999999999999999999'],
  ['1e1000', '10e999', '10e999'],
  ['1e-1000', '1e-9', '1e-3'],
  ['0.0001', '100u', '1m'],
  ['00001', '00001', '00001'],
  ['1.0', '1', '1'],
  ['30Mi', '30Mi', '30Mi'],
  ['10m', '10m', '10m'],
  ['1Mi', '1Mi', '1Mi'],
  ['1.0Mi', '1Mi', '1Mi'],
  ['1.5', '1500m', '1500m'],
  [' 1 ', '1', '1'],
  ['5e-10', '1e-9', '1e-3'],
  ['0.5Ki', '512', '512'],
  ['1.2345678901234567890123456789', '1234567891n', '1235m'],
  ['2Gi', '2Gi', '2Gi'],
  ['3000Mi', '3000Mi', '3000Mi'],
  ['1.5k', '1500', '1500'],
  ['0.001', '1m', '1m'],
  ['0.0015', '1500u', '2m'],
  ['-0.0015', '-1500u', '-2m'],
  ['1500m', '1500m', '1500m'],
  ['100M', '100M', '100M'],
  ['1G', '1G', '1G'],
  ['1T', '1T', '1T'],
  ['1P', '1P', '1P'],
  ['1.5E', '1500P', '1500P'],
];

describe('quantity: Go-verified canonical form and milli round-up', () => {
  for (const [input, canonical, rounded] of GO_VERIFIED) {
    it(`${JSON.stringify(input)} → ${canonical} / ${rounded}`, () => {
      assert.equal(canonicalQuantity(input), canonical);
      assert.equal(defaultQuantity(input), rounded);
    });
  }

  it('is idempotent: re-parsing the output gives the same output', () => {
    for (const [input] of GO_VERIFIED) {
      const once = defaultQuantity(input);
      assert.equal(defaultQuantity(once), once, input);
      assert.equal(canonicalQuantity(canonicalQuantity(input)), canonicalQuantity(input), input);
    }
  });
});

describe('quantity: JSON numbers', () => {
  const cases: [number, string][] = [
    [1, '1'],
    [0, '0'],
    [0.5, '500m'],
    [1000, '1k'],
    [1500, '1500'],
    [-3, '-3'],
    [1e21, '1e+21'],
    [1e-7, '100e-9'],
  ];
  for (const [input, expected] of cases) {
    it(`${input} → ${expected}`, () => {
      assert.equal(canonicalQuantity(input), expected);
    });
  }
  it('rejects NaN and Infinity', () => {
    assert.throws(() => parseQuantity(Number.NaN), SidecarSetError);
    assert.throws(() => parseQuantity(Number.POSITIVE_INFINITY), SidecarSetError);
  });
});

describe('quantity: invalid input is SI_ERR_BAD_INPUT (Go returns an error)', () => {
  for (const input of [
    '',
    '1.5.5',
    'abc',
    '1Q',
    '1Ki5',
    '1 m',
    '1ki',
    '0x10',
    '1e',
    'e-10',
    '1e+',
    '--1',
    '1K',
  ]) {
    it(JSON.stringify(input), () => {
      assert.throws(
        () => parseQuantity(input),
        (err: unknown) => err instanceof SidecarSetError && err.code === 'SI_ERR_BAD_INPUT',
      );
    });
  }
  it('an exponent outside int64 is an error', () => {
    assert.throws(() => parseQuantity('1e9223372036854775808'), SidecarSetError);
  });
});

describe('quantity: representation', () => {
  it('keeps the text only when Go keeps it', () => {
    assert.equal(parseQuantity('100m').cached, '100m');
    assert.equal(parseQuantity('1000m').cached, undefined);
    assert.equal(parseQuantity('1Ki').cached, '1Ki');
    assert.equal(parseQuantity('8Ki').cached, undefined);
  });

  it('RoundUp keeps a value already at the scale, and rounds away from zero', () => {
    const q = parseQuantity('100m');
    assert.equal(roundUpQuantity(q), q);
    assert.equal(formatQuantity(roundUpQuantity(parseQuantity('1n'), -9)), '1n');
    assert.equal(formatQuantity(roundUpQuantity(parseQuantity('-1n'))), '-1m');
    assert.equal(formatQuantity(roundUpQuantity(parseQuantity('1234567u'), 0)), '2');
  });

  it('int32 wrap of a large exponent, as Go converts int64 to int32', () => {
    assert.equal(parseQuantity('1e4294967296').scale, 0);
  });
});
