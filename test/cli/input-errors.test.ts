/**
 * Mistakes in what a user gives `serve` are reported as such, with exit code 1, never labelled
 * "internal error" (which the exit codes of docs/cli.md keep for bugs).
 */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { runAsUser } from '../support/cli.js';

const example = new URL('../../examples/logtail-sidecarset.yaml', import.meta.url).pathname;

describe('serve: a file that cannot be read', () => {
  it('--sidecarsets: names the file, code 1', async () => {
    const home = await mkdtemp(join(tmpdir(), 'input-errors-'));
    const missing = join(home, 'missing.yaml');
    const run = await runAsUser(
      ['serve', '--sidecarsets', missing, '--port', '0', '--dev-cert-dir', join(home, 'certs')],
      home,
    );
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stderr, `error: ${missing}: cannot be read (ENOENT)\n`);
  });

  it('--cert and --key, the certificate missing: names the flags, code 1', async () => {
    const home = await mkdtemp(join(tmpdir(), 'input-errors-'));
    const cert = join(home, 'tls.crt');
    const key = join(home, 'tls.key');
    await writeFile(key, 'not read: the certificate is missing\n');
    const run = await runAsUser(
      ['serve', '--sidecarsets', example, '--port', '0', '--cert', cert, '--key', key],
      home,
    );
    assert.equal(run.code, 1, run.stderr);
    assert.equal(
      run.stderr,
      `error: --cert ${cert} and --key ${key} cannot be used: ` +
        `ENOENT: no such file or directory, open '${cert}'\n`,
    );
  });
});
