/**
 * The alerts with promtool (Debian's `prometheus` package): `promtool check rules` and the unit
 * tests in rules.test.yaml; every alert tested and given a runbook section in docs/monitoring.md.
 * Without promtool the promtool tests skip with one line, except under CI=true (.ci/run installs it).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { parse, stringify } from 'yaml';

import { alerts, ruleGroups } from './pack.js';

const TESTS = new URL('./rules.test.yaml', import.meta.url).pathname;
const RUNBOOK = new URL('../../docs/monitoring.md', import.meta.url).pathname;
/** The placeholder base of every runbook_url (the chart's monitoring.prometheusRule.runbookBaseUrl). */
const RUNBOOK_BASE = 'https://sidecarset.example/docs/monitoring.md';

function promtoolMissing(): string | false {
  if (spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0) return false;
  const reason = 'promtool is not installed (apt-get install prometheus)';
  if (process.env['CI'] === 'true') throw new Error(`${reason}; CI=true requires it`);
  process.stdout.write(`monitoring: skipped: ${reason}\n`);
  return reason;
}

describe('alerts', () => {
  it('each has a promtool unit test that fires it, a description and a runbook_url', async () => {
    const tests = parse(await readFile(TESTS, 'utf8')) as {
      tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const fired = new Set(
      tests.tests.flatMap((t) =>
        (t.alert_rule_test ?? []).filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname),
      ),
    );
    const runbook = await readFile(RUNBOOK, 'utf8');
    const headings = new Set(
      [...runbook.matchAll(/^### (\S+)$/gm)].map((m) => (m[1] ?? '').toLowerCase()),
    );
    for (const rule of alerts(await ruleGroups())) {
      const name = rule.alert ?? '';
      assert.ok(fired.has(name), `${name}: no test expects it to fire`);
      const url = rule.annotations?.['runbook_url'] ?? '';
      assert.ok(url.startsWith(`${RUNBOOK_BASE}#`), `${name}: runbook_url ${url}`);
      assert.ok(headings.has(url.slice(RUNBOOK_BASE.length + 1)), `${name}: no runbook section`);
      assert.ok(!('runbook' in (rule.annotations ?? {})), `${name}: runbook, not runbook_url`);
      assert.ok((rule.annotations?.['description'] ?? '') !== '', `${name}: no description`);
    }
  });
});

describe('promtool', { skip: promtoolMissing() }, () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'promtool-'));
    await writeFile(join(dir, 'rules.yaml'), stringify(await ruleGroups()));
    await copyFile(TESTS, join(dir, 'rules.test.yaml'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const promtool = (args: string[]): string => {
    const r = spawnSync('promtool', args, { cwd: dir, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    return r.stdout;
  };

  it('check rules: the rules are valid', async () => {
    const count = (await ruleGroups()).groups.flatMap((g) => g.rules).length;
    assert.match(promtool(['check', 'rules', 'rules.yaml']), new RegExp(`SUCCESS: ${count} rules`));
  });

  it('test rules: every unit test passes', () => {
    assert.match(promtool(['test', 'rules', 'rules.test.yaml']), /SUCCESS/);
  });
});
