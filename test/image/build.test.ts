import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { appLayer, nodeLayer, provenanceOf, runtimeConfig } from '../../scripts/image/build.js';
import { ENTRYPOINT, ENV, USER } from '../../scripts/image/definition.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'sidecarset-image-'));
after(() => {
  rmSync(tmp, { recursive: true, force: true });
});

function write(path: string, text: string, mode = 0o644): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text, { mode });
}

describe('image build', () => {
  it('has only the Node binary in the node layer, on the PATH the entrypoint uses', async () => {
    const binary = join(tmp, 'node');
    write(binary, '\x7fELF', 0o700);
    const layer = await nodeLayer(binary);
    assert.deepEqual([...layer.keys()], ['usr/local/bin/node']);
    assert.deepEqual(layer.get('usr/local/bin/node'), {
      type: 'file',
      mode: 0o755,
      data: Buffer.from('\x7fELF'),
    });
    const path = ENV.find((e) => e.startsWith('PATH='))
      ?.slice('PATH='.length)
      .split(':');
    assert.ok(path?.includes('/usr/local/bin'), String(path));
    assert.equal(ENTRYPOINT[0], 'node');
  });

  it('puts package.json, bin, dist and node_modules in the app layer, nothing else', async () => {
    const root = join(tmp, 'repo');
    write(join(root, 'package.json'), '{}');
    write(join(root, 'package-lock.json'), '{}');
    write(join(root, 'tsconfig.json'), '{}');
    write(join(root, 'bin/sidecarset.js'), '#!/usr/bin/env node\n', 0o700);
    write(join(root, 'dist/main.js'), '', 0o600);
    write(join(root, 'src/main.ts'), '');
    write(join(root, 'certs/tls.key'), 'secret');
    write(join(root, 'node_modules/typescript/package.json'), '{}');
    const modules = join(tmp, 'modules');
    write(join(modules, 'node_modules/yaml/package.json'), '{}');
    const layer = await appLayer(root, modules);
    assert.deepEqual([...layer.keys()].sort(), [
      'app/bin',
      'app/bin/sidecarset.js',
      'app/dist',
      'app/dist/main.js',
      'app/node_modules',
      'app/node_modules/yaml',
      'app/node_modules/yaml/package.json',
      'app/package.json',
    ]);
    // Modes from the execute bit only: the umask and the disk's owners do not leak in.
    const mode = (path: string) => {
      const entry = layer.get(path);
      return entry?.type === 'file' ? entry.mode : undefined;
    };
    assert.equal(mode('app/bin/sidecarset.js'), 0o755);
    assert.equal(mode('app/dist/main.js'), 0o644);
  });

  it('labels the image with the version and license of package.json', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      version: string;
      license: string;
      description: string;
    };
    const provenance = await provenanceOf(ROOT, { SOURCE_DATE_EPOCH: '1700000000' });
    assert.equal(provenance.version, pkg.version);
    assert.equal(provenance.created, '2023-11-14T22:13:20Z');
    assert.match(provenance.revision, /^([0-9a-f]{40}(-dirty)?|unknown)$/);
    const config = runtimeConfig(provenance);
    assert.equal(config.created, '2023-11-14T22:13:20Z');
    assert.deepEqual(config.labels, {
      'org.opencontainers.image.title': 'sidecarset',
      'org.opencontainers.image.description': pkg.description,
      'org.opencontainers.image.version': pkg.version,
      'org.opencontainers.image.revision': provenance.revision,
      'org.opencontainers.image.created': '2023-11-14T22:13:20Z',
      'org.opencontainers.image.licenses': pkg.license,
      'org.opencontainers.image.documentation': 'docs/image.md',
    });
    assert.equal(config.user, `${USER.uid}:${USER.gid}`);
    assert.equal(config.workingDir, '/app');
  });
});
