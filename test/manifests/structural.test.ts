import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileCrdSchema } from './crd-schema.js';
import { structuralErrors } from './structural.js';
import type { SchemaNode } from './structural.js';

const root = (spec: SchemaNode): SchemaNode => ({
  type: 'object',
  properties: { metadata: { type: 'object' }, spec },
});

describe('structuralErrors', () => {
  it('accepts typed nodes, maps, int-or-string and preserved objects', () => {
    const ok = root({
      type: 'object',
      properties: {
        n: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
        m: { type: 'object', additionalProperties: { type: 'string' } },
        c: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        v: { 'x-kubernetes-preserve-unknown-fields': true },
        l: { type: 'array', items: { type: 'string', enum: ['a'] } },
      },
    });
    assert.deepEqual(structuralErrors(ok), []);
  });

  const cases: readonly (readonly [string, SchemaNode, RegExp])[] = [
    ['a node without type', root({ type: 'object', properties: { a: {} } }), /no type/],
    [
      'properties beside additionalProperties',
      root({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false }),
      /additionalProperties must be a schema|mutually exclusive/,
    ],
    ['a const', root({ type: 'string', const: 'x' }), /keyword const/],
    ['a $schema', { ...root({ type: 'object' }), $schema: 'x' }, /keyword \$schema/],
    ['an array without items', root({ type: 'array' }), /without one items/],
    [
      'uniqueItems',
      root({ type: 'array', items: { type: 'string' }, uniqueItems: true }),
      /uniqueItems/,
    ],
    [
      'a type inside anyOf',
      root({ type: 'string', anyOf: [{ type: 'string' }, { type: 'integer' }] }),
      /type inside a logical junctor/,
    ],
    [
      'a property only inside anyOf',
      root({ type: 'object', anyOf: [{ properties: { a: { type: 'string' } } }] }),
      /only declared inside/,
    ],
    [
      'a typed int-or-string',
      root({ type: 'string', 'x-kubernetes-int-or-string': true, anyOf: [] }),
      /int-or-string/,
    ],
    [
      'metadata fields beyond name',
      {
        type: 'object',
        properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } },
      },
      /only name and generateName/,
    ],
    [
      'preserve-unknown-fields false',
      root({ type: 'object', 'x-kubernetes-preserve-unknown-fields': false }),
      /must be true/,
    ],
  ];
  for (const [name, schema, message] of cases) {
    it(`rejects ${name}`, () => {
      const errors = structuralErrors(schema);
      assert.ok(
        errors.some((e) => message.test(e)),
        errors.join('\n'),
      );
    });
  }
});

describe('compileCrdSchema', () => {
  it('rejects fields the API server would prune, keeps preserved and mapped ones', () => {
    const validate = compileCrdSchema(
      root({
        type: 'object',
        properties: {
          strict: { type: 'object', properties: { a: { type: 'string' } } },
          open: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          map: { type: 'object', additionalProperties: { type: 'integer', format: 'int32' } },
        },
      }),
    );
    const doc = (spec: SchemaNode): SchemaNode => ({ metadata: { name: 'x', any: 1 }, spec });
    assert.ok(validate(doc({ strict: { a: 'x' }, open: { b: 1 }, map: { k: 1 } })));
    assert.equal(validate(doc({ strict: { b: 'x' } })), false);
    assert.equal(validate(doc({ other: 1 })), false);
    assert.equal(validate(doc({ map: { k: 2 ** 31 } })), false);
  });
});
