import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { unpackDebianPackage } from '../../scripts/image/debian-package.js';
import type { FileTree } from '../../scripts/image/file-tree.js';

const DPKG_DEB = spawnSync('dpkg-deb', ['--version']).status === 0;
const skip = DPKG_DEB
  ? false
  : 'dpkg-deb is not on PATH (it comes with dpkg, on Debian and Ubuntu)';

const CONTROL = `Package: tiny
Version: 1.2-3+deb12u1
Architecture: amd64
Maintainer: Nobody <nobody@example.com>
Description: a package made by the test
`;

const LIBRARY = Buffer.from('the library\n');

/** A .deb with a library, its hard link, a symbolic link, docs, a copyright and a man page. */
function buildDeb(dir: string): string {
  const root = join(dir, 'root');
  const file = (path: string, data: Buffer | string, mode = 0o644) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), data);
    chmodSync(join(root, path), mode);
  };
  file('DEBIAN/control', CONTROL);
  file('usr/lib/tiny/libtiny.so.1', LIBRARY);
  linkSync(join(root, 'usr/lib/tiny/libtiny.so.1'), join(root, 'usr/lib/tiny/libtiny.so.1.0'));
  symlinkSync('libtiny.so.1', join(root, 'usr/lib/tiny/libtiny.so'));
  file('usr/bin/tiny', '#!/bin/false\n', 0o755);
  file('usr/share/doc/tiny/copyright', 'Copyright: nobody\n');
  file('usr/share/doc/tiny/changelog.Debian.gz', 'changes\n');
  file('usr/share/man/man1/tiny.1.gz', 'manual\n');
  const deb = join(dir, 'tiny.deb');
  const built = spawnSync('dpkg-deb', ['--root-owner-group', '-Znone', '--build', root, deb], {
    encoding: 'utf8',
  });
  assert.equal(built.status, 0, built.stderr);
  return deb;
}

describe('Debian package', { skip }, () => {
  let dir = '';
  let deb = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sidecarset-deb-'));
    deb = buildDeb(dir);
  });
  after(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  it('adds its files, links as they are, hard links as copies, documentation dropped', async () => {
    const tree: FileTree = new Map();
    await unpackDebianPackage(deb, tree);
    assert.deepEqual([...tree.keys()].sort(), [
      'usr',
      'usr/bin',
      'usr/bin/tiny',
      'usr/lib',
      'usr/lib/tiny',
      'usr/lib/tiny/libtiny.so',
      'usr/lib/tiny/libtiny.so.1',
      'usr/lib/tiny/libtiny.so.1.0',
      'usr/share',
      'usr/share/doc',
      'usr/share/doc/tiny',
      'usr/share/doc/tiny/copyright',
    ]);
    assert.deepEqual(tree.get('usr/lib/tiny/libtiny.so'), {
      type: 'symlink',
      target: 'libtiny.so.1',
    });
    for (const path of ['usr/lib/tiny/libtiny.so.1', 'usr/lib/tiny/libtiny.so.1.0']) {
      assert.deepEqual(tree.get(path), { type: 'file', mode: 0o644, data: LIBRARY }, path);
    }
    assert.deepEqual(tree.get('usr/bin/tiny'), {
      type: 'file',
      mode: 0o755,
      data: Buffer.from('#!/bin/false\n'),
    });
    assert.deepEqual(tree.get('usr/share/doc/tiny/copyright'), {
      type: 'file',
      mode: 0o644,
      data: Buffer.from('Copyright: nobody\n'),
    });
    assert.deepEqual(tree.get('usr/lib'), { type: 'directory', mode: 0o755 });
  });

  it('returns its control fields', async () => {
    const pkg = await unpackDebianPackage(deb, new Map());
    assert.equal(pkg.name, 'tiny');
    assert.equal(pkg.version, '1.2-3+deb12u1');
    assert.equal(pkg.architecture, 'amd64');
    assert.equal(pkg.control, CONTROL);
  });

  it('keeps a folder another package added first', async () => {
    const tree: FileTree = new Map([['usr/lib', { type: 'directory', mode: 0o700 }]]);
    await unpackDebianPackage(deb, tree);
    assert.deepEqual(tree.get('usr/lib'), { type: 'directory', mode: 0o700 });
  });

  it('fails on a file that is not a package', async () => {
    const notDeb = join(dir, 'not.deb');
    writeFileSync(notDeb, 'not a package');
    await assert.rejects(unpackDebianPackage(notDeb, new Map()), /dpkg-deb/);
  });
});
