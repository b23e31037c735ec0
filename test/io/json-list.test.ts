import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';

import { scanJsonObject } from '../../src/io/json-list.js';

/**
 * What JSON.parse would give, rebuilt from the scan: the fields with the items put back. With
 * `chunk`, the bytes come that many at a time, in one buffer filled anew each time.
 */
function scanned(text: string, chunk?: number): unknown {
  const bytes = Buffer.from(text);
  const items: unknown[] = [];
  const each = (item: unknown, i: number): void => {
    assert.equal(i, items.length);
    items.push(item);
  };
  let result;
  if (chunk === undefined) {
    result = scanJsonObject(bytes, each);
  } else {
    const buffer = Buffer.alloc(chunk);
    let at = 0;
    result = scanJsonObject(Buffer.alloc(0), each, () => {
      const read = bytes.copy(buffer, 0, at, at + chunk);
      at += read;
      return read === 0 ? undefined : buffer.subarray(0, read);
    });
  }
  if (result === undefined) return undefined;
  return result.listed ? { ...result.fields, items } : result.fields;
}

describe('scanJsonObject', () => {
  it('gives what JSON.parse gives, for any object with items, compact or indented', () => {
    const list = fc.record({
      fields: fc.dictionary(fc.string(), fc.jsonValue()),
      items: fc.array(fc.jsonValue()),
      indent: fc.constantFrom(undefined, 1, 4, '\t'),
      chunk: fc.option(fc.integer({ min: 1, max: 64 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(list, ({ fields, items, indent, chunk }) => {
        const text = JSON.stringify({ ...fields, kind: 'List', items }, null, indent);
        assert.deepEqual(scanned(text, chunk), JSON.parse(text));
      }),
    );
  });

  it('follows strings with escaped quotes, backslashes and brackets, and UTF-8', () => {
    const items = [{ a: 'x\\"]}{[', b: '\\\\' }, 'ü → 日本 🙂', { '"': ['\\', '"'] }, -1.5e3, null];
    const text = JSON.stringify({ items, kind: 'PodList' }, null, 2);
    for (const chunk of [undefined, 1, 2, 3, 7]) {
      assert.deepEqual(scanned(text, chunk), { items, kind: 'PodList' });
    }
  });

  it('keeps items as a field when a kind that is not a List came first', () => {
    const result = scanJsonObject(Buffer.from('{"kind":"Pod","items":[1]}'), () => {
      assert.fail('not a list item');
    });
    assert.deepEqual(result, { fields: { kind: 'Pod', items: [1] }, listed: false });
  });

  it('gives undefined for what it does not follow', () => {
    for (const text of [
      '',
      '[]',
      'kind: List',
      '{"items":[1,]}',
      '{"items":[1] "kind":"List"}',
      '{"items":[{"a":1}}',
      '{"a":1,"a":2}',
      '{"items":[],"items":[]}',
      '{"a":"unterminated}',
      '{} {}',
      '\uFEFF{}',
    ]) {
      assert.equal(scanned(text), undefined, text);
      assert.equal(scanned(text, 2), undefined, text);
    }
  });

  it('lets errors of the callback through', () => {
    assert.throws(
      () =>
        scanJsonObject(Buffer.from('{"items":[1]}'), () => {
          throw new RangeError('no');
        }),
      RangeError,
    );
  });
});
