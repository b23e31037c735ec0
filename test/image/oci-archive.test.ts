import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';

import { treeTar } from '../../scripts/image/file-tree.js';
import type { ImageLayer, ImageName, RuntimeConfig } from '../../scripts/image/oci-archive.js';
import { imageArchive, normalizedReference } from '../../scripts/image/oci-archive.js';
import { tarFiles } from './tar.js';

const CREATED = '2024-05-01T12:00:00Z';

const RUNTIME: RuntimeConfig = {
  user: '1000:1000',
  env: ['PATH=/usr/local/bin:/usr/bin:/bin', 'NODE_ENV=production'],
  entrypoint: ['node', '--max-semi-space-size=4', '/app/bin/sidecarset.js', 'serve'],
  workingDir: '/app',
  ports: [9443, 8080],
  labels: { 'org.opencontainers.image.version': '0.2.0' },
  created: CREATED,
};

const NAME: ImageName = { repository: 'sidecarset', tag: '0.2.0' };

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}
interface Index {
  manifests: Descriptor[];
}
interface Manifest {
  config: Descriptor;
  layers: Descriptor[];
}
interface DockerManifest {
  Config: string;
  RepoTags: string[];
  Layers: string[];
}
interface Config {
  architecture: string;
  os: string;
  config: {
    User: string;
    Env: string[];
    Entrypoint: string[];
    WorkingDir: string;
    ExposedPorts: Record<string, object>;
    Labels: Record<string, string>;
  };
  rootfs: { type: string; diff_ids: string[] };
  history: { created_by: string }[];
}

const sha256 = (data: Buffer): string =>
  `sha256:${createHash('sha256').update(data).digest('hex')}`;

async function layer(path: string, text: string): Promise<ImageLayer> {
  const data = Buffer.from(text);
  const tar = await treeTar(
    new Map([[path, { type: 'file', mode: 0o644, data }]]),
    new Date(CREATED),
  );
  return { tar, gzip: gzipSync(tar), createdBy: path };
}

async function layers(): Promise<ImageLayer[]> {
  return [await layer('etc/os-release', 'ID=debian\n'), await layer('usr/local/bin/node', 'node')];
}

/** The archive's files, and its blobs by digest. */
async function open(archive: Buffer) {
  const files = await tarFiles(archive);
  const json = (name: string): unknown => {
    const data = files.get(name);
    assert.ok(data, name);
    return JSON.parse(data.toString());
  };
  const blob = (digest: string): Buffer => {
    const data = files.get(`blobs/sha256/${digest.slice('sha256:'.length)}`);
    assert.ok(data, digest);
    return data;
  };
  return { files, json, blob };
}

