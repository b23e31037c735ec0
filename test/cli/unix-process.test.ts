/**
 * The built binary as a Unix tool: standard input for every file flag, a reader that goes away
 * early (`| head`), the version of package.json, shell completion. Needs `npm run build`.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { parse } from 'yaml';

import type { Pod } from '../../src/core/api/k8s-types.js';
import { withHashes } from '../../src/core/api/hash.js';
import type { SidecarSet } from '../../src/core/api/sidecarset-types.js';
import { readManifests } from '../../src/io/documents.js';
import { grayReleasePods } from '../fixtures/plan/gray-release-pods.js';

const root = new URL('../../', import.meta.url).pathname;
const grayRelease = join(root, 'test/fixtures/plan/gray-release-sidecarset.yaml');
const logtail = join(root, 'examples/logtail-sidecarset.yaml');
const nginxPod = join(root, 'examples/nginx-pod.yaml');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs bin/sidecarset.js with `stdin` written to it. */
function sidecarset(args: readonly string[], stdin = ''): Promise<Run> {
  const child = spawn(process.execPath, ['bin/sidecarset.js', ...args], { cwd: root });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.end(stdin);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      resolve({ code, stdout, stderr });
    }),
  );
}

/**
 * Runs `sidecarset ARGS | head -1` in bash with pipefail: the status is the pipeline's, so a
 * crash of sidecarset on the closed pipe would show.
 */
function throughHead(args: readonly string[]): Run {
  const quoted = args.map((a) => `'${a}'`).join(' ');
  const result = spawnSync(
    'bash',
    ['-c', `set -o pipefail; '${process.execPath}' bin/sidecarset.js ${quoted} | head -1`],
    { cwd: root, encoding: 'utf8' },
  );
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

let dir = '';
let podsFile = '';

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'unix-cli-'));
  const doc = (await readManifests(grayRelease))[0];
  assert.ok(doc);
  // Far more output than a pipe buffers (64 KiB), so that head leaves while we still write.
  const pods = grayReleasePods(withHashes(doc.object as unknown as SidecarSet), 5000, 'busybox:1');
  podsFile = join(dir, 'pods.json');
  await writeFile(podsFile, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: pods }));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('sidecarset as a Unix tool', () => {
  it('plan -o json | head -1: ends quietly with status 0', () => {
    const run = throughHead([
      'plan',
      '--sidecarsets',
      grayRelease,
      '--pods',
      podsFile,
      '-o',
      'json',
    ]);
    assert.equal(run.stdout, '{\n');
    assert.equal(run.stderr, '');
    assert.equal(run.code, 0);
  });

  it('inject … | head -1: ends quietly with status 0', () => {
    const run = throughHead(['inject', '--sidecarsets', logtail, '-f', podsFile]);
    assert.equal(run.stdout, 'apiVersion: v1\n');
    assert.equal(run.stderr, '');
    assert.equal(run.code, 0);
  });

  it('plan reads --pods from stdin, and --sidecarsets', async () => {
    const pods = await readFile(podsFile, 'utf8');
    const fromPods = await sidecarset(
      ['plan', '--sidecarsets', grayRelease, '--pods', '-', '-o', 'json'],
      pods,
    );
    assert.equal(fromPods.code, 0, fromPods.stderr);
    assert.equal((JSON.parse(fromPods.stdout) as { upgrade: string[] }).upgrade.length, 500);
    const fromSets = await sidecarset(
      ['plan', '--sidecarsets', '-', '--pods', podsFile, '-o', 'json'],
      await readFile(grayRelease, 'utf8'),
    );
    assert.equal(fromSets.code, 0, fromSets.stderr);
    assert.equal(fromSets.stdout, fromPods.stdout);
  });

  it('inject reads -f, --sidecarsets or --namespaces from stdin', async () => {
    const sets = await readFile(logtail, 'utf8');
    const pod = await readFile(nginxPod, 'utf8');
    const namespaces = 'apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n';
    const nsFile = join(dir, 'ns.yaml');
    await writeFile(nsFile, namespaces);
    const runs = await Promise.all([
      sidecarset(['inject', '--sidecarsets', logtail, '-f', '-'], pod),
      sidecarset(['inject', '--sidecarsets', '-', '-f', nginxPod], sets),
      sidecarset(
        ['inject', '--sidecarsets', logtail, '--namespaces', '-', '-f', nginxPod],
        namespaces,
      ),
      sidecarset(['inject', '--sidecarsets', logtail, '--namespaces', nsFile, '-f', nginxPod]),
    ]);
    for (const run of runs) {
      assert.equal(run.code, 0, run.stderr);
      const injected = parse(run.stdout) as Pod;
      assert.deepEqual(
        injected.spec.containers.map((c) => c.name),
        ['logtail', 'nginx'],
      );
    }
    // What --namespaces reads is really stdin: another kind there is refused, naming it.
    const wrong = await sidecarset(
      ['inject', '--sidecarsets', logtail, '--namespaces', '-', '-f', nginxPod],
      pod,
    );
    assert.equal(wrong.code, 1);
    assert.equal(wrong.stderr, 'error: <stdin>: expected a Namespace, found kind Pod\n');
  });

  it('validate reads --sidecarsets from stdin', async () => {
    const run = await sidecarset(
      ['validate', '--sidecarsets', '-'],
      await readFile(logtail, 'utf8'),
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, '1 SidecarSet valid\n');
  });

  it('refuses stdin for two flags at once, exit 1', async () => {
    const run = await sidecarset(['plan', '--sidecarsets', '-', '--pods', '-']);
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      'error: only one of --sidecarsets, --pods can read standard input (-)\n',
    );
  });

  it('--version prints the version of package.json', async () => {
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
      version: string;
    };
    const run = await sidecarset(['--version']);
    assert.equal(run.code, 0);
    assert.equal(run.stdout, `${pkg.version}\n`);
  });
});

