/**
 * An image as one tar archive that both `ctr images import` (and `kind load image-archive`,
 * `skopeo copy oci-archive:`) and `docker load` read: an OCI image layout (oci-layout, index.json,
 * blobs/sha256/) with the manifest.json of a docker archive beside it, naming the same blobs, as
 * `docker save` writes since Docker 25. Pure: the same layers, configuration and name give the
 * same bytes.
 */
import { createHash } from 'node:crypto';

import type { FileTree } from './file-tree.js';
import { treeTar } from './file-tree.js';

export interface ImageLayer {
  /** The layer's uncompressed tar (file-tree.ts). */
  readonly tar: Buffer;
  /** The same, gzipped: the blob that is stored and pulled. */
  readonly gzip: Buffer;
  /** What put it there, for the image's history (`docker history`). */
  readonly createdBy: string;
}

export interface RuntimeConfig {
  readonly user: string;
  readonly env: readonly string[];
  readonly entrypoint: readonly string[];
  readonly workingDir: string;
  readonly ports: readonly number[];
  readonly labels: Readonly<Record<string, string>>;
  /** RFC 3339; also every timestamp in the archive. */
  readonly created: string;
}

export interface ImageName {
  readonly repository: string;
  readonly tag: string;
}

export interface ImageArchive {
  readonly archive: Buffer;
  /** The manifest's digest: what a registry calls the image (`repository@sha256:…`). */
  readonly digest: string;
  /** The configuration's digest: the image ID that `ctr images ls` and `docker images` show. */
  readonly imageId: string;
}

const sha256 = (data: Buffer): string =>
  `sha256:${createHash('sha256').update(data).digest('hex')}`;

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

/** `repository:tag` as people write it: `sidecarset:0.2.0`, `registry.example.com/x/y:1`. */
export function reference(name: ImageName): string {
  return `${name.repository}:${name.tag}`;
}

/**
 * The reference as containerd stores it and the kubelet asks for it: a repository without a
 * registry is Docker Hub's, one of Docker Hub's without a path is in `library/` (`sidecarset:1`
 * and `docker.io/sidecarset:1` are `docker.io/library/sidecarset:1`).
 */
export function normalizedReference(name: ImageName): string {
  const [first = '', ...rest] = name.repository.split('/');
  const hasRegistry = rest.length > 0 && (/[.:]/.test(first) || first === 'localhost');
  const dockerHub = !hasRegistry || first === 'docker.io' || first === 'index.docker.io';
  if (!dockerHub) return reference(name);
  const path = hasRegistry ? rest.join('/') : name.repository;
  return `docker.io/${path.includes('/') ? path : `library/${path}`}:${name.tag}`;
}

function descriptor(
  mediaType: string,
  blob: Buffer,
  annotations?: Record<string, string>,
): Record<string, unknown> {
  return {
    mediaType,
    digest: sha256(blob),
    size: blob.length,
    ...(annotations && { annotations }),
  };
}

const blobPath = (blob: Buffer): string => `blobs/sha256/${sha256(blob).slice('sha256:'.length)}`;

export async function imageArchive(
  layers: readonly ImageLayer[],
  runtime: RuntimeConfig,
  name: ImageName,
): Promise<ImageArchive> {
  const compressed = layers.map((l) => l.gzip);
  const config = json({
    architecture: 'amd64',
    os: 'linux',
    created: runtime.created,
    config: {
      User: runtime.user,
      Env: runtime.env,
      Entrypoint: runtime.entrypoint,
      WorkingDir: runtime.workingDir,
      ExposedPorts: Object.fromEntries(runtime.ports.map((p) => [`${p}/tcp`, {}])),
      Labels: runtime.labels,
    },
    rootfs: { type: 'layers', diff_ids: layers.map((l) => sha256(l.tar)) },
    history: layers.map((l) => ({ created: runtime.created, created_by: l.createdBy })),
  });
  const manifest = json({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: descriptor('application/vnd.oci.image.config.v1+json', config),
    layers: compressed.map((c) => descriptor('application/vnd.oci.image.layer.v1.tar+gzip', c)),
  });
  const index = json({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    manifests: [
      descriptor('application/vnd.oci.image.manifest.v1+json', manifest, {
        'io.containerd.image.name': normalizedReference(name),
        'org.opencontainers.image.ref.name': name.tag,
      }),
    ],
  });
  // docker load reads this one, and the same blobs.
  const dockerManifest = json([
    {
      Config: blobPath(config),
      RepoTags: [reference(name)],
      Layers: compressed.map(blobPath),
    },
  ]);
  const files: FileTree = new Map();
  const file = (data: Buffer) => ({ type: 'file' as const, mode: 0o644, data });
  files.set('oci-layout', file(json({ imageLayoutVersion: '1.0.0' })));
  files.set('index.json', file(index));
  files.set('manifest.json', file(dockerManifest));
  for (const blob of [config, manifest, ...compressed]) files.set(blobPath(blob), file(blob));
  return {
    archive: await treeTar(files, new Date(runtime.created)),
    digest: sha256(manifest),
    imageId: sha256(config),
  };
}
