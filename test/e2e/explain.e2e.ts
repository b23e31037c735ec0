/**
 * The generated CRD on a real API server: `kubectl explain` prints the schema's descriptions, and
 * the API server applies the CRD's default for resourcesPolicy.targetContainersNameRegex. Only
 * the CRD is applied: no webhook takes part.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { stringify } from 'yaml';

import { CRD_PATH } from '../../scripts/gen-crd.js';
import { SIDECARSET_SCHEMA } from '../../src/core/validation/sidecarset-schema.js';
import { eventually } from '../support/eventually.js';
import { RESOURCES_POLICY_WITHOUT_REGEX } from '../core/validation/fixtures.js';
import { applyCrd } from './apply-crd.js';
import { useControlPlane } from './support.js';

const partition = SIDECARSET_SCHEMA.properties.spec.properties.updateStrategy.properties.partition;

/** The words of a description, which kubectl explain wraps at its own width. */
const words = (text: string): string => text.split(/\s+/).join(' ');

describe('the SidecarSet CRD on a real API server', () => {
  const { plane } = useControlPlane();

  before(() => applyCrd(plane(), CRD_PATH));

  it('kubectl explain sidecarset.spec.updateStrategy.partition prints its description', async () => {
    let output = '';
    // The API server publishes a new CRD's OpenAPI a moment after it is established.
    await eventually(async () => {
      const explained = await plane().kubectl([
        'explain',
        'sidecarset.spec.updateStrategy.partition',
      ]);
      output = explained.stdout;
      return explained.code === 0 && output.includes('DESCRIPTION');
    }, 'kubectl explain to know the SidecarSet CRD');
    assert.match(output, /^FIELD: +partition </m);
    const printed = words(output.slice(output.indexOf('DESCRIPTION:') + 'DESCRIPTION:'.length));
    assert.equal(printed.trim(), words(partition.description));
  });

  it('kubectl explain sidecarset.spec lists its fields with their descriptions', async () => {
    const explained = await plane().kubectl(['explain', 'sidecarset.spec']);
    assert.equal(explained.code, 0, explained.stderr);
    for (const field of ['containers', 'updateStrategy', 'injectionStrategy', 'patchPodMetadata']) {
      assert.match(explained.stdout, new RegExp(`^  ${field}\\t?\\s*<`, 'm'), field);
    }
    assert.match(words(explained.stdout), /Which pods get which sidecars/);
  });

  it('defaults resourcesPolicy.targetContainersNameRegex to .*, as OpenKruise does', async () => {
    // v1beta1, the stored version: no webhook runs here to convert v1alpha1.
    const created = await plane().kubectl(['create', '-o', 'json', '-f', '-'], {
      input: stringify({ ...RESOURCES_POLICY_WITHOUT_REGEX, apiVersion: 'apps.kruise.io/v1beta1' }),
    });
    assert.equal(created.code, 0, created.stderr);
    const stored = JSON.parse(created.stdout) as {
      spec: { containers: { resourcesPolicy?: unknown }[] };
    };
    assert.deepEqual(stored.spec.containers[0]?.resourcesPolicy, {
      targetContainersMode: 'sum',
      targetContainersNameRegex: '.*',
      resourcesExpr: { limits: { cpu: 'cpu * 10%' } },
    });
  });
});
