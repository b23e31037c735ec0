/** `serve`'s self-managed certificate flags (src/cli/flags.ts, docs/deploy.md "2. Install"). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { parseIpAddresses, parseWebhookConfigurations } from '../../src/cli/flags.js';
import { runCli } from '../support/cli.js';

describe('self-managed certificate flags', () => {
  it('serve offers them, each with its SIDECARSET_ variable', async () => {
    const help = await runCli(['serve', '--help']);
    assert.equal(help.code, 0);
    for (const flag of [
      '--cert-secret',
      '--webhook-configurations',
      '--cert-dns-names',
      '--cert-ip-addresses',
    ]) {
      assert.ok(help.stdout.includes(flag), flag);
      const env = `SIDECARSET_${flag.slice(2).toUpperCase().replaceAll('-', '_')}`;
      assert.ok(help.stdout.includes(env), env);
    }
  });

  it('parses configuration lists and IP addresses, refusing anything else', async () => {
    assert.deepEqual(parseWebhookConfigurations('mutating/a, validating/b.c, crd/d.e'), [
      { kind: 'mutating', name: 'a' },
      { kind: 'validating', name: 'b.c' },
      { kind: 'crd', name: 'd.e' },
    ]);
    assert.deepEqual(parseIpAddresses('127.0.0.1,::1'), ['127.0.0.1', '::1']);
    const bad = await runCli(['serve', '--webhook-configurations', 'service/x']);
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      /expected mutating\/NAME, validating\/NAME or crd\/NAME, got "service\/x"/,
    );
    const badIp = await runCli(['serve', '--cert-ip-addresses', 'localhost']);
    assert.equal(badIp.code, 2);
    assert.match(badIp.stderr, /not an IP address: localhost/);
  });
});