/** Every command of the CLI, as completion offers them. */
const COMMANDS = [
  'inject',
  'validate',
  'plan',
  'rollout',
  'check-inject',
  'check',
  'serve',
  'controller',
  'completion',
];

describe('sidecarset completion', () => {
  it('bash: a script bash accepts, with every command and the flags of each', async () => {
    const run = await sidecarset(['completion', 'bash']);
    assert.equal(run.code, 0, run.stderr);
    const check = spawnSync('bash', ['-n'], { input: run.stdout, encoding: 'utf8' });
    assert.equal(check.status, 0, check.stderr);
    for (const command of COMMANDS) {
      assert.match(run.stdout, new RegExp(`^    ${command}\\)$`, 'm'));
    }
    for (const sub of ['status', 'history', 'undo', 'pause', 'resume']) {
      assert.match(run.stdout, new RegExp(`^        ${sub}\\)$`, 'm'));
    }
    assert.match(
      run.stdout,
      /"--sidecarsets --pods -o --output --simulate --fail-image --kubeconfig --context -h --help"/,
    );
    assert.match(run.stdout, /-o\|--output\) COMPREPLY=\(\$\(compgen -W "table json yaml"/);
    assert.match(run.stdout, /complete -o default -F _sidecarset sidecarset/);
  });

  it('bash: completes commands, flags and choices when run', async () => {
    const script = (await sidecarset(['completion', 'bash'])).stdout;
    const complete = (line: string): string[] => {
      const words = line.split(' ');
      const probe = `${script}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}
_sidecarset; printf '%s\\n' "\${COMPREPLY[@]}"`;
      const result = spawnSync('bash', ['-c', probe], { encoding: 'utf8' });
      assert.equal(result.status, 0, result.stderr);
      return result.stdout.split('\n').filter((w) => w !== '');
    };
    assert.deepEqual(complete('sidecarset pl'), ['plan']);
    assert.deepEqual(complete('sidecarset plan --si'), ['--sidecarsets', '--simulate']);
    assert.deepEqual(complete('sidecarset plan -o y'), ['yaml']);
    assert.deepEqual(complete('sidecarset completion '), ['-h', '--help', 'bash', 'zsh']);
    assert.deepEqual(complete('sidecarset ro'), ['rollout']);
    assert.deepEqual(complete('sidecarset rollout '), [
      'status',
      'history',
      'undo',
      'pause',
      'resume',
      '-h',
      '--help',
    ]);
    assert.deepEqual(complete('sidecarset rollout undo agent --to'), ['--to-revision']);
    assert.deepEqual(complete('sidecarset rollout status agent -o j'), ['json']);
    assert.deepEqual(complete('sidecarset check-inject web-0 -n'), ['-n']);
    assert.deepEqual(complete('sidecarset check -o '), ['table', 'json', 'yaml']);
    // A path flag gets no words: bash falls back to file names.
    assert.deepEqual(complete('sidecarset inject -f '), []);
  });

  it('zsh: a script with every command and the flags of each', async () => {
    const run = await sidecarset(['completion', 'zsh']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^#compdef sidecarset\n/);
    for (const command of COMMANDS) {
      assert.match(run.stdout, new RegExp(`^    '${command}:`, 'm'));
    }
    assert.match(run.stdout, /^ {8}'undo:write a revision/m);
    assert.match(run.stdout, /_describe -t commands 'sidecarset rollout command' commands/);
    assert.match(
      run.stdout,
      /'\(-o --output\)'\{-o,--output\}'\[output format\]:value:\(table json yaml\)'/,
    );
    assert.match(run.stdout, /'--pods\[offline\\: Pods\\: a file, .*\]:value:_files'/);
    // Where zsh is installed, it must accept the script too.
    const zsh = spawnSync('zsh', ['-n'], { input: run.stdout, encoding: 'utf8' });
    if (zsh.error === undefined) assert.equal(zsh.status, 0, zsh.stderr);
  });

  it('refuses another shell, exit 2', async () => {
    const run = await sidecarset(['completion', 'fish']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /value 'fish' is invalid for argument 'shell'/);
  });
});
