/**
 * ControllerRevisions end to end (as OpenKruise's sidecarset_processor.go keeps them): the controller registers one per new spec
 * in sidecarset-system and records it in status.latestRevision; the webhook pins new pods to the
 * revision injectionStrategy.revision names; the history is truncated to revisionHistoryLimit.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';

import type { JsonObject, KubeObject } from '../fake-apiserver/index.js';
import { CONTROLLER_REVISIONS } from '../fake-apiserver/index.js';
import type { TestCluster } from './cluster.js';
import {
  container,
  createPods,
  createSidecarSet,
  nginxPod,
  pods,
  sidecarSet,
  status,
  updateSidecarSet,
  waitFor,
  withCluster,
} from './cluster.js';

const NAMESPACE = 'sidecarset-system';
const HASH = 'kruise.io/sidecarset-hash';
const fast = { flags: { qps: 1000, burst: 1000 } };

interface Revision {
  name: string;
  revision: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  data: unknown;
}

function revisions(cluster: TestCluster): Revision[] {
  return cluster.api.store
    .list(CONTROLLER_REVISIONS, { namespace: NAMESPACE })
    .items.map((r: KubeObject) => ({
      name: r.metadata.name ?? '',
      revision: r['revision'] as number,
      labels: r.metadata.labels ?? {},
      annotations: r.metadata.annotations ?? {},
      data: r['data'],
    }))
    .sort((a, b) => a.revision - b.revision);
}

function sidecarSetAnnotations(cluster: TestCluster, name: string): Record<string, string> {
  const ss = cluster.api.store
    .list({ group: 'apps.kruise.io', version: 'v1beta1', resource: 'sidecarsets' }, {})
    .items.find((s) => s.metadata.name === name);
  return ss?.metadata.annotations ?? {};
}

async function setImage(cluster: TestCluster, image: string): Promise<void> {
  await updateSidecarSet(cluster, 'agent', (spec) => {
    ((spec['containers'] as { image: string }[])[0] as { image: string }).image = image;
  });
}

/** Waits until the newest revision carries this image and the status names it. */
async function registered(cluster: TestCluster, image: string): Promise<Revision> {
  let found: Revision | undefined;
  await waitFor(
    cluster,
    () => {
      const newest = revisions(cluster).at(-1);
      if (newest === undefined || !JSON.stringify(newest.data).includes(`"image":"${image}"`)) {
        return false;
      }
      found = newest;
      return status(cluster, 'agent')?.['latestRevision'] === newest.name;
    },
    `a revision with ${image} recorded in status.latestRevision`,
  );
  assert.ok(found);
  return found;
}

function agentSpec(extra: JsonObject = {}): JsonObject {
  return {
    selector: { matchLabels: { app: 'nginx' } },
    containers: [{ name: 'agent', image: 'agent:1' }],
    ...extra,
  };
}

describe('ControllerRevisions', () => {
  it('registers a revision per spec, and pins new pods to an old one while paused', async () => {
    await withCluster(async (cluster) => {
      await createSidecarSet(cluster, sidecarSet('agent', agentSpec()));
      const first = await registered(cluster, 'agent:1');
      assert.equal(first.revision, 1);
      assert.match(first.name, /^agent-[bcdfghjklmnpqrstvwxz2456789]+$/);
      assert.equal(first.labels['kruise.io/sidecarset-name'], 'agent');
      assert.equal(
        first.labels['controller.kubernetes.io/hash'],
        first.name.slice('agent-'.length),
      );
      const firstHash = sidecarSetAnnotations(cluster, 'agent')[HASH];
      assert.ok(firstHash);
      assert.equal(first.annotations[HASH], firstHash);
      assert.deepEqual(Object.keys((first.data as { spec: object }).spec), [
        '$patch',
        'containers',
        'imagePullSecrets',
        'initContainers',
        'patchPodMetadata',
        'volumes',
      ]);
      assert.equal(status(cluster, 'agent')?.['collisionCount'], 0);

      await setImage(cluster, 'agent:2');
      const second = await registered(cluster, 'agent:2');
      assert.equal(second.revision, 2);
      assert.notEqual(second.name, first.name);
      assert.equal(revisions(cluster).length, 2);

      await updateSidecarSet(cluster, 'agent', (spec) => {
        spec['injectionStrategy'] = { revision: { revisionName: first.name } };
        spec['updateStrategy'] = { ...(spec['updateStrategy'] as object), paused: true };
      });
      await waitFor(
        cluster,
        () => status(cluster, 'agent')?.['observedGeneration'] === 3,
        'the pinned spec observed',
      );
      // The webhook's own cache follows the same watch; give it a moment.
      await sleep(300);
      await createPods(cluster, 2, (i) => nginxPod(`web-${i}`));
      await waitFor(cluster, () => pods(cluster).length === 2, 'pods created');
      for (const pod of pods(cluster)) {
        assert.equal(container(pod, 'agent')?.['image'], 'agent:1', pod.metadata.name);
        const recorded = JSON.parse(pod.metadata.annotations?.[HASH] ?? '{}') as Record<
          string,
          { hash: string; controllerRevision?: string }
        >;
        const entry = recorded['agent'];
        assert.ok(entry);
        assert.equal(entry.controllerRevision, first.name);
        assert.equal(entry.hash, firstHash);
      }
      // The pin changed no injected field: still two revisions, the second the latest.
      assert.deepEqual(
        revisions(cluster).map((r) => r.name),
        [first.name, second.name],
      );
      assert.equal(status(cluster, 'agent')?.['latestRevision'], second.name);
    }, fast);
  });

  it('refuses a pin to a revision that does not exist', async () => {
    await withCluster(async (cluster) => {
      await assert.rejects(
        createSidecarSet(
          cluster,
          sidecarSet(
            'agent',
            agentSpec({ injectionStrategy: { revision: { revisionName: 'agent-missing' } } }),
          ),
        ),
        /Cannot find specific ControllerRevision/,
      );
    }, fast);
  });

  it('keeps revisionHistoryLimit revisions, the newest ones, and rolls back by renumbering', async () => {
    await withCluster(async (cluster) => {
      await createSidecarSet(cluster, sidecarSet('agent', agentSpec({ revisionHistoryLimit: 2 })));
      await registered(cluster, 'agent:1');
      await setImage(cluster, 'agent:2');
      const two = await registered(cluster, 'agent:2');
      await setImage(cluster, 'agent:3');
      await registered(cluster, 'agent:3');
      await setImage(cluster, 'agent:4');
      await registered(cluster, 'agent:4');
      await waitFor(cluster, () => revisions(cluster).length === 2, 'the history truncated');
      assert.deepEqual(
        revisions(cluster).map((r) => r.revision),
        [3, 4],
      );
      // Back to agent:3: that revision is renumbered to 5, nothing is created.
      await setImage(cluster, 'agent:3');
      await waitFor(
        cluster,
        () => revisions(cluster).at(-1)?.revision === 5,
        'the rollback renumbered',
      );
      const after = revisions(cluster);
      assert.equal(after.length, 2);
      assert.ok(JSON.stringify(after[1]?.data).includes('"image":"agent:3"'));
      assert.ok(!after.some((r) => r.name === two.name));
      await waitFor(
        cluster,
        () => status(cluster, 'agent')?.['latestRevision'] === after[1]?.name,
        'the status names the rolled-back revision',
      );
    }, fast);
  });
});
