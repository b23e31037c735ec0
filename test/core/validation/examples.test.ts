import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { SidecarSet } from '../../../src/core/api/sidecarset-types.js';
import { formatFieldErrors } from '../../../src/core/validation/field-error.js';
import {
  validateSidecarSet,
  validateSidecarSetSchema,
} from '../../../src/core/validation/sidecarset.js';
import { defaultForTest } from './fixtures.js';

// The repository's own examples: the article's SidecarSet and its gray-release variants.
const dir = new URL('../../../examples/', import.meta.url).pathname;
const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter(
  (f) => f.includes('sidecarset') && f.endsWith('.yaml'),
);

test('there are example SidecarSets', () => {
  assert.ok(files.length >= 4);
});

for (const file of files) {
  test(`example ${file} passes the schema and the webhook rules`, () => {
    const raw = parse(readFileSync(join(dir, file), 'utf8')) as SidecarSet;
    assert.deepEqual(validateSidecarSetSchema(raw), []);
    const errs = validateSidecarSet(defaultForTest(raw), { others: [] });
    assert.equal(formatFieldErrors(errs), '');
  });
}

// A *-v1beta1.yaml example is another example written in v1beta1, the same object (one name):
// test/cli/v1beta1-files.test.ts checks that it is.
test('the examples validate together: distinct names, no conflicts between them', () => {
  const all = files
    .filter((file) => !file.endsWith('-v1beta1.yaml'))
    .map((file) => defaultForTest(parse(readFileSync(join(dir, file), 'utf8')) as SidecarSet));
  assert.equal(new Set(all.map((ss) => ss.metadata.name)).size, all.length, 'distinct names');
  for (const ss of all) {
    const others = all.filter((o) => o !== ss);
    assert.equal(formatFieldErrors(validateSidecarSet(ss, { others })), '', ss.metadata.name);
  }
});
