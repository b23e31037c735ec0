import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isSelectorEmpty,
  isValidLabelValue,
  regexError,
  validateLabelSelector,
} from '../../../src/core/validation/names-and-selectors.js';
import { formatFieldErrors } from '../../../src/core/validation/field-error.js';

test('qualified names', () => {
  assert.deepEqual(isQualifiedName('app'), []);
  assert.deepEqual(isQualifiedName('example.com/My_name.1'), []);
  assert.deepEqual(isQualifiedName('/x'), ['prefix part must be non-empty']);
  assert.deepEqual(isQualifiedName('a/'), [
    'name part must be non-empty',
    `name part ${regexError("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]', 'MyName', 'my.name', '123-abc')}`,
  ]);
  assert.equal(
    isQualifiedName('Bad_Prefix/x')[0]?.startsWith('prefix part a lowercase RFC 1123 subdomain'),
    true,
  );
  assert.equal(isQualifiedName('a/b/c')[0]?.startsWith('a qualified name must consist'), true);
  assert.deepEqual(isQualifiedName('x'.repeat(64)).slice(0, 1), [
    'name part must be no more than 63 characters',
  ]);
});

test('label values', () => {
  assert.deepEqual(isValidLabelValue(''), []);
  assert.deepEqual(isValidLabelValue('a.b_c-d'), []);
  assert.equal(
    isValidLabelValue('app-risk-')[0],
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
  );
  assert.deepEqual(isValidLabelValue('v'.repeat(64)), ['must be no more than 63 characters']);
  assert.equal(isValidLabelValue('é').length, 1);
});

test('DNS-1123 labels and subdomains', () => {
  assert.deepEqual(isDNS1123Label('my-name'), []);
  assert.deepEqual(isDNS1123Label('a.b'), ['must not contain dots']);
  assert.equal(isDNS1123Label('Bad').length, 1);
  assert.equal(isDNS1123Label('a'.repeat(64)).length, 1);
  assert.deepEqual(isDNS1123Subdomain('example.com'), []);
  assert.equal(isDNS1123Subdomain(`${'a'.repeat(250)}.com`).length, 1);
  assert.equal(regexError('m', 'f'), "m (regex used for validation is 'f')");
});

test('validateLabelSelector messages', () => {
  const errs = validateLabelSelector(
    {
      matchLabels: { 'bad key!': 'ok', good: 'bad value-' },
      matchExpressions: [
        { key: 'a', operator: 'In' },
        { key: 'b', operator: 'Exists', values: ['x'] },
        { key: 'c', operator: 'Near', values: ['x'] },
        { key: 'd', operator: 'NotIn', values: ['ok', '-bad'] },
      ],
    },
    'spec.selector',
  );
  assert.deepEqual(
    errs.map((e) => `${e.type} ${e.field}`),
    [
      'Invalid spec.selector.matchLabels',
      'Invalid spec.selector.matchLabels',
      'Required spec.selector.matchExpressions[0].values',
      'Forbidden spec.selector.matchExpressions[1].values',
      'Invalid spec.selector.matchExpressions[2].operator',
      'Invalid spec.selector.matchExpressions[3].values[1]',
    ],
  );
  assert.equal(
    formatFieldErrors(errs.slice(2, 5)),
    "[spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn', spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist', spec.selector.matchExpressions[2].operator: Invalid value: \"Near\": not a valid selector operator]",
  );
  assert.deepEqual(validateLabelSelector(undefined, 'x'), []);
});

test('isSelectorEmpty', () => {
  assert.equal(isSelectorEmpty(undefined), true);
  assert.equal(isSelectorEmpty({}), true);
  assert.equal(isSelectorEmpty({ matchLabels: {}, matchExpressions: [] }), true);
  assert.equal(isSelectorEmpty({ matchLabels: { a: 'b' } }), false);
  assert.equal(isSelectorEmpty({ matchExpressions: [{ key: 'a', operator: 'Exists' }] }), false);
});
