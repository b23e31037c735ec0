/**
 * docs/migrating-from-openkruise.md played on a real API server. The starting state is what
 * OpenKruise v1.9 leaves: its SidecarSet CRD (test/fixtures/openkruise/, v1beta1 the storage
 * version), a SidecarSet with the hash annotations OpenKruise's webhook wrote, pods OpenKruise
 * injected, kruise-controller-manager and OpenKruise's webhook configurations. No OpenKruise
 * process runs: its objects are there for the steps to act on. Then the documented commands, in
 * order, with the fixture's kubectl; then the checks that nothing was lost. The SidecarSet is read
 * as v1alpha1 afterwards: through our conversion webhook.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { stringify } from 'yaml';

import { ApiKubelet } from '../support/api-kubelet.js';
import { eventually } from '../support/eventually.js';
import { CRD_PATH } from '../../scripts/gen-crd.js';
import type { SidecarsetProcess } from './processes.js';
import { errors } from './processes.js';
import { applyCrd } from './apply-crd.js';
import { install, scopeIncludes, useControlPlane } from './support.js';

const OPENKRUISE_CRD = new URL(
  '../fixtures/openkruise/apps.kruise.io_sidecarsets.yaml',
  import.meta.url,
).pathname;
const CRD = 'sidecarsets.apps.kruise.io';
const NS = 'web';

/**
 * The hashes of OpenKruise's own test vector for this container
 * (pkg/webhook/sidecarset/mutating/sidecarset_mutating_test.go; test/core/api/hash.test.ts): written
 * here as OpenKruise wrote them, not computed by this project.
 */
const HASH = '6wbd76bd7984x24fb4f44fv9222cw9v9bcf85x766744wddd4zwx927zzz2zb684';
const HASH_WITHOUT_IMAGE = '82684vwf9d4cb4wz4vffx4ddfbb47ww4z4wwxdbwb8w2zbb7zvf4524cdd49bv94';

/** dns-f as OpenKruise's mutating webhook stores it (the vector's canonical JSON) and injects it. */
const CONTAINER = {
  name: 'dns-f',
  image: 'dns:1.0',
  resources: {},
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File',
  imagePullPolicy: 'IfNotPresent',
};
const SIDECAR = {
  ...CONTAINER,
  podInjectPolicy: 'BeforeAppContainer',
  upgradeStrategy: { upgradeType: 'ColdUpgrade' },
  shareVolumePolicy: { type: 'disabled' },
};

const SIDECARSET = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: {
    name: 'dns-sidecarset',
    annotations: {
      'kruise.io/sidecarset-hash': HASH,
      'kruise.io/sidecarset-hash-without-image': HASH_WITHOUT_IMAGE,
    },
  },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    containers: [SIDECAR],
    updateStrategy: { type: 'RollingUpdate', partition: 0, maxUnavailable: 1 },
    revisionHistoryLimit: 10,
  },
};

const podEntry = (hash: string): string =>
  JSON.stringify({
    'dns-sidecarset': {
      updateTimestamp: '2026-06-01T08:00:00Z',
      hash,
      sidecarSetName: 'dns-sidecarset',
      sidecarList: ['dns-f'],
    },
  });

/** A pod as OpenKruise injected it: the sidecar first, its three annotations. */
function injectedPod(name: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NS,
      labels: { app: 'web' },
      annotations: {
        'kruise.io/sidecarset-hash': podEntry(HASH),
        'kruise.io/sidecarset-hash-without-image': podEntry(HASH_WITHOUT_IMAGE),
        'kruise.io/sidecarset-injected-list': 'dns-sidecarset',
      },
    },
    spec: { containers: [CONTAINER, { name: 'app', image: 'web:1' }] },
  };
}

