/**
 * `npm run release [-- --out DIR]`: the release artifacts, in DIR (default release/):
 *   sidecarset-<version>.tgz            the npm package (npm pack; its `prepare` builds dist/)
 *   sidecarset-<version>.chart.tgz      the Helm chart (helm package charts/sidecarset)
 *   sidecarset-<version>.cdx.json       a CycloneDX SBOM of the production dependencies (npm sbom)
 *   sidecarset-<version>.image.tar      the image (npm run image, docs/image.md): OCI and docker archive
 *   sidecarset-<version>.image.cdx.json its SBOM: Debian packages, Node, npm packages
 *   sidecarset-<version>.image.digest   its manifest digest, sha256:…, what a registry names it by
 *   SHA256SUMS                          sha256sum -c reads it
 * helm is $HELM, else $HELM_FIXTURE_BIN/helm (test/helm-fixture's build), else `helm` on PATH.
 * Fails when package.json, Chart.yaml's version and appVersion disagree, or an artifact is not
 * what it should be. CI runs it after the tests (.ci/run); CHANGELOG.md lists what a release holds.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

import { parse } from 'yaml';

import { buildImage, provenanceOf } from './image/build.js';
import { DEFAULT_REPOSITORY } from './image/definition.js';

const ROOT = new URL('../', import.meta.url).pathname;

export interface Versions {
  package: string;
  chart: string;
  appVersion: string;
}

/** Why the versions cannot be released together, or undefined when they agree. */
export function versionMismatch(v: Versions): string | undefined {
  if (v.chart === v.package && v.appVersion === v.package) return undefined;
  return (
    `versions disagree: package.json ${v.package}, Chart.yaml version ${v.chart} and ` +
    `appVersion ${v.appVersion}; bump them together (CHANGELOG.md, "Releasing")`
  );
}

/** The helm to run: $HELM, else $HELM_FIXTURE_BIN/helm, else helm on PATH. */
export function helmCommand(env: NodeJS.ProcessEnv): string {
  if ((env['HELM'] ?? '') !== '') return env['HELM'] ?? 'helm';
  const fixture = env['HELM_FIXTURE_BIN'] ?? '';
  return fixture === '' ? 'helm' : join(fixture, 'helm');
}

export type ArtifactNames = Record<
  'npm' | 'chart' | 'sbom' | 'image' | 'imageSbom' | 'imageDigest',
  string
>;

export function artifactNames(version: string): ArtifactNames {
  return {
    npm: `sidecarset-${version}.tgz`,
    chart: `sidecarset-${version}.chart.tgz`,
    sbom: `sidecarset-${version}.cdx.json`,
    image: `sidecarset-${version}.image.tar`,
    imageSbom: `sidecarset-${version}.image.cdx.json`,
    imageDigest: `sidecarset-${version}.image.digest`,
  };
}

interface Sbom {
  bomFormat?: unknown;
  specVersion?: unknown;
  metadata?: { component?: { name?: unknown; version?: unknown } };
  components?: unknown[];
}

/**
 * The SBOM as released: CycloneDX with components, its root component named after the package
 * (npm sbom names it after the folder it runs in). Throws when it is not a CycloneDX SBOM.
 */
export function releasedSbom(text: string, name: string, version: string): Sbom {
  const sbom = JSON.parse(text) as Sbom;
  if (sbom.bomFormat !== 'CycloneDX' || typeof sbom.specVersion !== 'string')
    throw new Error('npm sbom did not write a CycloneDX document');
  if (!Array.isArray(sbom.components) || sbom.components.length === 0)
    throw new Error('the SBOM lists no components');
  const component = { ...sbom.metadata?.component, name, version };
  return { ...sbom, metadata: { ...sbom.metadata, component } };
}

function run(command: string, args: readonly string[], cwd = ROOT): string {
  const r = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.error) throw new Error(`${command}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${String(r.status)})`);
  return r.stdout;
}

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

export async function release(out: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  // YAML reads `version: 1.0` as a number.
  const chart = parse(await readFile(join(ROOT, 'charts/sidecarset/Chart.yaml'), 'utf8')) as {
    version: unknown;
    appVersion: unknown;
  };
  const mismatch = versionMismatch({
    package: pkg.version,
    chart: String(chart.version),
    appVersion: String(chart.appVersion),
  });
  if (mismatch !== undefined) throw new Error(mismatch);
  const names = artifactNames(pkg.version);
  await mkdir(out, { recursive: true });

  run('npm', ['pack', '--pack-destination', out]);

  // helm package names the file <name>-<version>.tgz, as npm pack does: package in a folder of its
  // own, then rename.
  const chartDir = await mkdtemp(join(out, '.chart-'));
  try {
    run(helmCommand(env), ['package', join(ROOT, 'charts/sidecarset'), '--destination', chartDir]);
    await rename(join(chartDir, `sidecarset-${pkg.version}.tgz`), join(out, names.chart));
  } finally {
    await rm(chartDir, { recursive: true, force: true });
  }

  const sbom = releasedSbom(
    run('npm', ['sbom', '--sbom-format', 'cyclonedx', '--omit', 'dev']),
    pkg.name,
    pkg.version,
  );
  await writeFile(join(out, names.sbom), `${JSON.stringify(sbom, null, 2)}\n`);

  // Named `sidecarset:<version>`; buildImage writes the archive and its SBOM under these names.
  const image = await buildImage({
    root: ROOT,
    out,
    name: { repository: DEFAULT_REPOSITORY, tag: pkg.version },
    provenance: await provenanceOf(ROOT, env),
  });
  if (basename(image.archive) !== names.image || basename(image.sbom) !== names.imageSbom) {
    throw new Error(`the image was written as ${image.archive}, not ${names.image}`);
  }
  await writeFile(join(out, names.imageDigest), `${image.digest}\n`);

  const files = Object.values(names);
  const present = new Set(await readdir(out));
  for (const file of files) if (!present.has(file)) throw new Error(`${file} was not made`);
  const sums = await Promise.all(
    files.map(async (file) => `${sha256(await readFile(join(out, file)))}  ${file}`),
  );
  await writeFile(join(out, 'SHA256SUMS'), `${sums.join('\n')}\n`);
  return [...files, 'SHA256SUMS'];
}

if (
  process.argv[1] !== undefined &&
  resolve(process.argv[1]) === new URL(import.meta.url).pathname
) {
  const { values } = parseArgs({ options: { out: { type: 'string', default: 'release' } } });
  const out = resolve(values.out);
  try {
    for (const file of await release(out, process.env))
      process.stdout.write(`${join(out, file)}\n`);
  } catch (err) {
    process.stderr.write(`release: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
