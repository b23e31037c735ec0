/**
 * The Argo CD health check (docs/argocd/health.lua) run by a Lua 5.1 interpreter (Debian's
 * `lua5.1`; Argo CD's gopher-lua is Lua 5.1) on SidecarSets whose conditions are the ones the
 * controller writes (src/core/status/status-conditions.ts), and on an old generation and no status.
 * Without lua5.1 the test skips with one line, except under CI=true (.ci/run installs it).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';

import type { SidecarSet, SidecarSetStatus } from '../../src/core/api/sidecarset-types.js';
import type { RolloutSummary } from '../../src/core/status/status-conditions.js';
import { nextStatusConditions } from '../../src/core/status/status-conditions.js';
import { rolloutSummary } from '../support/rollout-summary.js';

const script = new URL('../../docs/argocd/health.lua', import.meta.url).pathname;
const LUA = 'lua5.1';

function luaMissing(): string | false {
  if (spawnSync(LUA, ['-v'], { stdio: 'ignore' }).status === 0) return false;
  const reason = `${LUA} is not installed (apt-get install lua5.1)`;
  if (process.env['CI'] === 'true') throw new Error(`${reason}; CI=true requires it`);
  process.stdout.write(`argocd health check: skipped: ${reason}\n`);
  return reason;
}

/** A JSON value as a Lua table constructor (Lua 5.1 has no \u escapes: bytes as \ddd). */
function lua(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') {
    const bytes = [...Buffer.from(value, 'utf8')];
    return `"${bytes.map((b) => (b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\${String(b)}`)).join('')}"`;
  }
  if (Array.isArray(value)) return `{${value.map(lua).join(', ')}}`;
  const entries = Object.entries(value as Record<string, unknown>).filter(
    ([, v]) => v !== undefined && v !== null,
  );
  return `{${entries.map(([k, v]) => `[${lua(k)}] = ${lua(v)}`).join(', ')}}`;
}

interface Health {
  status: string;
  message: string;
}

function health(obj: unknown): Health {
  const program = [
    `obj = ${lua(obj)}`,
    `local hs = dofile(${lua(script)})`,
    'io.write(hs.status, "\\n", hs.message or "")',
  ].join('\n');
  const run = spawnSync(LUA, ['-'], { input: program, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const [status = '', ...message] = run.stdout.split('\n');
  return { status, message: message.join('\n') };
}

const GENERATION = 4;

function sidecarSet(status: SidecarSetStatus | undefined, generation = GENERATION): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'logtail', generation },
    spec: { selector: { matchLabels: { app: 'nginx' } } },
    ...(status === undefined ? {} : { status }),
  };
}

const counts = (matchedPods: number, updatedPods: number, updatedReadyPods: number) => ({
  matchedPods,
  updatedPods,
  updatedReadyPods,
});

/** The SidecarSet as the controller leaves it after a round that planned `summary`. */
function written(overrides: Partial<RolloutSummary>, generation = GENERATION): SidecarSet {
  const summary = rolloutSummary(overrides);
  const ss = sidecarSet(undefined, generation);
  const conditions = nextStatusConditions(
    [{ type: 'RolloutPaused', status: 'False', reason: 'Resumed' }],
    ss,
    summary,
    new Date('2026-01-01T00:00:00Z'),
  );
  return {
    ...ss,
    status: {
      ...summary.status,
      readyPods: 4,
      observedGeneration: generation,
      conditions: conditions ?? [],
    },
  };
}

describe('the Argo CD health check (docs/argocd/health.lua)', { skip: luaMissing() }, () => {
  const pod = { namespace: 'default', name: 'a' };
  // Conditions from generation 3 under a status that says 4: they do not count, the counts do.
  const stale = {
    ...written({ status: counts(4, 4, 4) }, GENERATION - 1),
    ...sidecarSet(undefined),
  };
  const cases: [string, SidecarSet, string, RegExp][] = [
    ['rolled out', written({ status: counts(4, 4, 4) }), 'Healthy', /rollout complete/],
    [
      'done up to the partition',
      written({ held: [{ reason: 'Partition' }] }),
      'Healthy',
      /1 pod\(s\) kept on the old version/,
    ],
    [
      'NotUpdate',
      written({ stopped: 'NotUpdate', held: [{ reason: 'NotUpdate' }] }),
      'Healthy',
      /NotUpdate/,
    ],
    ['upgrading', written({ upgrade: [pod] }), 'Progressing', /1 of 4 pods updated/],
    [
      'paused by failed pods',
      written({
        stopped: 'UnhealthyPods',
        health: { pause: true, message: 'default/a: CrashLoopBackOff' },
      }),
      'Degraded',
      /CrashLoopBackOff/,
    ],
    [
      'left with pods that cannot be upgraded',
      written({ notUpgradable: [pod] }),
      'Degraded',
      /cannot be upgraded in place/,
    ],
    [
      "paused by the user's updateStrategy.paused",
      written({ stopped: 'Paused', held: [{ reason: 'Paused' }] }),
      'Suspended',
      /updateStrategy.paused/,
    ],
    [
      'changed since the controller last wrote (an old generation)',
      { ...written({ status: counts(4, 4, 4) }), metadata: { name: 'logtail', generation: 5 } },
      'Progressing',
      /observe generation 5/,
    ],
    [
      'with conditions of an older generation than status.observedGeneration',
      { ...stale, status: { ...stale.status, observedGeneration: GENERATION } },
      'Healthy',
      /4 of 4 pods updated/,
    ],
    ['without a status yet', sidecarSet(undefined), 'Progressing', /Waiting for the controller/],
    [
      'from a controller without conditions, rolled out',
      sidecarSet({ ...counts(2, 2, 2), observedGeneration: GENERATION }),
      'Healthy',
      /2 of 2 pods updated, 2 updated and ready/,
    ],
    [
      'from a controller without conditions, upgrading',
      sidecarSet({ ...counts(2, 1, 0), observedGeneration: GENERATION }),
      'Progressing',
      /1 of 2 pods updated/,
    ],
  ];
  for (const [name, obj, status, message] of cases) {
    it(`${name}: ${status}`, () => {
      const hs = health(obj);
      assert.equal(hs.status, status, hs.message);
      assert.match(hs.message, message);
    });
  }

  it('passes strings through byte for byte', () => {
    const ss = written({ upgrade: [pod] });
    const condition = ss.status?.conditions?.find((c) => c.type === 'Reconciling');
    assert.ok(condition);
    condition.message = 'pod "é" \\ waits';
    assert.equal(health(ss).message, 'pod "é" \\ waits');
  });
});
