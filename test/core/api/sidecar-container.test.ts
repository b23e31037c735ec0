import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';

import { CONTAINER } from '../../../src/core/encoding/go-container-fields.js';
import type { Container } from '../../../src/core/api/k8s-types.js';
import {
  SIDECAR_ONLY_FIELDS,
  inApiFieldOrder,
  stripSidecarFields,
} from '../../../src/core/api/sidecar-container.js';

const FIELDS = CONTAINER.fields.map((f) => f.json);

/** The plain definitions: ordering by walking the field list, stripping by deleting. */
function referenceOrder(c: Container): Container {
  const out: Record<string, unknown> = {};
  for (const key of FIELDS) if (c[key] !== undefined) out[key] = c[key];
  for (const [key, value] of Object.entries(c)) if (!(key in out)) out[key] = value;
  return out as Container;
}
function referenceStrip(c: Container): Container {
  const out: Container = { ...c };
  for (const f of SIDECAR_ONLY_FIELDS) Reflect.deleteProperty(out, f);
  return out;
}

/** Containers with known, sidecar-only and unknown keys in any order, some set to undefined. */
const containers = fc
  .uniqueArray(
    fc.tuple(
      fc.oneof(
        fc.constantFrom(...FIELDS),
        fc.constantFrom(...SIDECAR_ONLY_FIELDS),
        fc.string({ minLength: 1, maxLength: 4 }).filter((k) => k !== '__proto__'),
      ),
      fc.oneof(fc.constant(undefined), fc.string(), fc.jsonValue()),
    ),
    { selector: ([key]) => key, maxLength: 16 },
  )
  .map((entries) => Object.fromEntries([['name', 'c'], ...entries]) as Container);

describe('sidecar containers', () => {
  it('inApiFieldOrder orders keys as walking the core/v1 field list does', () => {
    fc.assert(
      fc.property(containers, (c) => {
        const ordered = inApiFieldOrder(c);
        assert.deepEqual(Object.keys(ordered), Object.keys(referenceOrder(c)));
        assert.deepEqual(ordered, referenceOrder(c));
      }),
    );
  });

  it('stripSidecarFields drops the sidecar-only fields and keeps the rest in order', () => {
    fc.assert(
      fc.property(containers, (c) => {
        const stripped = stripSidecarFields(c);
        assert.deepEqual(Object.keys(stripped), Object.keys(referenceStrip(c)));
        assert.deepEqual(stripped, referenceStrip(c));
      }),
    );
  });

  it('keeps a __proto__ key of parsed JSON as a plain field', () => {
    const c = JSON.parse('{"name":"c","__proto__":{"x":1},"transferEnv":[]}') as Container;
    assert.deepEqual(stripSidecarFields(c), referenceStrip(c));
    assert.equal(JSON.stringify(stripSidecarFields(c)), '{"name":"c","__proto__":{"x":1}}');
  });
});
