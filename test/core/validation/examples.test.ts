import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { parse } from 'yaml';
import type { SidecarSet } from '../../../src/core/sidecarset-types.js';
import { formatFieldErrors } from '../../../src/core/validation/field-error.js';
import {
  validateSidecarSet,
  validateSidecarSetSchema,
} from '../../../src/core/validation/sidecarset.js';
import { defaultForTest } from './fixtures.js';

const dir = '/work/shared/examples';
const files = readdirSync(dir).filter((f) => f.includes('sidecarset') && f.endsWith('.yaml'));

test('there are example SidecarSets', () => {
  assert.ok(files.length >= 4);
});

for (const file of files) {
  test(`example ${file} passes the schema and the webhook rules`, () => {
    const raw = parse(readFileSync(`${dir}/${file}`, 'utf8')) as SidecarSet;
    assert.deepEqual(validateSidecarSetSchema(raw), []);
    const errs = validateSidecarSet(defaultForTest(raw), { others: [] });
    assert.equal(formatFieldErrors(errs), '');
  });
}
