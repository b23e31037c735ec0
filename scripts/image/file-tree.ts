/**
 * A layer's files, and the tar archive they make: the same files give the same bytes, whatever
 * order they were added in and whenever it runs (sorted paths, one timestamp, owners by number,
 * no user or group names), so that a rebuild gives the same layer digest.
 */
import { pack } from 'tar-stream';
import type { Header } from 'tar-stream';

export type FileEntry =
  | { readonly type: 'file'; readonly mode: number; readonly data: Buffer; readonly owner?: number }
  | { readonly type: 'directory'; readonly mode: number; readonly owner?: number }
  | { readonly type: 'symlink'; readonly target: string };

/** Paths without a leading slash or `./`, folders without a trailing slash: `usr/lib/x`. */
export type FileTree = Map<string, FileEntry>;

/** What tar-stream's pack takes: a header's name and any of its other fields. */
type EntryHeader = Partial<Header> & Pick<Header, 'name'>;

/** `./usr/lib/`, `/usr/lib` and `usr/lib` are all `usr/lib`. */
export function normalPath(path: string): string {
  return path.replace(/^\.?\/+/, '').replace(/\/+$/, '');
}

/** Adds `entry` at `path`; a folder already there stays as it is (several packages share one). */
export function addEntry(tree: FileTree, path: string, entry: FileEntry): void {
  const name = normalPath(path);
  if (name === '') return;
  if (entry.type === 'directory' && tree.get(name)?.type === 'directory') return;
  tree.set(name, entry);
}

/** Every folder above a path in the tree that has no entry of its own gets one (0755, root). */
function withParents(tree: FileTree): FileTree {
  const out: FileTree = new Map(tree);
  for (const path of tree.keys()) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join('/');
      if (!out.has(parent)) out.set(parent, { type: 'directory', mode: 0o755 });
    }
  }
  return out;
}

function header(path: string, entry: FileEntry, mtime: Date): EntryHeader {
  const common = { mtime, uid: 0, gid: 0, uname: '', gname: '' };
  switch (entry.type) {
    case 'file': {
      const owner = entry.owner ?? 0;
      return {
        ...common,
        uid: owner,
        gid: owner,
        name: path,
        mode: entry.mode,
        size: entry.data.length,
        type: 'file',
      };
    }
    case 'directory': {
      const owner = entry.owner ?? 0;
      return {
        ...common,
        uid: owner,
        gid: owner,
        name: `${path}/`,
        mode: entry.mode,
        type: 'directory',
      };
    }
    case 'symlink':
      return { ...common, name: path, mode: 0o777, type: 'symlink', linkname: entry.target };
  }
}

/** The tree as an uncompressed tar, entries in path order, every timestamp `mtime`. */
export async function treeTar(tree: FileTree, mtime: Date): Promise<Buffer> {
  const complete = withParents(tree);
  const archive = pack();
  const chunks: Buffer[] = [];
  archive.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
  const done = new Promise<void>((resolve, reject) => {
    archive.on('end', resolve);
    archive.on('error', reject);
  });
  // Byte order, not locale order: the same on every machine.
  const paths = [...complete.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const path of paths) {
    const entry = complete.get(path);
    if (entry === undefined) continue;
    if (entry.type === 'file') archive.entry(header(path, entry, mtime), entry.data);
    else archive.entry(header(path, entry, mtime));
  }
  archive.finalize();
  await done;
  return Buffer.concat(chunks);
}
