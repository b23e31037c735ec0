/** scripts/release.ts's decisions; the release itself runs in CI (.ci/run) with helm. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  artifactNames,
  helmCommand,
  releasedSbom,
  versionMismatch,
} from '../../scripts/release.js';

describe('npm run release', () => {
  it('releases only when package.json and Chart.yaml agree', () => {
    assert.equal(
      versionMismatch({ package: '0.2.0', chart: '0.2.0', appVersion: '0.2.0' }),
      undefined,
    );
    assert.match(
      versionMismatch({ package: '0.2.0', chart: '0.1.0', appVersion: '0.2.0' }) ?? '',
      /Chart\.yaml version 0\.1\.0/,
    );
    assert.ok(versionMismatch({ package: '0.2.0', chart: '0.2.0', appVersion: '0.1.0' }));
  });

  it('runs $HELM, else the helm fixture, else helm on PATH', () => {
    assert.equal(helmCommand({ HELM: '/opt/helm', HELM_FIXTURE_BIN: '/x' }), '/opt/helm');
    assert.equal(
      helmCommand({ HELM_FIXTURE_BIN: '/cache/helm-fixture/abc' }),
      '/cache/helm-fixture/abc/helm',
    );
    assert.equal(helmCommand({}), 'helm');
  });

  it('names the artifacts after the version', () => {
    assert.deepEqual(artifactNames('1.2.3'), {
      npm: 'sidecarset-1.2.3.tgz',
      chart: 'sidecarset-1.2.3.chart.tgz',
      sbom: 'sidecarset-1.2.3.cdx.json',
      image: 'sidecarset-1.2.3.image.tar',
      imageSbom: 'sidecarset-1.2.3.image.cdx.json',
      imageDigest: 'sidecarset-1.2.3.image.digest',
    });
  });

  it('keeps a CycloneDX SBOM with components, named after the package', () => {
    const sbom = releasedSbom(
      JSON.stringify({
        bomFormat: 'CycloneDX',
        specVersion: '1.5',
        metadata: { component: { name: 'wt-ops', version: '0.1.0', type: 'library' } },
        components: [{ name: 'yaml' }],
      }),
      'sidecarset',
      '0.1.0',
    );
    assert.deepEqual(sbom.metadata?.component, {
      name: 'sidecarset',
      version: '0.1.0',
      type: 'library',
    });
    assert.throws(() => releasedSbom('{"bomFormat":"SPDX"}', 'sidecarset', '0.1.0'), /CycloneDX/);
    assert.throws(
      () => releasedSbom('{"bomFormat":"CycloneDX","specVersion":"1.5","components":[]}', 's', '1'),
      /no components/,
    );
  });
});
