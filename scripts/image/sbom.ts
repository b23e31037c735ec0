/**
 * The image's software bill of materials, CycloneDX 1.5 JSON: the Debian packages, the Node
 * binary and every npm package in the image, each with its package URL, so that scanners (Trivy,
 * Grype) and policy tools read what the image holds without unpacking it. The same image gives the
 * same document: its serial number and timestamp come from the image.
 */
import { createHash } from 'node:crypto';

import type { DebianPackage } from './debian-package.js';
import type { FileTree } from './file-tree.js';

interface Component {
  readonly type: 'library' | 'application' | 'operating-system' | 'container';
  readonly name: string;
  readonly version: string;
  readonly purl?: string;
  readonly licenses?: readonly { expression: string }[];
}

export interface SbomInput {
  readonly name: string;
  readonly version: string;
  /** The image's manifest digest. */
  readonly digest: string;
  readonly created: string;
  /** /etc/os-release's ID and VERSION_ID (debian, 12). */
  readonly os: { readonly id: string; readonly versionId: string };
  readonly debianPackages: readonly DebianPackage[];
  readonly node: { readonly package: string; readonly version: string };
  /** The layer that holds node_modules: every package.json at a package's root is listed. */
  readonly appFiles: FileTree;
}

/** `@scope/name` → `%40scope/name`, as the purl specification spells npm names. */
function npmPurl(name: string, version: string): string {
  return `pkg:npm/${name.replace(/^@/, '%40')}@${version}`;
}

/** A package.json directly in a node_modules folder: `…/node_modules/(@scope/)name/package.json`. */
const PACKAGE_ROOT = /(^|\/)node_modules\/(@[^/]+\/)?[^/@][^/]*\/package\.json$/;

function npmComponents(files: FileTree): Component[] {
  const components = new Map<string, Component>();
  for (const [path, entry] of files) {
    if (entry.type !== 'file' || !PACKAGE_ROOT.test(path)) continue;
    const pkg = JSON.parse(entry.data.toString()) as {
      name?: unknown;
      version?: unknown;
      license?: unknown;
    };
    if (typeof pkg.name !== 'string' || typeof pkg.version !== 'string') continue;
    const purl = npmPurl(pkg.name, pkg.version);
    components.set(purl, {
      type: 'library',
      name: pkg.name,
      version: pkg.version,
      purl,
      ...(typeof pkg.license === 'string' && { licenses: [{ expression: pkg.license }] }),
    });
  }
  return [...components.values()];
}

function debianComponent(pkg: DebianPackage, os: SbomInput['os']): Component {
  const version = encodeURIComponent(pkg.version);
  return {
    type: 'library',
    name: pkg.name,
    version: pkg.version,
    purl: `pkg:deb/${os.id}/${pkg.name}@${version}?arch=${pkg.architecture}&distro=${os.id}-${os.versionId}`,
  };
}

/** A UUID made from the digest, so that the same image has the same serial number. */
function serialNumber(digest: string): string {
  const bytes = createHash('sha256').update(digest).digest().subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `urn:uuid:${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function imageSbom(input: SbomInput): Record<string, unknown> {
  const byPurl = (a: Component, b: Component): number =>
    (a.purl ?? a.name) < (b.purl ?? b.name) ? -1 : 1;
  const components: Component[] = [
    { type: 'operating-system', name: input.os.id, version: input.os.versionId },
    ...input.debianPackages.map((p) => debianComponent(p, input.os)).sort(byPurl),
    {
      type: 'application',
      name: 'node',
      version: input.node.version,
      purl: npmPurl(input.node.package, input.node.version),
    },
    ...npmComponents(input.appFiles).sort(byPurl),
  ];
  return {
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    serialNumber: serialNumber(input.digest),
    version: 1,
    metadata: {
      timestamp: input.created,
      component: {
        type: 'container',
        name: input.name,
        version: input.version,
        purl: `pkg:oci/${input.name.split('/').pop() ?? input.name}@${encodeURIComponent(input.digest)}`,
      },
    },
    components,
  };
}
