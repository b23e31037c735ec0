/** The upgrade controller's flags, as `serve` and `controller` parse them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { runCli } from '../support/cli.js';

describe('controller flags', () => {
  it('both commands offer --pod-events, --dry-run and --max-cache-staleness', async () => {
    for (const command of ['serve', 'controller']) {
      const help = await runCli([command, '--help']);
      assert.equal(help.code, 0);
      assert.match(help.stdout, /--pod-events \[bool\]/);
      assert.match(help.stdout, /--dry-run \[bool\]/);
      assert.match(help.stdout, /--max-cache-staleness <seconds>/);
    }
  });

  it('a boolean flag takes true, false, 1 or 0 and refuses anything else', async () => {
    const bad = await runCli(['controller', '--pod-events', 'maybe']);
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      /'--pod-events \[bool\]' argument 'maybe' is invalid\. expected true or false/,
    );
  });
});
