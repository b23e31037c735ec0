/**
 * The validating webhook and --patch-pod-metadata-allowlist (docs/security.md): patchPodMetadata
 * writes only the keys the allow-list lets a SidecarSet write, nothing without one, and never the
 * bookkeeping keys.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ApiException } from '@kubernetes/client-node';

import { runCli } from '../support/cli.js';
import type { TestCluster } from './cluster.js';
import { createSidecarSet, sidecarSet, withCluster } from './cluster.js';

/** Creates a SidecarSet writing `key`; resolves with the API server's refusal, or '' if created. */
async function create(cluster: TestCluster, name: string, key: string): Promise<string> {
  try {
    await createSidecarSet(
      cluster,
      sidecarSet(name, {
        selector: { matchLabels: { app: 'nginx' } },
        containers: [{ name: 'agent', image: 'agent:1' }],
        patchPodMetadata: [{ annotations: { [key]: 'on' }, patchPolicy: 'Overwrite' }],
      }),
    );
    return '';
  } catch (err) {
    assert.ok(err instanceof ApiException, String(err));
    assert.equal(err.code, 422);
    return String(err.body);
  }
}

describe('patchPodMetadata allow-list in the validating webhook', () => {
  it('without one, no key may be written', async () => {
    await withCluster(
      async (cluster) => {
        assert.match(
          await create(cluster, 'a', 'example.com/x'),
          /spec.patchPodMetadata: Forbidden: SidecarSet patch metadata whitelist not found/,
        );
      },
      { patchPodMetadataAllowlist: null },
    );
  });

  it('with one, the keys it allows and no other; never the bookkeeping keys', async () => {
    const allowList = JSON.stringify({
      rules: [{ allowedAnnotationKeyExprs: ['^example\\.com/', '^kruise\\.io/'] }],
    });
    await withCluster(
      async (cluster) => {
        assert.equal(await create(cluster, 'a', 'example.com/x'), '');
        assert.match(
          await create(cluster, 'b', 'other.io/x'),
          /annotations\[other.io\/x\]: Forbidden: sidecarSet patch metadata annotation\(other.io\/x\) is not allowed/,
        );
        assert.match(
          await create(cluster, 'c', 'kruise.io/sidecarset-hash'),
          /the key holds SidecarSet bookkeeping/,
        );
      },
      { patchPodMetadataAllowlist: allowList },
    );
  });

  it('serve refuses an allow-list that is not one, before it starts', async () => {
    const bad = await runCli([
      'serve',
      '--patch-pod-metadata-allowlist',
      '{"rules":[{"allowedAnnotationKeyExprs":["(?=x)"]}]}',
    ]);
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      /--patch-pod-metadata-allowlist.*rules\[0\]\.allowedAnnotationKeyExprs\[0\]/,
    );
  });
});
