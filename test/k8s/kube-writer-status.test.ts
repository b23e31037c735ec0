/**
 * The SidecarSet status write carries the resourceVersion the status was computed from: the API
 * server refuses it once the SidecarSet has changed (issue 37, point 8), so a leader working from
 * a stale cache cannot overwrite a newer status.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { CustomObjectsApi } from '@kubernetes/client-node';

import { ConflictError } from '../../src/controller/ports.js';
import { createKubeWriter } from '../../src/k8s/kube-writer.js';
import { withServer } from '../fake-apiserver/harness.js';
import { makeSidecarSet } from '../support/factories.js';

const SS = { group: 'apps.kruise.io', version: 'v1beta1', plural: 'sidecarsets' } as const;

interface Stored {
  metadata: { resourceVersion: string };
  status?: { matchedPods?: number };
}

describe('writeSidecarSetStatus', () => {
  it('writes with the resourceVersion it was given, and refuses a stale one', async () => {
    await withServer(async (server) => {
      const custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
      const body = { ...makeSidecarSet('agent'), apiVersion: 'apps.kruise.io/v1beta1' };
      const created = (await custom.createClusterCustomObject({ ...SS, body })) as Stored;
      const writer = createKubeWriter(server.kubeConfig());
      const counts = { matchedPods: 2, updatedPods: 0, readyPods: 2 };
      await writer.writeSidecarSetStatus('agent', counts, created.metadata.resourceVersion);
      const read = async (): Promise<Stored> =>
        (await custom.getClusterCustomObject({ ...SS, name: 'agent' })) as Stored;
      assert.equal((await read()).status?.matchedPods, 2);
      // Computed from the version before that write: refused, nothing written.
      const stale = { matchedPods: 1, updatedPods: 0, readyPods: 1 };
      await assert.rejects(
        writer.writeSidecarSetStatus('agent', stale, created.metadata.resourceVersion),
        ConflictError,
      );
      assert.equal((await read()).status?.matchedPods, 2);
      // Without a version (missed-pods' own field), it merges as before.
      await writer.writeSidecarSetStatus('agent', { missedPods: 3 });
      assert.equal((await read()).status?.matchedPods, 2);
    });
  });
});
