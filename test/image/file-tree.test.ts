import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { FileEntry, FileTree } from '../../scripts/image/file-tree.js';
import { addEntry, normalPath, treeTar } from '../../scripts/image/file-tree.js';
import { readTar } from './tar.js';

const MTIME = new Date('2024-05-01T12:00:00Z');

const ENTRIES: readonly (readonly [string, FileEntry])[] = [
  ['usr/lib/os-release', { type: 'file', mode: 0o644, data: Buffer.from('ID=debian\n') }],
  ['etc/os-release', { type: 'symlink', target: '../usr/lib/os-release' }],
  ['usr/local/bin/node', { type: 'file', mode: 0o755, data: Buffer.from('\x7fELF') }],
  ['home/sidecarset', { type: 'directory', mode: 0o700, owner: 1000 }],
  ['tmp', { type: 'directory', mode: 0o1777 }],
  ['app/bin/sidecarset.js', { type: 'file', mode: 0o755, data: Buffer.from('#!/x\n') }],
  ['app/bin/a-b.js', { type: 'file', mode: 0o644, data: Buffer.from(''), owner: 1000 }],
  ['app/bin/Zed.js', { type: 'file', mode: 0o644, data: Buffer.from('') }],
];

function treeOf(entries: readonly (readonly [string, FileEntry])[]): FileTree {
  const tree: FileTree = new Map();
  for (const [path, entry] of entries) addEntry(tree, path, entry);
  return tree;
}

describe('file tree', () => {
  it('gives the same bytes whatever order the entries were added in', async () => {
    const forward = await treeTar(treeOf(ENTRIES), MTIME);
    const backward = await treeTar(treeOf([...ENTRIES].reverse()), MTIME);
    assert.ok(forward.equals(backward));
  });

  it('writes its entries in byte order, parents first, with one mtime and numeric owners', async () => {
    const entries = await readTar(await treeTar(treeOf(ENTRIES), MTIME));
    const names = entries.map((e) => e.header.name);
    assert.deepEqual(names, [
      'app/',
      'app/bin/',
      // 'Z' (0x5a) before 'a' (0x61): byte order, not a locale's.
      'app/bin/Zed.js',
      'app/bin/a-b.js',
      'app/bin/sidecarset.js',
      'etc/',
      'etc/os-release',
      'home/',
      'home/sidecarset/',
      'tmp/',
      'usr/',
      'usr/lib/',
      'usr/lib/os-release',
      'usr/local/',
      'usr/local/bin/',
      'usr/local/bin/node',
    ]);
    for (const { header } of entries) {
      assert.equal(header.mtime.getTime(), MTIME.getTime(), header.name);
      assert.equal(header.uname, '', header.name);
      assert.equal(header.gname, '', header.name);
    }
    const byName = new Map(entries.map((e) => [e.header.name, e]));
    const owners = (name: string) => [byName.get(name)?.header.uid, byName.get(name)?.header.gid];
    assert.deepEqual(owners('usr/local/bin/node'), [0, 0]);
    assert.deepEqual(owners('home/sidecarset/'), [1000, 1000]);
    assert.deepEqual(owners('app/bin/a-b.js'), [1000, 1000]);
    assert.equal(byName.get('tmp/')?.header.mode, 0o1777);
    assert.equal(byName.get('home/sidecarset/')?.header.mode, 0o700);
    const node = byName.get('usr/local/bin/node');
    assert.equal(node?.header.mode, 0o755);
    assert.equal(node.data.toString(), '\x7fELF');
  });

  it('adds the missing parents as root-owned 0755 folders', async () => {
    const tree = treeOf([['a/b/c/file', { type: 'file', mode: 0o600, data: Buffer.from('x') }]]);
    const entries = await readTar(await treeTar(tree, MTIME));
    const parents = entries.filter((e) => e.header.type === 'directory');
    assert.deepEqual(
      parents.map((e) => [e.header.name, e.header.mode, e.header.uid, e.header.gid]),
      [
        ['a/', 0o755, 0, 0],
        ['a/b/', 0o755, 0, 0],
        ['a/b/c/', 0o755, 0, 0],
      ],
    );
    assert.equal(entries.at(-1)?.header.mode, 0o600);
  });

  it('keeps the first of a folder added twice', async () => {
    const tree: FileTree = new Map();
    addEntry(tree, 'usr/share', { type: 'directory', mode: 0o755 });
    addEntry(tree, './usr/share/', { type: 'directory', mode: 0o700, owner: 1000 });
    assert.equal(tree.size, 1);
    const [share] = (await readTar(await treeTar(tree, MTIME))).filter(
      (e) => e.header.name === 'usr/share/',
    );
    assert.equal(share?.header.mode, 0o755);
    assert.equal(share.header.uid, 0);
  });

  it('keeps a symbolic link and its target', async () => {
    const tree = treeOf([['lib64', { type: 'symlink', target: 'usr/lib64' }]]);
    const [link] = await readTar(await treeTar(tree, MTIME));
    assert.equal(link?.header.name, 'lib64');
    assert.equal(link.header.type, 'symlink');
    assert.equal(link.header.linkname, 'usr/lib64');
    assert.equal(link.header.uid, 0);
  });

  it('writes paths without a leading slash, ./ or trailing slash', () => {
    assert.equal(normalPath('./usr/lib/'), 'usr/lib');
    assert.equal(normalPath('/usr/lib'), 'usr/lib');
    assert.equal(normalPath('usr/lib'), 'usr/lib');
    const tree = treeOf([['./', { type: 'directory', mode: 0o755 }]]);
    assert.equal(tree.size, 0);
  });
});
