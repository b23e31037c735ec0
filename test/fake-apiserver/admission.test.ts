import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { admissionReviewHook } from './admission.js';
import type { AdmissionAttributes } from './admission.js';
import { apiFailure, withServer } from './harness.js';
import { isJsonObject } from './json.js';
import type { JsonObject, JsonValue } from './json.js';
import { PODS } from './resources.js';

/** A webhook in miniature: adds a logtail sidecar to pods, denies pods labelled deny=true. */
function miniWebhook(seen: JsonObject[]): (review: JsonObject) => Promise<JsonValue> {
  return (review) => {
    seen.push(review);
    const request = isJsonObject(review['request']) ? review['request'] : {};
    const object = isJsonObject(request['object']) ? request['object'] : {};
    const metadata = isJsonObject(object['metadata']) ? object['metadata'] : {};
    const labels = isJsonObject(metadata['labels']) ? metadata['labels'] : {};
    const uid = request['uid'] ?? '';
    if (labels['deny'] === 'true') {
      return Promise.resolve({
        response: { uid, allowed: false, status: { code: 403, message: 'no' } },
      });
    }
    const patch = [
      {
        op: 'add',
        path: '/spec/containers/-',
        value: { name: 'logtail', image: 'logtail:0.16.16' },
      },
    ];
    return Promise.resolve({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid,
        allowed: true,
        patchType: 'JSONPatch',
        patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
      },
    });
  };
}

const onPodCreate = (a: AdmissionAttributes): boolean =>
  a.resource.resource === 'pods' && a.operation === 'CREATE';

describe('mutating admission', () => {
  it('sends pod creations through an AdmissionReview webhook and stores the patched pod', async () => {
    await withServer(async (server) => {
      const seen: JsonObject[] = [];
      server.control.addAdmissionHook(admissionReviewHook(miniWebhook(seen), onPodCreate));
      const core = server.kubeConfig().makeApiClient(CoreV1Api);
      const created = await core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { generateName: 'web-', labels: { app: 'web' } },
          spec: { containers: [{ name: 'nginx', image: 'nginx' }] },
        },
      });
      assert.deepEqual(
        created.spec?.containers.map((c) => c.name),
        ['nginx', 'logtail'],
      );
      const stored = server.store.get(PODS, 'default', created.metadata?.name ?? '');
      assert.ok(stored);
      const request = seen[0]?.['request'];
      assert.ok(isJsonObject(request));
      assert.equal(request['operation'], 'CREATE');
      assert.equal(request['namespace'], 'default');
      assert.equal(request['name'], '', 'generateName: the webhook sees no name yet');
      assert.deepEqual(request['kind'], { group: '', version: 'v1', kind: 'Pod' });
      const denied = await apiFailure(
        core.createNamespacedPod({
          namespace: 'default',
          body: { metadata: { name: 'x', labels: { deny: 'true' } }, spec: { containers: [] } },
        }),
      );
      assert.equal(denied.code, 403);
      assert.equal(server.store.get(PODS, 'default', 'x'), undefined);
    });
  });

  it('passes updates and patches with the old object, and leaves status writes alone', async () => {
    await withServer(async (server) => {
      const calls: AdmissionAttributes[] = [];
      server.control.addAdmissionHook((attributes) => {
        calls.push(attributes);
        const object = {
          ...attributes.object,
          metadata: { ...attributes.object.metadata, annotations: { admitted: 'yes' } },
        };
        return Promise.resolve(object);
      });
      const custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
      const ss = { group: 'apps.kruise.io', version: 'v1beta1', plural: 'sidecarsets' };
      await custom.createClusterCustomObject({
        ...ss,
        body: {
          apiVersion: 'apps.kruise.io/v1beta1',
          kind: 'SidecarSet',
          metadata: { name: 's' },
          spec: { v: 1 },
        },
      });
      const patched: unknown = await custom.patchClusterCustomObject({
        ...ss,
        name: 's',
        body: [{ op: 'replace', path: '/spec/v', value: 2 }],
      });
      assert.ok(isJsonObject(patched) && isJsonObject(patched['metadata']));
      assert.deepEqual(patched['metadata']['annotations'], { admitted: 'yes' });
      await custom.patchClusterCustomObjectStatus({
        ...ss,
        name: 's',
        body: [
          { op: 'add', path: '/status', value: { matchedPods: 1, updatedPods: 0, readyPods: 0 } },
        ],
      });
      assert.deepEqual(
        calls.map((c) => [c.operation, c.oldObject?.['spec'] ?? null, c.object['spec'] ?? null]),
        [
          ['CREATE', null, { v: 1 }],
          ['UPDATE', { v: 1 }, { v: 2 }],
        ],
      );
    });
  });
});