/** What OpenKruise's chart installs besides the CRD, as far as the steps touch it. */
const OPENKRUISE_OBJECTS = [
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'kruise-controller-manager', namespace: 'kruise-system' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { 'control-plane': 'controller-manager' } },
      template: {
        metadata: { labels: { 'control-plane': 'controller-manager' } },
        spec: { containers: [{ name: 'manager', image: 'openkruise/kruise-manager:v1.9.0' }] },
      },
    },
  },
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'kruise-mutating-webhook-configuration' },
    webhooks: [
      {
        name: 'mpod.kb.io',
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Fail',
        clientConfig: {
          service: {
            name: 'kruise-webhook-service',
            namespace: 'kruise-system',
            path: '/mutate-pod',
          },
        },
        rules: [
          {
            apiGroups: [''],
            apiVersions: ['v1'],
            operations: ['CREATE'],
            resources: ['pods'],
          },
        ],
        namespaceSelector: {
          matchExpressions: [
            { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] },
          ],
        },
      },
    ],
  },
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'kruise-validating-webhook-configuration' },
    webhooks: [
      {
        name: 'vsidecarset.kb.io',
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        // Ignore only because no OpenKruise answers here; its chart says Fail.
        failurePolicy: 'Ignore',
        clientConfig: {
          service: {
            name: 'kruise-webhook-service',
            namespace: 'kruise-system',
            path: '/validate-apps-kruise-io-v1alpha1-sidecarset',
          },
        },
        rules: [
          {
            apiGroups: ['apps.kruise.io'],
            apiVersions: ['v1alpha1'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['sidecarsets'],
          },
        ],
      },
    ],
  },
];

interface PodJson {
  metadata: { annotations?: Record<string, string> };
  spec: { containers: { name: string; image: string }[] };
}
interface SidecarSetJson {
  metadata: { annotations?: Record<string, string> };
  status?: { matchedPods?: number; updatedPods?: number };
}
interface CrdJson {
  spec: { versions: { name: string; storage: boolean }[]; conversion?: { strategy?: string } };
  status: { storedVersions: string[] };
}

