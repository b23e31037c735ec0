import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';

import { ERROR_CODES, SidecarSetError } from '../../src/core/errors.js';

describe('error codes', () => {
  it('are all documented in docs/errors.md', async () => {
    const doc = await readFile(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    for (const code of Object.keys(ERROR_CODES)) {
      assert.match(doc, new RegExp(`\`${code}\``), code);
    }
  });

  it('carry code, status and message', () => {
    const err = new SidecarSetError('SI_ERR_BAD_INPUT', 'x.yaml: broken', 400);
    assert.equal(err.code, 'SI_ERR_BAD_INPUT');
    assert.equal(err.statusCode, 400);
    assert.equal(err.message, 'x.yaml: broken');
    assert.equal(new SidecarSetError('SI_ERR_BAD_PERCENT', 'p').statusCode, 500);
  });
});
