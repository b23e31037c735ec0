/**
 * A Debian package's files and control fields, read with `dpkg-deb` and never installed: no
 * maintainer script runs, as distroless builds its images. Documentation goes, but for each
 * package's copyright file.
 */
import { spawn } from 'node:child_process';
import { Readable } from 'node:stream';

import { extract } from 'tar-stream';

import type { FileTree } from './file-tree.js';
import { addEntry, normalPath } from './file-tree.js';

export interface DebianPackage {
  readonly name: string;
  readonly version: string;
  readonly architecture: string;
  /** The control file as dpkg keeps it in /var/lib/dpkg/status.d/ (what scanners read). */
  readonly control: string;
}

/** Manual pages, info, changelogs and lintian overrides: not needed to run anything. */
function dropped(path: string): boolean {
  if (/^usr\/share\/(man|info|lintian|gdb|gcc)(\/|$)/.test(path)) return true;
  return (
    /^usr\/share\/doc\/[^/]+\/./.test(path) && !/^usr\/share\/doc\/[^/]+\/copyright$/.test(path)
  );
}

function run(command: string, args: readonly string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out));
      else reject(new Error(`${command} ${args.join(' ')}: exit ${String(code)}: ${err.trim()}`));
    });
  });
}

/** The control file's fields, in a form `Package:`/`Version:` lines can be read from. */
function field(control: string, name: string): string {
  const value = new RegExp(`^${name}: (.*)$`, 'm').exec(control)?.[1];
  if (value === undefined) throw new Error(`the control file has no ${name}`);
  return value.trim();
}

/**
 * Adds the package's files to `tree` (hard links become copies, so that the layer's order never
 * matters) and returns its control fields.
 */
export async function unpackDebianPackage(deb: string, tree: FileTree): Promise<DebianPackage> {
  const control = (await run('dpkg-deb', ['--field', deb])).toString();
  const files = Readable.from(await run('dpkg-deb', ['--fsys-tarfile', deb]));
  const contents = new Map<string, Buffer>();
  for await (const entry of files.pipe(extract())) {
    const path = normalPath(entry.header.name);
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    const mode = entry.header.mode & 0o7777;
    const { type, linkname } = entry.header;
    if (type === 'file') contents.set(path, Buffer.concat(chunks));
    if (path === '' || dropped(path)) continue;
    if (type === 'directory') addEntry(tree, path, { type: 'directory', mode });
    else if (type === 'symlink') addEntry(tree, path, { type: 'symlink', target: linkname });
    else if (type === 'link') {
      const data = contents.get(normalPath(linkname));
      if (data === undefined) throw new Error(`${deb}: ${path} links to a file not seen before`);
      addEntry(tree, path, { type: 'file', mode, data });
    } else if (type === 'file') {
      addEntry(tree, path, { type: 'file', mode, data: contents.get(path) ?? Buffer.alloc(0) });
    }
  }
  const name = field(control, 'Package');
  return {
    name,
    version: field(control, 'Version'),
    architecture: field(control, 'Architecture'),
    control: control.endsWith('\n') ? control : `${control}\n`,
  };
}
