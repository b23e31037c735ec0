import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { YOUNG_GENERATION_FLAG } from '../../src/cli/serving-heap.js';

const root = new URL('../../', import.meta.url);
const text = readFileSync(new URL('Dockerfile', root), 'utf8');

interface Stage {
  readonly from: string;
  readonly name: string;
  readonly instructions: readonly (readonly [string, string])[];
}

/** Dockerfile instructions per stage (comments dropped, continuation lines joined). */
function stages(dockerfile: string): Stage[] {
  const lines = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const out: { from: string; name: string; instructions: [string, string][] }[] = [];
  for (const line of lines) {
    const m = /^(\w+)\s+(.*)$/.exec(line);
    assert.ok(m, line);
    const [, op = '', args = ''] = m;
    if (op.toUpperCase() === 'FROM') {
      const f = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      assert.ok(f, line);
      out.push({ from: f[1] ?? '', name: f[2] ?? '', instructions: [] });
    } else {
      out.at(-1)?.instructions.push([op.toUpperCase(), args]);
    }
  }
  return out;
}

function args(stage: Stage, op: string): string[] {
  return stage.instructions.filter(([o]) => o === op).map(([, a]) => a);
}

describe('Dockerfile', () => {
  const all = stages(text);
  const [build, deps, runtime] = all;
  assert.ok(build && deps && runtime);
  const nodeImage = /^ARG NODE_IMAGE=(\S+)$/m.exec(text)?.[1] ?? '';

  it('is multi-stage on Node 24, its base pinned by digest', () => {
    assert.equal(all.length, 3);
    assert.match(nodeImage, /^node:24[-.][^@]*@sha256:[0-9a-f]{64}$/);
    for (const stage of all) assert.equal(stage.from, '${NODE_IMAGE}');
  });

  it('has no package manager in the runtime image', () => {
    const runs = args(runtime, 'RUN').join(' ');
    assert.doesNotMatch(runs, /\b(npm|npx|yarn|corepack) (ci|install|i|run|exec)\b/);
    for (const path of [
      '/usr/local/lib/node_modules/npm',
      '/usr/local/lib/node_modules/corepack',
      '/usr/local/bin/npm',
      '/usr/local/bin/npx',
      '/usr/local/bin/corepack',
    ])
      assert.match(runs, new RegExp(`^rm -rf .*${path}(\\s|$)`), path);
  });

  it('carries the OCI labels, the version matching package.json', () => {
    const label = /(org\.opencontainers\.image\.[a-z.]+)="([^"]*)"/g;
    const labels = new Map(
      [...args(runtime, 'LABEL').join(' ').matchAll(label)].map((m) => [m[1] ?? '', m[2] ?? '']),
    );
    for (const key of ['title', 'description', 'version', 'revision', 'created', 'licenses'])
      assert.ok(labels.has(`org.opencontainers.image.${key}`), key);
    const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
      version: string;
      license: string;
    };
    assert.equal(labels.get('org.opencontainers.image.licenses'), pkg.license);
    assert.match(text, new RegExp(`^ARG VERSION=${pkg.version.replaceAll('.', '\\.')}$`, 'm'));
  });

  it('builds with all dependencies in the build stage', () => {
    const runs = args(build, 'RUN');
    assert.ok(runs.some((r) => /^npm ci\b/.test(r) && !r.includes('--omit=dev')));
    assert.ok(runs.includes('npm run build'));
  });

  it('installs production dependencies only, without lifecycle scripts, for the runtime stage', () => {
    const installs = args(deps, 'RUN').filter((r) => /npm ci|npm install|npm i\b/.test(r));
    assert.ok(installs.length > 0);
    for (const r of installs) assert.match(r, /npm ci --omit=dev --ignore-scripts/);
    const copies = args(runtime, 'COPY');
    assert.ok(copies.includes('--from=deps /app/node_modules ./node_modules'));
    assert.ok(copies.includes('--from=build /app/dist ./dist'));
    assert.ok(copies.includes('bin ./bin'));
    for (const c of copies.filter((c) => !c.startsWith('--from=deps')))
      assert.doesNotMatch(c, /node_modules|\bsrc\b|tsconfig/);
  });

  it('runs as a numeric non-root user with the serve entrypoint', () => {
    const [user] = args(runtime, 'USER');
    assert.match(user ?? '', /^[1-9]\d*(:\d+)?$/);
    const [entrypoint = '[]'] = args(runtime, 'ENTRYPOINT');
    const words = JSON.parse(entrypoint) as string[];
    // The flag serve would otherwise restart itself with (src/cli/serving-heap.ts).
    assert.deepEqual(words, ['node', YOUNG_GENERATION_FLAG, '/app/bin/sidecarset.js', 'serve']);
    assert.deepEqual(args(runtime, 'EXPOSE'), ['9443 8080']);
    // Node accepts the entrypoint's flags (an unknown one would stop the container at start).
    const run = spawnSync(process.execPath, [...words.slice(1, -2), '-e', '0'], {
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    // USER comes after every RUN, so nothing runs as root after the switch, nor needs to.
    const ops = runtime.instructions.map(([o]) => o);
    assert.ok(ops.lastIndexOf('RUN') < ops.indexOf('USER'));
  });

  it('matches the Deployment: same UID, entrypoint needs no args', () => {
    const deployment = readFileSync(
      new URL('manifests/base/webhook/deployment.yaml', root),
      'utf8',
    );
    const [user] = args(runtime, 'USER');
    assert.match(deployment, new RegExp(`runAsUser: ${(user ?? '').split(':')[0] ?? ''}\\n`));
    // The webhook container keeps the image's entrypoint (a preStop hook may have a command).
    assert.doesNotMatch(deployment, /^ {10}(command|args):/m);
  });

  it('keeps the build context small and free of secrets', () => {
    const ignore = readFileSync(new URL('.dockerignore', root), 'utf8').split('\n');
    for (const entry of ['node_modules', 'dist', '.git', 'certs', 'coverage']) {
      assert.ok(ignore.includes(entry), entry);
    }
    // Everything the Dockerfile copies from the context is not ignored.
    for (const entry of ['src', 'bin', 'package.json', 'package-lock.json', 'tsconfig.json']) {
      assert.ok(!ignore.includes(entry), entry);
    }
  });
});
