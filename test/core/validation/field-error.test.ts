import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  duplicate,
  forbidden,
  formatBadValue,
  formatFieldError,
  formatFieldErrors,
  goQuote,
  indexPath,
  childPath,
  invalid,
  notFound,
  notSupported,
  required,
  tooLong,
} from '../../../src/core/validation/field-error.js';

test('renders each error type like field.Error.Error()', () => {
  const cases: [ReturnType<typeof required>, string][] = [
    [
      required('spec.selector', 'no selector defined for SidecarSet'),
      'spec.selector: Required value: no selector defined for SidecarSet',
    ],
    [required('spec.containers[0].image'), 'spec.containers[0].image: Required value'],
    [
      invalid('spec.containers', 'X', 'container X already exist in other'),
      'spec.containers: Invalid value: "X": container X already exist in other',
    ],
    [invalid('a', 3, 'must be 1'), 'a: Invalid value: 3: must be 1'],
    [invalid('a', true, 'd'), 'a: Invalid value: true: d'],
    [invalid('a', null, 'd'), 'a: Invalid value: null: d'],
    [
      invalid('a', { matchLabels: { b: 'c<' } }, ''),
      'a: Invalid value: {"matchLabels":{"b":"c\\u003c"}}',
    ],
    [invalid('a', [1, 'x', undefined, Infinity], 'd'), 'a: Invalid value: [1,"x",null,null]: d'],
    [duplicate('n', 'x'), 'n: Duplicate value: "x"'],
    [notFound('n', 'v'), 'n: Not found: "v"'],
    [
      notSupported('p', 'XX', ['SCTP', 'TCP']),
      'p: Unsupported value: "XX": supported values: "SCTP", "TCP"',
    ],
    [notSupported('p', 'XX', []), 'p: Unsupported value: "XX"'],
    [
      forbidden('f', 'may not be set for non-init containers'),
      'f: Forbidden: may not be set for non-init containers',
    ],
    [tooLong('t', 262144), 't: Too long: may not be more than 262144 bytes'],
    [tooLong('t', 1), 't: Too long: may not be more than 1 byte'],
  ];
  for (const [e, want] of cases) assert.equal(formatFieldError(e), want);
});

test('aggregate: one, several (bracketed), duplicates once, none', () => {
  const a = required('a');
  const b = required('b');
  assert.equal(formatFieldErrors([]), '');
  assert.equal(formatFieldErrors([a]), 'a: Required value');
  assert.equal(formatFieldErrors([a, a]), 'a: Required value');
  assert.equal(formatFieldErrors([a, b, a]), '[a: Required value, b: Required value]');
});

test('Go quoting and value rendering', () => {
  assert.equal(
    goQuote('a"b\\c\n\t\u0001\u007f\u0085é\u2028'),
    '"a\\"b\\\\c\\n\\t\\x01\\x7f\\u0085é\\u2028"',
  );
  assert.equal(formatBadValue(0.5), '0.5');
  assert.equal(formatBadValue(undefined), 'null');
  assert.equal(childPath('', 'x'), 'x');
  assert.equal(indexPath(childPath('a', 'b'), 'k'), 'a.b[k]');
});
