import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { parse } from 'yaml';

import {
  APP_DIR,
  DEBIAN_PACKAGES,
  ENTRYPOINT,
  ENV,
  PORTS,
  USER,
} from '../../scripts/image/definition.js';
import { YOUNG_GENERATION_FLAG } from '../../src/cli/serving-heap.js';

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

interface Values {
  podSecurityContext: { runAsUser: number; runAsGroup: number; runAsNonRoot: boolean };
  webhook: { port: number };
  metrics: { port: number };
}
const values = parse(read('charts/sidecarset/values.yaml')) as Values;

describe('image definition', () => {
  it('runs as the non-root user the chart and the manifests run it as', () => {
    assert.notEqual(USER.uid, 0);
    assert.notEqual(USER.gid, 0);
    assert.equal(values.podSecurityContext.runAsNonRoot, true);
    assert.equal(values.podSecurityContext.runAsUser, USER.uid);
    assert.equal(values.podSecurityContext.runAsGroup, USER.gid);
    const deployment = read('manifests/base/webhook/deployment.yaml');
    assert.match(deployment, new RegExp(`^ +runAsUser: ${USER.uid}$`, 'm'));
    assert.match(deployment, new RegExp(`^ +runAsGroup: ${USER.gid}$`, 'm'));
  });

  it('starts serve with node and the young generation capped', () => {
    assert.deepEqual(ENTRYPOINT, [
      'node',
      YOUNG_GENERATION_FLAG,
      `${APP_DIR}/bin/sidecarset.js`,
      'serve',
    ]);
    assert.equal(APP_DIR, '/app');
    // Node accepts the entrypoint's flags (an unknown one would stop the container at start).
    const flags = ENTRYPOINT.slice(1, -2);
    const run = spawnSync(process.execPath, [...flags, '-e', '0'], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
  });

  it('is started by the manifests and the chart with its own entrypoint', () => {
    // The webhook container keeps the image's entrypoint (a preStop hook may have a command).
    assert.doesNotMatch(read('manifests/base/webhook/deployment.yaml'), /^ {10}(command|args):/m);
    assert.doesNotMatch(
      read('charts/sidecarset/templates/deployment.yaml'),
      /^ {10}(command|args):/m,
    );
  });

  it("runs the chart's helm test with the image's node and script", () => {
    const check = read('charts/sidecarset/templates/tests/check.yaml');
    const command = /^ +command: \[([^\]]*)\]$/m.exec(check)?.[1]?.split(/,\s*/);
    assert.ok(command, 'check.yaml has a command');
    const [node, script] = command;
    assert.equal(node, ENTRYPOINT[0]);
    assert.equal(script, `${APP_DIR}/bin/sidecarset.js`);
    assert.equal(command[2], 'check');
  });

  it("exposes the chart's webhook and metrics ports", () => {
    assert.ok(PORTS.includes(values.webhook.port), String(values.webhook.port));
    assert.ok(PORTS.includes(values.metrics.port), String(values.metrics.port));
  });

  it('has no shell and no package manager', () => {
    for (const name of ['apt', 'dpkg', 'bash', 'dash', 'busybox', 'coreutils', 'npm', 'nodejs']) {
      assert.ok(!DEBIAN_PACKAGES.includes(name), name);
    }
    assert.ok(ENV.includes('NODE_ENV=production'));
  });
});