describe('OCI archive', () => {
  it('holds an OCI layout whose blobs are named by the sha256 of their bytes', async () => {
    const built = await imageArchive(await layers(), RUNTIME, NAME);
    const { files, json, blob } = await open(built.archive);
    const blobs = [...files.keys()].filter((n) => n.startsWith('blobs/'));
    // The configuration, the manifest and two layers.
    assert.equal(blobs.length, 4);
    for (const name of blobs) {
      assert.match(name, /^blobs\/sha256\/[0-9a-f]{64}$/);
      const data = files.get(name) ?? Buffer.alloc(0);
      assert.equal(sha256(data), `sha256:${name.slice('blobs/sha256/'.length)}`);
    }
    assert.deepEqual([...files.keys()].filter((n) => !n.startsWith('blobs/')).sort(), [
      'index.json',
      'manifest.json',
      'oci-layout',
    ]);
    assert.deepEqual(json('oci-layout'), { imageLayoutVersion: '1.0.0' });

    const [entry, ...more] = (json('index.json') as Index).manifests;
    assert.ok(entry);
    assert.equal(more.length, 0);
    assert.equal(entry.digest, built.digest);
    assert.equal(entry.mediaType, 'application/vnd.oci.image.manifest.v1+json');
    assert.equal(entry.size, blob(entry.digest).length);
    const manifest = JSON.parse(blob(entry.digest).toString()) as Manifest;
    assert.equal(manifest.config.digest, built.imageId);
    assert.equal(manifest.config.size, blob(built.imageId).length);
    for (const layer of manifest.layers) assert.equal(layer.size, blob(layer.digest).length);
  });

  it('names the image in index.json as containerd and the kubelet spell it', async () => {
    const names: [string, string][] = [
      ['sidecarset', 'docker.io/library/sidecarset:0.2.0'],
      ['registry.example.com/team/sidecarset', 'registry.example.com/team/sidecarset:0.2.0'],
      ['team/x', 'docker.io/team/x:0.2.0'],
      ['localhost/x', 'localhost/x:0.2.0'],
      ['localhost:5000/x', 'localhost:5000/x:0.2.0'],
      ['docker.io/x', 'docker.io/library/x:0.2.0'],
      ['docker.io/team/x', 'docker.io/team/x:0.2.0'],
    ];
    for (const [repository, expected] of names) {
      assert.equal(normalizedReference({ repository, tag: '0.2.0' }), expected, repository);
    }
    const built = await imageArchive(await layers(), RUNTIME, NAME);
    const { json } = await open(built.archive);
    const [entry] = (json('index.json') as Index).manifests;
    assert.deepEqual(entry?.annotations, {
      'io.containerd.image.name': 'docker.io/library/sidecarset:0.2.0',
      'org.opencontainers.image.ref.name': '0.2.0',
    });
  });

  it('has a docker manifest.json naming the same configuration and layers', async () => {
    const built = await imageArchive(await layers(), RUNTIME, {
      repository: 'registry.example.com/team/sidecarset',
      tag: '1',
    });
    const { json, blob } = await open(built.archive);
    const [entry] = (json('index.json') as Index).manifests;
    assert.ok(entry);
    const manifest = JSON.parse(blob(entry.digest).toString()) as Manifest;
    const path = (digest: string) => `blobs/sha256/${digest.slice('sha256:'.length)}`;
    const expected: DockerManifest[] = [
      {
        Config: path(manifest.config.digest),
        RepoTags: ['registry.example.com/team/sidecarset:1'],
        Layers: manifest.layers.map((l) => path(l.digest)),
      },
    ];
    assert.deepEqual(json('manifest.json'), expected);
  });

  it('carries the runtime configuration, diff_ids those of the uncompressed layers', async () => {
    const input = await layers();
    const built = await imageArchive(input, RUNTIME, NAME);
    const { json, blob } = await open(built.archive);
    const [entry] = (json('index.json') as Index).manifests;
    assert.ok(entry);
    const manifest = JSON.parse(blob(entry.digest).toString()) as Manifest;
    const config = JSON.parse(blob(built.imageId).toString()) as Config;

    // The layers as given, gzipped; their diff_ids those of the tars inside.
    assert.deepEqual(
      manifest.layers.map((l) => blob(l.digest)),
      input.map((l) => l.gzip),
    );
    const uncompressed = manifest.layers.map((l) => gunzipSync(blob(l.digest)));
    assert.deepEqual(
      uncompressed,
      input.map((l) => l.tar),
    );
    assert.deepEqual(config.rootfs, { type: 'layers', diff_ids: uncompressed.map(sha256) });
    assert.deepEqual(
      manifest.layers.map((l) => l.mediaType),
      [
        'application/vnd.oci.image.layer.v1.tar+gzip',
        'application/vnd.oci.image.layer.v1.tar+gzip',
      ],
    );
    assert.deepEqual(
      config.history.map((h) => h.created_by),
      ['etc/os-release', 'usr/local/bin/node'],
    );
    assert.equal(config.os, 'linux');
    assert.equal(config.architecture, 'amd64');
    assert.deepEqual(config.config, {
      User: '1000:1000',
      Env: RUNTIME.env,
      Entrypoint: RUNTIME.entrypoint,
      WorkingDir: '/app',
      ExposedPorts: { '9443/tcp': {}, '8080/tcp': {} },
      Labels: { 'org.opencontainers.image.version': '0.2.0' },
    });
  });

  it('gives the same bytes for the same inputs', async () => {
    const a = await imageArchive(await layers(), RUNTIME, NAME);
    const b = await imageArchive(await layers(), RUNTIME, NAME);
    assert.ok(a.archive.equals(b.archive));
    assert.equal(a.digest, b.digest);
    assert.equal(a.imageId, b.imageId);
  });

  it('changes the index but not the image for another tag', async () => {
    const a = await imageArchive(await layers(), RUNTIME, NAME);
    const b = await imageArchive(await layers(), RUNTIME, { ...NAME, tag: '0.2.1' });
    assert.ok(!a.archive.equals(b.archive));
    assert.equal(a.imageId, b.imageId);
    assert.equal(a.digest, b.digest);
    const index = async (archive: Buffer) => (await tarFiles(archive)).get('index.json');
    assert.notDeepEqual(await index(a.archive), await index(b.archive));
  });

  it('changes the image for other labels', async () => {
    const a = await imageArchive(await layers(), RUNTIME, NAME);
    const labels = { 'org.opencontainers.image.version': '0.2.1' };
    const b = await imageArchive(await layers(), { ...RUNTIME, labels }, NAME);
    assert.notEqual(a.imageId, b.imageId);
    assert.notEqual(a.digest, b.digest);
  });
});
