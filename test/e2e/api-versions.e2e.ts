/**
 * SidecarSet v1beta1 and v1alpha1 on a real API server (docs/adr/0015-sidecarset-v1beta1.md): the
 * CRD stores v1beta1 and converts v1alpha1 through our /convert. A v1beta1 SidecarSet is read back
 * as v1alpha1, updated through either version, its pods upgraded in place; the same SidecarSet
 * written in either version injects a pod the same way; a v1alpha1 namespace survives the trip.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { before, describe, it } from 'node:test';

import { parse, stringify } from 'yaml';

import { ApiKubelet } from '../support/api-kubelet.js';
import { eventually } from '../support/eventually.js';
import type { SidecarsetProcess } from './processes.js';
import { errors } from './processes.js';
import { install, useControlPlane } from './support.js';

const examples = new URL('../../examples/', import.meta.url).pathname;
const NAME = 'logtail-sidecarset';
const BETA = 'sidecarsets.v1beta1.apps.kruise.io';
const ALPHA = 'sidecarsets.v1alpha1.apps.kruise.io';
const CUSTOM = 'apps.kruise.io/sidecarset-custom-version';
const KEPT_NAMESPACE = 'apps.kruise.io/sidecarset-v1alpha1-namespace';

interface Container {
  name: string;
  image: string;
  volumeMounts?: { name: string }[];
}
interface SidecarSetJson {
  apiVersion: string;
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    customVersion?: string;
    namespace?: string;
    namespaceSelector?: unknown;
    containers: Container[];
  };
  status?: { matchedPods?: number; updatedPods?: number };
}
interface PodJson {
  metadata: { annotations?: Record<string, string> };
  spec: { containers: Container[] };
  status?: { containerStatuses?: { name: string; image: string }[] };
}

describe('SidecarSet v1beta1 and v1alpha1 on a real API server', () => {
  const cluster = useControlPlane();
  const plane = cluster.plane;
  let serve: SidecarsetProcess;
  /** The pod injected by the v1beta1 SidecarSet, as it was created. */
  let fromBeta: PodJson;

  const kubectl = async (args: readonly string[], input?: string): Promise<string> => {
    const result = await plane().kubectl(args, input === undefined ? {} : { input });
    assert.equal(result.code, 0, `kubectl ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  const getJson = async <T>(...args: string[]): Promise<T> =>
    JSON.parse(await kubectl(['get', ...args, '-o', 'json'])) as T;
  const read = (resource: string, name = NAME): Promise<SidecarSetJson> =>
    getJson<SidecarSetJson>(resource, name);
  const pod = (name: string): Promise<PodJson> => getJson<PodJson>('pod', name);
  const setImage = (resource: string, image: string): Promise<string> =>
    kubectl([
      'patch',
      resource,
      NAME,
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'replace', path: '/spec/containers/0/image', value: image }]),
    ]);
  const createPod = async (name: string, labels: Record<string, string>): Promise<PodJson> => {
    const nginx = parse(await readFile(`${examples}nginx-pod.yaml`, 'utf8')) as {
      metadata: { name: string; labels?: Record<string, string> };
    };
    nginx.metadata.name = name;
    nginx.metadata.labels = { ...nginx.metadata.labels, ...labels };
    await kubectl(['create', '-f', '-'], stringify(nginx));
    return pod(name);
  };
  const runningImage = async (podName: string, container: string): Promise<string | undefined> =>
    (await pod(podName)).status?.containerStatuses?.find((c) => c.name === container)?.image;
  /** The pod's sidecarset-hash entry for the SidecarSet, without its time. */
  const hashEntry = (p: PodJson): unknown => {
    const entries = JSON.parse(
      p.metadata.annotations?.['kruise.io/sidecarset-hash'] ?? '{}',
    ) as Record<string, Record<string, unknown>>;
    return Object.entries(entries[NAME] ?? {}).filter(([key]) => key !== 'updateTimestamp');
  };
  /** The containers without the service-account token mount, whose name is random per pod. */
  const containersOf = (p: PodJson): unknown =>
    p.spec.containers.map((c) => ({
      ...c,
      volumeMounts: (c.volumeMounts ?? []).filter((m) => !m.name.startsWith('kube-api-access-')),
    }));

  before(async () => {
    const installation = await install(plane());
    serve = await installation.serve();
    cluster.defer(() => serve.stop());
    const kubelet = new ApiKubelet(plane().kubeConfig(), { namespace: 'default', delayMs: 20 });
    cluster.defer(() => kubelet.stop());
  });

  it('creates a v1beta1 SidecarSet: defaulted and hashed, stored as v1beta1', async () => {
    await kubectl(['apply', '-f', `${examples}logtail-sidecarset-v1beta1.yaml`]);
    const beta = await read(BETA);
    assert.equal(beta.apiVersion, 'apps.kruise.io/v1beta1');
    assert.equal(beta.spec.customVersion, 'logtail-0.16.16');
    assert.match(beta.metadata.annotations?.['kruise.io/sidecarset-hash'] ?? '', /^[a-z0-9]+$/);
    const crd = await getJson<{ status: { storedVersions: string[] } }>(
      'crd',
      'sidecarsets.apps.kruise.io',
    );
    assert.deepEqual(crd.status.storedVersions, ['v1beta1']);
  });

  it('reads it back as v1alpha1: the custom version a label, the same hashes and containers', async () => {
    const beta = await read(BETA);
    const alpha = await read(ALPHA);
    assert.equal(alpha.apiVersion, 'apps.kruise.io/v1alpha1');
    assert.equal(alpha.spec.customVersion, undefined);
    assert.equal(alpha.metadata.labels?.[CUSTOM], 'logtail-0.16.16');
    assert.deepEqual(alpha.metadata.annotations, beta.metadata.annotations);
    assert.deepEqual(alpha.spec.containers, beta.spec.containers);
  });

  it('injects a pod; its ControllerRevision carries the custom version', async () => {
    fromBeta = await createPod('beta-pod', {});
    assert.deepEqual(
      fromBeta.spec.containers.map((c) => c.name),
      ['logtail', 'nginx'],
    );
    await eventually(async () => {
      const revisions = await kubectl([
        'get',
        'controllerrevisions',
        '-n',
        'sidecarset-system',
        '-l',
        `kruise.io/sidecarset-name=${NAME},${CUSTOM}=logtail-0.16.16`,
        '-o',
        'name',
      ]);
      return revisions.trim() !== '';
    }, 'a ControllerRevision labelled with the custom version');
  });

  it('updated through v1alpha1: v1beta1 sees it, spec.customVersion kept, the pod upgraded', async () => {
    const before = await read(BETA);
    await setImage(ALPHA, 'log-service/logtail:0.16.17');
    const beta = await read(BETA);
    assert.equal(beta.spec.containers[0]?.image, 'log-service/logtail:0.16.17');
    assert.equal(beta.spec.customVersion, 'logtail-0.16.16');
    assert.equal(beta.metadata.labels?.[CUSTOM], undefined);
    assert.notEqual(
      beta.metadata.annotations?.['kruise.io/sidecarset-hash'],
      before.metadata.annotations?.['kruise.io/sidecarset-hash'],
    );
    await eventually(
      async () => (await runningImage('beta-pod', 'logtail')) === 'log-service/logtail:0.16.17',
      'beta-pod upgraded to 0.16.17',
    );
  });

  it('updated through v1beta1: v1alpha1 sees it, the pod upgraded, the status follows', async () => {
    await setImage(BETA, 'log-service/logtail:0.16.18');
    assert.equal((await read(ALPHA)).spec.containers[0]?.image, 'log-service/logtail:0.16.18');
    await eventually(
      async () => (await runningImage('beta-pod', 'logtail')) === 'log-service/logtail:0.16.18',
      'beta-pod upgraded to 0.16.18',
    );
    await eventually(async () => {
      const status = (await read(ALPHA)).status;
      return status?.matchedPods === 1 && status.updatedPods === 1;
    }, 'status matched 1, updated 1, read as v1alpha1');
  });

  it('the same SidecarSet written as v1alpha1 injects a pod the same way', async () => {
    await kubectl(['delete', 'sidecarset', NAME]);
    await kubectl(['apply', '-f', `${examples}logtail-sidecarset.yaml`]);
    const fromAlpha = await createPod('alpha-pod', {});
    assert.deepEqual(containersOf(fromAlpha), containersOf(fromBeta));
    assert.deepEqual(hashEntry(fromAlpha), hashEntry(fromBeta));
  });

  it('a v1alpha1 namespace is a v1beta1 namespaceSelector, and reads back as the namespace', async () => {
    await kubectl(
      ['create', '-f', '-'],
      stringify({
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name: 'scoped' },
        spec: {
          namespace: 'default',
          selector: { matchLabels: { scoped: 'true' } },
          containers: [{ name: 'scoped-agent', image: 'agent:1' }],
        },
      }),
    );
    const beta = await read(BETA, 'scoped');
    assert.deepEqual(beta.spec.namespaceSelector, {
      matchLabels: { 'kubernetes.io/metadata.name': 'default' },
    });
    assert.equal(beta.metadata.annotations?.[KEPT_NAMESPACE], 'default');
    const alpha = await read(ALPHA, 'scoped');
    assert.equal(alpha.spec.namespace, 'default');
    assert.equal(alpha.spec.namespaceSelector, undefined);
    assert.equal(alpha.metadata.annotations?.[KEPT_NAMESPACE], undefined);
    const injected = await createPod('scoped-pod', { scoped: 'true' });
    assert.ok(injected.spec.containers.some((c) => c.name === 'scoped-agent'));
  });

  it('v1beta1 refuses the v1alpha1 custom-version label, naming spec.customVersion', async () => {
    const result = await plane().kubectl(['create', '-f', '-'], {
      input: stringify({
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'SidecarSet',
        metadata: { name: 'labelled', labels: { [CUSTOM]: 'v1' } },
        spec: {
          selector: { matchLabels: { labelled: 'true' } },
          containers: [{ name: 'labelled', image: 'l:1' }],
        },
      }),
    });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /the custom version is spec\.customVersion/);
  });

  it('serve logged no errors', () => {
    assert.deepEqual(errors(serve), []);
  });
});
