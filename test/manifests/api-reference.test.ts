import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { API_REFERENCE_PATH, renderApiReference } from '../../scripts/gen-api-reference.js';

describe('docs/api-reference.md', () => {
  const page = readFileSync(API_REFERENCE_PATH, 'utf8');

  it('is up to date with the schema (npm run gen:api-reference)', async () => {
    assert.equal(page, await renderApiReference());
  });

  it('links only to sections it has', () => {
    const anchors = new Set([...page.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]));
    const links = [...page.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]);
    assert.ok(links.length > 20, `${links.length} links`);
    assert.deepEqual(
      links.filter((l) => !anchors.has(l)),
      [],
    );
  });

  it('documents the fields a user looks up, with enums and defaults', () => {
    for (const line of [
      /^\| `partition` +\| integer or string +\| How many matched pods stay/m,
      /^\| `targetContainersNameRegex` .*Default `\.\*`\. +\|$/m,
      /^\| `type` +\| string +\| RollingUpdate .*One of `RollingUpdate`, `NotUpdate`\. +\|$/m,
      /^## `spec\.updateStrategy\.scatterStrategy\[\]`$/m,
      /^\| `initContainers` +\| array of object \(\[fields\]\(#spec-containers\)\)/m,
    ]) {
      assert.match(page, line);
    }
  });
});