describe('docs/migrating-from-openkruise.md on a real API server', () => {
  const cluster = useControlPlane();
  const plane = cluster.plane;
  let serve: SidecarsetProcess;
  const podsBefore = new Map<string, PodJson>();

  const kubectl = async (args: readonly string[], input?: string): Promise<string> => {
    const result = await plane().kubectl(args, input === undefined ? {} : { input });
    assert.equal(result.code, 0, `kubectl ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  const getJson = async <T>(...args: string[]): Promise<T> =>
    JSON.parse(await kubectl(['get', ...args, '-o', 'json'])) as T;
  const crd = (): Promise<CrdJson> => getJson<CrdJson>('crd', CRD);
  const sidecarSet = (): Promise<SidecarSetJson> =>
    getJson<SidecarSetJson>('sidecarsets.v1alpha1.apps.kruise.io', 'dns-sidecarset');
  const pod = (name: string): Promise<PodJson> => getJson<PodJson>('-n', NS, 'pod', name);

  before(async () => {
    await applyCrd(plane(), OPENKRUISE_CRD, ['--server-side']);
    await kubectl(['create', '-f', '-'], stringify(SIDECARSET));
    await plane().createNamespace(NS);
    for (const name of ['web-0', 'web-1']) {
      await kubectl(['create', '-f', '-'], stringify(injectedPod(name)));
      podsBefore.set(name, await pod(name));
    }
    await plane().createNamespace('kruise-system');
    for (const object of OPENKRUISE_OBJECTS)
      await kubectl(['create', '-f', '-'], stringify(object));
    const kubelet = new ApiKubelet(plane().kubeConfig(), { namespace: NS, delayMs: 20 });
    cluster.defer(() => kubelet.stop());
    // OpenKruise's CRD converts through kruise-webhook-service, as its chart installs it; nothing
    // answers there (no OpenKruise process runs), which is how it is once step 2 has run.
    await kubectl([
      'patch',
      'crd',
      CRD,
      '--type=merge',
      '-p',
      JSON.stringify({
        spec: {
          conversion: {
            strategy: 'Webhook',
            webhook: {
              conversionReviewVersions: ['v1', 'v1beta1'],
              clientConfig: {
                service: {
                  name: 'kruise-webhook-service',
                  namespace: 'kruise-system',
                  path: '/convert',
                },
              },
            },
          },
        },
      }),
    ]);
  });

  it('starts from OpenKruise v1.9: SidecarSets stored as v1beta1, its pod webhook in the way', async () => {
    assert.deepEqual(
      (await crd()).spec.versions.map((v) => [v.name, v.storage]),
      [
        ['v1alpha1', false],
        ['v1beta1', true],
      ],
    );
    const blocked = await plane().kubectl(['create', '-f', '-'], {
      input: stringify(injectedPod('blocked')),
    });
    assert.notEqual(blocked.code, 0);
    assert.match(blocked.stderr, /mpod\.kb\.io/);
  });

  it('step 1: back up the SidecarSets', async () => {
    const backup = await kubectl(['get', 'sidecarsets', '-o', 'yaml']);
    assert.match(backup, /name: dns-sidecarset/);
  });

  it("step 2: remove OpenKruise's webhooks and controller, not the CRD", async () => {
    await kubectl([
      'delete',
      'mutatingwebhookconfiguration',
      'kruise-mutating-webhook-configuration',
    ]);
    await kubectl([
      'delete',
      'validatingwebhookconfiguration',
      'kruise-validating-webhook-configuration',
    ]);
    await kubectl([
      '-n',
      'kruise-system',
      'scale',
      'deployment',
      'kruise-controller-manager',
      '--replicas=0',
    ]);
    await kubectl([
      'wait',
      '--for=jsonpath={.spec.replicas}=0',
      '-n',
      'kruise-system',
      'deployment/kruise-controller-manager',
    ]);
    // v1beta1, the stored version, needs no conversion: it reads on; v1alpha1 cannot.
    await kubectl(['get', 'sidecarsets.v1beta1.apps.kruise.io', 'dns-sidecarset']);
    const alpha = await plane().kubectl(['get', 'sidecarsets.v1alpha1.apps.kruise.io']);
    assert.notEqual(alpha.code, 0);
    assert.match(alpha.stderr, /conversion webhook/);
  });

  it('step 3: install this project; its CRD replaces the schema in place', async () => {
    await kubectl(['replace', '--save-config', '-f', CRD_PATH]);
    const replaced = await crd();
    assert.deepEqual(
      replaced.spec.versions.map((v) => [v.name, v.storage]),
      [
        ['v1alpha1', false],
        ['v1beta1', true],
      ],
    );
    assert.equal(replaced.spec.conversion?.strategy, 'Webhook');
    assert.deepEqual(replaced.status.storedVersions, ['v1beta1'], 'nothing to migrate');
    const resources = await kubectl(['api-resources', '--api-group=apps.kruise.io', '-o', 'wide']);
    assert.match(resources, /^sidecarsets\s+apps\.kruise\.io\/v1beta1\s+false\s+SidecarSet/m);
    const installation = await install(plane());
    serve = await installation.serve();
    cluster.defer(() => serve.stop());
  });

  it('kept the SidecarSet and the hashes OpenKruise wrote', async () => {
    const list = await kubectl(['get', 'sidecarsets', '-o', 'name']);
    assert.equal(list.trim(), 'sidecarset.apps.kruise.io/dns-sidecarset');
    const annotations = (await sidecarSet()).metadata.annotations ?? {};
    assert.equal(annotations['kruise.io/sidecarset-hash'], HASH);
    assert.equal(annotations['kruise.io/sidecarset-hash-without-image'], HASH_WITHOUT_IMAGE);
  });

  it("sees OpenKruise's pods as up to date and leaves them alone", async () => {
    await eventually(async () => {
      const status = (await sidecarSet()).status;
      return status?.matchedPods === 2 && status.updatedPods === 2;
    }, 'status matched 2, updated 2');
    for (const [name, before] of podsBefore) {
      const after = await pod(name);
      assert.deepEqual(after.spec.containers, before.spec.containers, name);
      assert.deepEqual(after.metadata.annotations, before.metadata.annotations, name);
    }
  });

  it('our webhook rehashes the SidecarSet to the same values on its next change', async () => {
    await kubectl(['annotate', 'sidecarset', 'dns-sidecarset', 'migrated=true']);
    const annotations = (await sidecarSet()).metadata.annotations ?? {};
    assert.equal(annotations['migrated'], 'true');
    assert.equal(annotations['kruise.io/sidecarset-hash'], HASH);
    assert.equal(annotations['kruise.io/sidecarset-hash-without-image'], HASH_WITHOUT_IMAGE);
    const status = (await sidecarSet()).status;
    assert.equal(status?.updatedPods, 2);
  });

  it('our webhook injects new pods', async () => {
    await scopeIncludes(plane(), 'web');
    const plain = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-2', namespace: NS, labels: { app: 'web' } },
      spec: { containers: [{ name: 'app', image: 'web:1' }] },
    };
    await kubectl(['create', '-f', '-'], stringify(plain));
    const injected = await pod('web-2');
    assert.deepEqual(
      injected.spec.containers.map((c) => c.name),
      ['dns-f', 'app'],
    );
    assert.match(
      injected.metadata.annotations?.['kruise.io/sidecarset-hash'] ?? '',
      new RegExp(HASH),
    );
    await eventually(async () => {
      const status = (await sidecarSet()).status;
      return status?.matchedPods === 3 && status.updatedPods === 3;
    }, 'status matched 3, updated 3');
  });

  it('serve logged no errors', () => {
    assert.deepEqual(errors(serve), []);
  });
});
