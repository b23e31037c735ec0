/**
 * Builds the image of definition.ts into an archive (oci-archive.ts) and its SBOM (sbom.ts), in
 * three layers, least often changed first: Debian's files, the Node binary, the application.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { gzipSync } from 'node:zlib';

import type { DebianPackage } from './debian-package.js';
import { unpackDebianPackage } from './debian-package.js';
import { APP_DIR, DEBIAN_PACKAGES, ENTRYPOINT, ENV, NODE, PORTS, USER } from './definition.js';
import type { FileTree } from './file-tree.js';
import { treeTar } from './file-tree.js';
import type { ImageLayer, ImageName, RuntimeConfig } from './oci-archive.js';
import { imageArchive, reference } from './oci-archive.js';
import { imageSbom } from './sbom.js';
import {
  addFolder,
  cacheDir,
  debianPackageFiles,
  nodeBinary,
  productionNodeModules,
  run,
} from './sources.js';

export interface Provenance {
  readonly version: string;
  /** The git commit, `-dirty` when the work tree has changes; `unknown` outside git. */
  readonly revision: string;
  /** RFC 3339: the commit's time, or SOURCE_DATE_EPOCH, so that a rebuild changes nothing. */
  readonly created: string;
  readonly description: string;
  readonly license: string;
}

export interface BuiltImage {
  readonly archive: string;
  readonly sbom: string;
  readonly reference: string;
  readonly digest: string;
  readonly imageId: string;
}

/** The accounts the image knows: root, and the user it runs as. */
function accounts(): { passwd: string; group: string } {
  const { name, uid, gid } = USER;
  return {
    passwd: `root:x:0:0:root:/root:/sbin/nologin\n${name}:x:${uid}:${gid}:${name}:/home/${name}:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n`,
    group: `root:x:0:\n${name}:x:${gid}:\nnogroup:x:65534:\n`,
  };
}

async function osLayer(
  debs: readonly string[],
): Promise<{ tree: FileTree; packages: DebianPackage[] }> {
  const tree: FileTree = new Map();
  const packages: DebianPackage[] = [];
  for (const deb of debs) packages.push(await unpackDebianPackage(deb, tree));
  const file = (text: string) => ({ type: 'file' as const, mode: 0o644, data: Buffer.from(text) });
  const { passwd, group } = accounts();
  tree.set('etc/passwd', file(passwd));
  tree.set('etc/group', file(group));
  // What scanners read to list a distroless image's packages.
  for (const p of packages) tree.set(`var/lib/dpkg/status.d/${p.name}`, file(p.control));
  tree.set('tmp', { type: 'directory', mode: 0o1777 });
  tree.set(`home/${USER.name}`, { type: 'directory', mode: 0o700, owner: USER.uid });
  return { tree, packages };
}

/** ID and VERSION_ID from the os-release the Debian packages brought. */
function osRelease(tree: FileTree): { id: string; versionId: string } {
  const entry = tree.get('usr/lib/os-release');
  const text = entry?.type === 'file' ? entry.data.toString() : '';
  const value = (key: string): string =>
    new RegExp(`^${key}="?([^"\\n]*)"?$`, 'm').exec(text)?.[1] ?? 'unknown';
  return { id: value('ID'), versionId: value('VERSION_ID') };
}

/** The Node binary and nothing else: no npm, npx or corepack in the image. */
export async function nodeLayer(binary: string): Promise<FileTree> {
  const tree: FileTree = new Map();
  await addFolder(tree, binary, 'usr/local/bin/node');
  return tree;
}

/** package.json, bin, dist and the production node_modules: no sources, tests or certificates. */
export async function appLayer(root: string, modules: string): Promise<FileTree> {
  const tree: FileTree = new Map();
  const app = APP_DIR.slice(1);
  await addFolder(tree, join(root, 'package.json'), `${app}/package.json`);
  await addFolder(tree, join(root, 'bin'), `${app}/bin`);
  await addFolder(tree, join(root, 'dist'), `${app}/dist`);
  await addFolder(tree, join(modules, 'node_modules'), `${app}/node_modules`);
  return tree;
}

const LAYER_CACHE = (): string => join(cacheDir(), 'image', 'layers');

/**
 * The layer gzipped, from the cache when this tar was compressed before (the Node binary's layer
 * takes most of a build otherwise). Node's zlib writes no time or name into the header: the same
 * tar always compresses to the same bytes.
 */
async function gzipLayer(tar: Buffer): Promise<{ gzip: Buffer; cached: string }> {
  const cached = join(LAYER_CACHE(), `${createHash('sha256').update(tar).digest('hex')}.tar.gz`);
  const found = await readFile(cached).catch(() => undefined);
  if (found !== undefined) return { gzip: found, cached };
  const gzip = gzipSync(tar, { level: 9 });
  await mkdir(LAYER_CACHE(), { recursive: true });
  await writeAtomically(cached, gzip);
  return { gzip, cached };
}

