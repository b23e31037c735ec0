import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { jsonMergePatch, MergePatchError } from '../../../src/core/inject/json-merge-patch.js';

describe('jsonMergePatch', () => {
  // RFC 7386 appendix A, written as github.com/evanphx/json-patch v5.6.0 writes the results.
  const rfc: [string, string, string][] = [
    ['{"a":"b"}', '{"a":"c"}', '{"a":"c"}'],
    ['{"a":"b"}', '{"b":"c"}', '{"a":"b","b":"c"}'],
    ['{"a":"b"}', '{"a":null}', '{}'],
    ['{"a":"b","b":"c"}', '{"a":null}', '{"b":"c"}'],
    ['{"a":["b"]}', '{"a":"c"}', '{"a":"c"}'],
    ['{"a":"c"}', '{"a":["b"]}', '{"a":["b"]}'],
    ['{"a":{"b":"c"}}', '{"a":{"b":"d","c":null}}', '{"a":{"b":"d"}}'],
    ['{"a":[{"b":"c"}]}', '{"a":[1]}', '{"a":[1]}'],
    ['["a","b"]', '["c","d"]', '["c","d"]'],
    ['{"a":"b"}', '["c"]', '["c"]'],
    ['{"e":null}', '{"a":1}', '{"a":1,"e":null}'],
    ['[1,2]', '{"a":"b","c":null}', '{"a":"b"}'],
    ['{}', '{"a":{"bb":{"ccc":null}}}', '{"a":{"bb":{}}}'],
  ];
  for (const [doc, patch, expected] of rfc) {
    it(`${doc} + ${patch} = ${expected}`, () => {
      assert.equal(jsonMergePatch(doc, patch), expected);
    });
  }

  const go: [string, string, string, string][] = [
    [
      'values it does not open keep their text: numbers, escapes, nested key order',
      '{"z":{"y":1,"x":2.0},"n":12345678901234567890,"s":"\\u00e9"}',
      '{"a":1}',
      '{"a":1,"n":12345678901234567890,"s":"\\u00e9","z":{"y":1,"x":2.0}}',
    ],
    ['whitespace is dropped', '{ "b" : [ 1 , 2 ] }', '{ "a" : 1 }', '{"a":1,"b":[1,2]}'],
    [
      'an object merged into is re-sorted',
      '{"a":{"y":1,"x":2}}',
      '{"a":{"w":0}}',
      '{"a":{"w":0,"x":2,"y":1}}',
    ],
    [
      'an added object is sorted and pruned at every depth; array items stay',
      '{}',
      '{"a":{"y":null,"x":{"q":1,"p":null}},"b":[null,{"c":null}]}',
      '{"a":{"x":{"q":1}},"b":[null,{}]}',
    ],
    [
      'HTML characters are escaped, in kept text too',
      '{"u":"a&b<c>"}',
      '{"k<":"&"}',
      '{"k\\u003c":"\\u0026","u":"a\\u0026b\\u003cc\\u003e"}',
    ],
    ['a repeated key keeps its last value', '{"a":1,"a":2}', '{"b":3}', '{"a":2,"b":3}'],
    [
      'brackets and quotes inside strings are text',
      '{"a":"{\\"x\\":[1,2]}"}',
      '{"b":"]"}',
      '{"a":"{\\"x\\":[1,2]}","b":"]"}',
    ],
  ];
  for (const [title, doc, patch, expected] of go) {
    it(title, () => {
      assert.equal(jsonMergePatch(doc, patch), expected);
    });
  }

  it('fails where the library fails: bad JSON, a null document or patch, a scalar patch', () => {
    for (const [doc, patch] of [
      ['{not json', '{}'],
      ['{}', '{not json'],
      ['null', '{}'],
      ['{}', 'null'],
      ['{"a":"foo"}', '"bar"'],
      ['{"a":"foo"}', '5'],
    ]) {
      assert.throws(
        () => jsonMergePatch(doc ?? '', patch ?? ''),
        MergePatchError,
        `${doc} + ${patch}`,
      );
    }
  });
});
