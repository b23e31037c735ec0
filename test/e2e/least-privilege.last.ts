/**
 * Run by test/e2e/run.ts after every *.e2e.ts file passed: the RBAC rules in manifests/ grant no
 * permission that our processes did not use somewhere in the e2e suite (each file's control plane
 * saved our audited requests in E2E_AUDIT_DIR). With the "no request forbidden" check each file
 * makes, this proves the rules are exactly what the code needs.
 */
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';

import type { AuditEvent } from './audit.js';
import { grantedPermissions, usedPermission } from './audit.js';

it('the roles in manifests/ grant only what the code used against the real API server', async () => {
  const dir = process.env['E2E_AUDIT_DIR'];
  assert.ok(dir !== undefined, 'E2E_AUDIT_DIR is set by npm run test:e2e');
  const used = new Set<string>();
  for (const file of await readdir(dir)) {
    for (const line of (await readFile(join(dir, file), 'utf8')).split('\n')) {
      if (line === '') continue;
      const permission = usedPermission(JSON.parse(line) as AuditEvent);
      if (permission !== undefined) used.add(permission);
    }
  }
  const granted = await grantedPermissions();
  assert.ok(used.size > 0, 'the e2e files saved our requests');
  const unused = [...granted].filter((p) => !used.has(p)).sort();
  assert.deepEqual(unused, [], 'granted but never used');
  const ungranted = [...used].filter((p) => !granted.has(p)).sort();
  assert.deepEqual(ungranted, [], 'used but not granted (the API server should have said 403)');
});