/**
 * Every file of a layer is dated 1970-01-01, as distroless and Bazel date them: the Debian and Node
 * layers stay the same bytes from one commit to the next, and so stay cached; the image's
 * configuration carries the build's time.
 */
const FILE_TIME = new Date(0);

async function layers(trees: readonly (readonly [FileTree, string])[]): Promise<ImageLayer[]> {
  const built: ImageLayer[] = [];
  const keep = new Set<string>();
  for (const [tree, createdBy] of trees) {
    const tar = await treeTar(tree, FILE_TIME);
    const { gzip, cached } = await gzipLayer(tar);
    keep.add(basename(cached));
    built.push({ tar, gzip, createdBy });
  }
  // Only what this build used stays cached: an application layer a commit, otherwise.
  for (const file of await readdir(LAYER_CACHE())) {
    if (!keep.has(file)) await rm(join(LAYER_CACHE(), file), { force: true });
  }
  return built;
}

async function writeAtomically(path: string, data: Buffer | string): Promise<void> {
  await writeFile(`${path}.tmp`, data);
  await rename(`${path}.tmp`, path);
}

/** How the image runs (definition.ts) and the OCI labels it carries (provenanceOf). */
export function runtimeConfig(provenance: Provenance): RuntimeConfig {
  return {
    user: `${USER.uid}:${USER.gid}`,
    env: ENV,
    entrypoint: ENTRYPOINT,
    workingDir: APP_DIR,
    ports: PORTS,
    created: provenance.created,
    labels: {
      'org.opencontainers.image.title': 'sidecarset',
      'org.opencontainers.image.description': provenance.description,
      'org.opencontainers.image.version': provenance.version,
      'org.opencontainers.image.revision': provenance.revision,
      'org.opencontainers.image.created': provenance.created,
      'org.opencontainers.image.licenses': provenance.license,
      'org.opencontainers.image.documentation': 'docs/image.md',
    },
  };
}

export async function buildImage(options: {
  root: string;
  out: string;
  name: ImageName;
  provenance: Provenance;
}): Promise<BuiltImage> {
  const { root, out, name, provenance } = options;
  await run('npm', ['run', '--silent', 'build'], { cwd: root });
  const os = await osLayer(await debianPackageFiles(DEBIAN_PACKAGES));
  const node = await nodeLayer(await nodeBinary(NODE.package, NODE.version));
  const modules = await productionNodeModules(root);
  const app = await appLayer(root, modules).finally(() =>
    rm(modules, { recursive: true, force: true }),
  );

  const built = await imageArchive(
    await layers([
      [os.tree, `debian: ${DEBIAN_PACKAGES.join(' ')}`],
      [node, `npm: ${NODE.package}@${NODE.version}`],
      [app, `sidecarset ${provenance.version}: bin, dist, production node_modules`],
    ]),
    runtimeConfig(provenance),
    name,
  );
  const sbom = imageSbom({
    name: name.repository,
    version: name.tag,
    digest: built.digest,
    created: provenance.created,
    os: osRelease(os.tree),
    debianPackages: os.packages,
    node: NODE,
    appFiles: app,
  });
  await mkdir(out, { recursive: true });
  const base = join(out, `${name.repository.split('/').pop() ?? 'sidecarset'}-${name.tag}.image`);
  await writeAtomically(`${base}.tar`, built.archive);
  await writeAtomically(`${base}.cdx.json`, `${JSON.stringify(sbom, null, 2)}\n`);
  return {
    archive: `${base}.tar`,
    sbom: `${base}.cdx.json`,
    reference: reference(name),
    digest: built.digest,
    imageId: built.imageId,
  };
}

/** The version, revision and time the image's labels carry, from package.json and git. */
export async function provenanceOf(root: string, env: NodeJS.ProcessEnv): Promise<Provenance> {
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
    version: string;
    description: string;
    license: string;
  };
  const git = (args: string[]) => run('git', args, { cwd: root }).then((s) => s.trim());
  const commit = await git(['rev-parse', 'HEAD']).catch(() => undefined);
  const dirty =
    commit !== undefined && (await git(['status', '--porcelain', '--untracked-files=no'])) !== '';
  const epoch = env['SOURCE_DATE_EPOCH'];
  const seconds =
    epoch !== undefined && epoch !== ''
      ? Number(epoch)
      : Number((await git(['log', '-1', '--format=%ct']).catch(() => '0')) || '0');
  return {
    version: pkg.version,
    revision: commit === undefined ? 'unknown' : `${commit}${dirty ? '-dirty' : ''}`,
    created: new Date(seconds * 1000).toISOString().replace('.000Z', 'Z'),
    description: pkg.description,
    license: pkg.license,
  };
}
