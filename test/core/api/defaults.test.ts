import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { parse } from 'yaml';

import { defaultSidecarSet } from '../../../src/core/api/defaults.js';
import { computeSidecarSetHash } from '../../../src/core/api/hash.js';
import { defaultImagePullPolicy } from '../../../src/core/api/image-ref.js';
import type {
  SidecarContainer,
  SidecarSet,
  SidecarSetSpec,
} from '../../../src/core/api/sidecarset-types.js';

function makeSidecarSet(spec: SidecarSetSpec): SidecarSet {
  return { metadata: { name: 'ss' }, spec };
}

function defaulted(spec: unknown): Record<string, unknown> {
  return defaultSidecarSet(makeSidecarSet(spec as SidecarSetSpec)).spec as Record<string, unknown>;
}

const CONTAINER_DEFAULTS = {
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File',
  imagePullPolicy: 'IfNotPresent',
  podInjectPolicy: 'BeforeAppContainer',
  upgradeStrategy: { upgradeType: 'ColdUpgrade' },
  shareVolumePolicy: { type: 'disabled' },
};

describe('defaultSidecarSet: the OpenKruise mutating test (dns-f)', () => {
  it('applies every SidecarSet-level and container default', () => {
    const out = defaultSidecarSet(
      makeSidecarSet({
        containers: [{ name: 'dns-f', image: 'dns:1.0' }],
        patchPodMetadata: [{ annotations: { key1: 'value1' } }],
        injectionStrategy: { revision: { customVersion: '1' } },
      }),
    );
    assert.deepEqual(out.spec, {
      containers: [{ name: 'dns-f', image: 'dns:1.0', ...CONTAINER_DEFAULTS }],
      patchPodMetadata: [{ annotations: { key1: 'value1' }, patchPolicy: 'Retain' }],
      injectionStrategy: { revision: { customVersion: '1', policy: 'Always' } },
      updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1, partition: 0 },
      revisionHistoryLimit: 10,
    });
  });
});

describe('defaultSidecarSet: the logtail example', () => {
  it('defaults the probe, pull policy and policies, keeps the rest', () => {
    const ss = parse(
      readFileSync(new URL('../../fixtures/logtail-sidecarset.yaml', import.meta.url), 'utf8'),
    ) as SidecarSet;
    const out = defaultSidecarSet(ss);
    assert.deepEqual(out.spec.updateStrategy, {
      type: 'RollingUpdate',
      maxUnavailable: '10%',
      partition: 0,
    });
    const [logtail] = out.spec.containers ?? [];
    assert.deepEqual(logtail?.livenessProbe, {
      exec: { command: ['/etc/init.d/ilogtaild', 'status'] },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    assert.equal(logtail.imagePullPolicy, 'IfNotPresent');
    assert.deepEqual(logtail.resources, {
      limits: { memory: '512Mi' },
      requests: { cpu: '10m', memory: '30Mi' },
    });
    assert.deepEqual(out.spec.volumes, [{ name: 'nginx-log', emptyDir: {} }]);
  });
});

describe('defaultImagePullPolicy (checked against distribution/reference v0.6.0 in Go)', () => {
  const digest = `sha256:${'a'.repeat(64)}`;
  const cases: [string, 'Always' | 'IfNotPresent'][] = [
    ['nginx', 'Always'],
    ['nginx:latest', 'Always'],
    ['nginx:1.0', 'IfNotPresent'],
    ['host:5000/img', 'Always'],
    ['host:5000/img:v1', 'IfNotPresent'],
    [`img@${digest}`, 'IfNotPresent'],
    [`img:latest@${digest}`, 'Always'],
    [`img:1@${digest}`, 'IfNotPresent'],
    ['img@sha256:abc', 'IfNotPresent'],
    [`img@md5:${'a'.repeat(32)}`, 'IfNotPresent'],
    [`img@sha512:${'a'.repeat(128)}`, 'IfNotPresent'],
    [`img@sha256:${'A'.repeat(64)}`, 'IfNotPresent'],
    ['', 'IfNotPresent'],
    ['UPPER/img', 'Always'],
    ['Nginx', 'IfNotPresent'],
    ['a'.repeat(64), 'IfNotPresent'],
    ['localhost/img', 'Always'],
    ['[::1]:5000/img:v', 'IfNotPresent'],
    ['[::1]:5000/img', 'Always'],
    ['a'.repeat(255), 'IfNotPresent'],
    ['docker.io/library/nginx:latest', 'Always'],
    ['index.docker.io/nginx', 'Always'],
    ['img:TAG', 'IfNotPresent'],
    ['img:', 'IfNotPresent'],
    ['a/b/c:latest', 'Always'],
    ['a___b', 'IfNotPresent'],
    ['a--b', 'Always'],
    ['a..b', 'IfNotPresent'],
    ['example.com/Img', 'IfNotPresent'],
    ['localhost:5000', 'IfNotPresent'],
  ];
  for (const [image, expected] of cases) {
    it(`${JSON.stringify(image.length > 40 ? `${image.slice(0, 12)}…` : image)} → ${expected}`, () => {
      assert.equal(defaultImagePullPolicy(image), expected);
    });
  }

  it('keeps an explicit policy and defaults a container without image to IfNotPresent', () => {
    const spec = defaulted({
      containers: [{ name: 'a', image: 'x', imagePullPolicy: 'Never' }, { name: 'b' }],
    });
    const [a, b] = spec['containers'] as Record<string, unknown>[];
    assert.equal(a?.['imagePullPolicy'], 'Never');
    assert.equal(b?.['imagePullPolicy'], 'IfNotPresent');
  });
});

describe('defaultSidecarSet: containers', () => {
  it('initContainers default to AfterAppContainer, explicit values are kept', () => {
    const spec = defaulted({
      initContainers: [{ name: 'i', image: 'i:1' }],
      containers: [
        {
          name: 'c',
          image: 'c:1',
          podInjectPolicy: 'AfterAppContainer',
          upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'e:1' },
          shareVolumePolicy: { type: 'enabled' },
          terminationMessagePath: '/tmp/t',
          terminationMessagePolicy: 'FallbackToLogsOnError',
        },
      ],
    });
    assert.deepEqual(spec['initContainers'], [
      { name: 'i', image: 'i:1', ...CONTAINER_DEFAULTS, podInjectPolicy: 'AfterAppContainer' },
    ]);
    assert.deepEqual(spec['containers'], [
      {
        name: 'c',
        image: 'c:1',
        podInjectPolicy: 'AfterAppContainer',
        upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'e:1' },
        shareVolumePolicy: { type: 'enabled' },
        terminationMessagePath: '/tmp/t',
        terminationMessagePolicy: 'FallbackToLogsOnError',
        imagePullPolicy: 'IfNotPresent',
      },
    ]);
  });

  it('ports, env fieldRef, transferEnv fieldRef, quantities, probes and lifecycle', () => {
    const spec = defaulted({
      containers: [
        {
          name: 'c',
          image: 'c:1',
          ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP' }, null],
          env: [
            { name: 'A', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'B', valueFrom: { fieldRef: { apiVersion: 'v2', fieldPath: 'x' } } },
            { name: 'C', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
            { name: 'D', value: 'd' },
          ],
          transferEnv: [
            { sourceContainerNameFrom: { fieldRef: { fieldPath: "metadata.labels['c']" } } },
            { sourceContainerNameFrom: {} },
            { sourceContainerName: 'app', envName: 'TZ' },
          ],
          resources: {
            limits: { cpu: '1000m', memory: '1.5Gi', x: null },
            requests: { cpu: 0.5, memory: '100u' },
          },
          livenessProbe: { httpGet: { port: 8080 } },
          readinessProbe: {
            httpGet: { port: 'http', path: '/ready', scheme: 'HTTPS' },
            timeoutSeconds: 5,
            periodSeconds: 7,
            successThreshold: 2,
            failureThreshold: 9,
          },
          startupProbe: { httpGet: { port: 8080 } },
          lifecycle: {
            postStart: { httpGet: { port: 1 } },
            preStop: { exec: { command: ['sleep', '5'] } },
          },
        },
      ],
    });
    const [c] = spec['containers'] as Record<string, unknown>[];
    assert.deepEqual(c?.['ports'], [
      { containerPort: 80, protocol: 'TCP' },
      { containerPort: 53, protocol: 'UDP' },
      null,
    ]);
    assert.deepEqual(c['env'], [
      { name: 'A', valueFrom: { fieldRef: { fieldPath: 'metadata.name', apiVersion: 'v1' } } },
      { name: 'B', valueFrom: { fieldRef: { apiVersion: 'v2', fieldPath: 'x' } } },
      { name: 'C', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
      { name: 'D', value: 'd' },
    ]);
    assert.deepEqual(c['transferEnv'], [
      {
        sourceContainerNameFrom: {
          fieldRef: { fieldPath: "metadata.labels['c']", apiVersion: 'v1' },
        },
      },
      { sourceContainerNameFrom: {} },
      { sourceContainerName: 'app', envName: 'TZ' },
    ]);
    assert.deepEqual(c['resources'], {
      limits: { cpu: '1', memory: '1536Mi', x: '0' },
      requests: { cpu: '500m', memory: '1m' },
    });
    assert.deepEqual(c['livenessProbe'], {
      httpGet: { port: 8080, path: '/', scheme: 'HTTP' },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    assert.deepEqual(c['readinessProbe'], {
      httpGet: { port: 'http', path: '/ready', scheme: 'HTTPS' },
      timeoutSeconds: 5,
      periodSeconds: 7,
      successThreshold: 2,
      failureThreshold: 9,
    });
    // OpenKruise's SidecarSet defaulting skips startupProbe.
    assert.deepEqual(c['startupProbe'], { httpGet: { port: 8080 } });
    assert.deepEqual(c['lifecycle'], {
      postStart: { httpGet: { port: 1, path: '/', scheme: 'HTTP' } },
      preStop: { exec: { command: ['sleep', '5'] } },
    });
  });

  it('a null container decodes to a zero container and is defaulted; non-objects are left', () => {
    const spec = defaulted({ containers: [null, 'junk'] });
    assert.deepEqual(spec['containers'], [{ ...CONTAINER_DEFAULTS }, 'junk']);
  });

  it('null upgradeStrategy and shareVolumePolicy are zero structs', () => {
    const spec = defaulted({
      containers: [{ name: 'a', image: 'a:1', upgradeStrategy: null, shareVolumePolicy: null }],
    });
    assert.deepEqual(spec['containers'], [{ name: 'a', image: 'a:1', ...CONTAINER_DEFAULTS }]);
  });
});

describe('defaultSidecarSet: volumes', () => {
  it('applies the core volume defaults', () => {
    const spec = defaulted({
      volumes: [
        { name: 'none' },
        { name: 'nullsource', emptyDir: null },
        { name: 'hp', hostPath: { path: '/x' } },
        { name: 'hp2', hostPath: { path: '/x', type: 'Directory' } },
        { name: 'sec', secret: { secretName: 's' } },
        { name: 'cm', configMap: { name: 'c', defaultMode: 256 } },
        {
          name: 'dapi',
          downwardAPI: { items: [{ path: 'l', fieldRef: { fieldPath: 'metadata.labels' } }] },
        },
        {
          name: 'proj',
          projected: {
            sources: [
              { serviceAccountToken: { path: 't' } },
              { serviceAccountToken: { path: 't', expirationSeconds: 600 } },
              { downwardAPI: { items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name' } }] } },
              { configMap: { name: 'c' } },
            ],
          },
        },
        { name: 'pvc', persistentVolumeClaim: { claimName: 'p' } },
        null,
      ],
    });
    assert.deepEqual(spec['volumes'], [
      { name: 'none', emptyDir: {} },
      { name: 'nullsource', emptyDir: {} },
      { name: 'hp', hostPath: { path: '/x', type: '' } },
      { name: 'hp2', hostPath: { path: '/x', type: 'Directory' } },
      { name: 'sec', secret: { secretName: 's', defaultMode: 420 } },
      { name: 'cm', configMap: { name: 'c', defaultMode: 256 } },
      {
        name: 'dapi',
        downwardAPI: {
          items: [{ path: 'l', fieldRef: { fieldPath: 'metadata.labels', apiVersion: 'v1' } }],
          defaultMode: 420,
        },
      },
      {
        name: 'proj',
        projected: {
          sources: [
            { serviceAccountToken: { path: 't', expirationSeconds: 3600 } },
            { serviceAccountToken: { path: 't', expirationSeconds: 600 } },
            {
              downwardAPI: {
                items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name', apiVersion: 'v1' } }],
              },
            },
            { configMap: { name: 'c' } },
          ],
          defaultMode: 420,
        },
      },
      { name: 'pvc', persistentVolumeClaim: { claimName: 'p' } },
      null,
    ]);
  });
});

describe('defaultSidecarSet: SidecarSet-level fields', () => {
  it('keeps explicit updateStrategy values and revisionHistoryLimit', () => {
    const spec = defaulted({
      updateStrategy: { type: 'NotUpdate', maxUnavailable: '50%', partition: 3 },
      revisionHistoryLimit: 0,
      patchPodMetadata: [{ patchPolicy: 'Overwrite' }],
      injectionStrategy: { paused: true, revision: { revisionName: 'r', policy: 'Partial' } },
    });
    assert.deepEqual(spec, {
      updateStrategy: { type: 'NotUpdate', maxUnavailable: '50%', partition: 3 },
      revisionHistoryLimit: 0,
      patchPodMetadata: [{ patchPolicy: 'Overwrite' }],
      injectionStrategy: { paused: true, revision: { revisionName: 'r', policy: 'Partial' } },
    });
  });

  it('null pointers take their defaults; no revision means no policy', () => {
    const spec = defaulted({
      updateStrategy: { maxUnavailable: null, partition: null },
      revisionHistoryLimit: null,
      injectionStrategy: { paused: false },
    });
    assert.deepEqual(spec, {
      updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1, partition: 0 },
      revisionHistoryLimit: 10,
      injectionStrategy: { paused: false },
    });
  });

  it('a missing spec becomes a defaulted empty spec', () => {
    const out = defaultSidecarSet({ metadata: { name: 'x' } } as SidecarSet);
    assert.deepEqual(out.spec, {
      updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1, partition: 0 },
      revisionHistoryLimit: 10,
    });
  });
});

describe('defaultSidecarSet: purity', () => {
  const input = (): SidecarSet =>
    makeSidecarSet({
      containers: [
        {
          name: 'c',
          image: 'c',
          resources: { limits: { cpu: '1000m' } },
          livenessProbe: { httpGet: { port: 80 } },
          env: [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
        },
      ],
      initContainers: [{ name: 'i', restartPolicy: 'Always' }],
      volumes: [
        { name: 'v' },
        { name: 'p', projected: { sources: [{ serviceAccountToken: {} }] } },
      ],
      patchPodMetadata: [{}],
      injectionStrategy: { revision: {} },
    });

  it('does not mutate its input', () => {
    const original = input();
    const snapshot = structuredClone(original);
    const out = defaultSidecarSet(original);
    assert.deepEqual(original, snapshot);
    assert.notEqual(out, original);
    assert.notEqual(out.spec.containers, original.spec.containers);
  });

  it('is idempotent', () => {
    const once = defaultSidecarSet(input());
    assert.deepEqual(defaultSidecarSet(once), once);
  });
});

describe('defaultSidecarSet: resourcesPolicy.targetContainersNameRegex', () => {
  const policy = (regex?: unknown): Record<string, unknown> => ({
    targetContainersMode: 'sum',
    ...(regex === undefined ? {} : { targetContainersNameRegex: regex }),
    resourcesExpr: { limits: { cpu: 'cpu' } },
  });
  const regexOf = (resourcesPolicy: unknown): unknown => {
    const spec = defaulted({ containers: [{ name: 'c', image: 'c:1', resourcesPolicy }] });
    const [c] = spec['containers'] as Record<string, Record<string, unknown>>[];
    return c?.['resourcesPolicy']?.['targetContainersNameRegex'];
  };

  it('is .* when absent or null, as the API server defaults it from the CRD', () => {
    assert.equal(regexOf(policy()), '.*');
    assert.equal(regexOf(policy(null)), '.*');
  });

  it('keeps a given regex, "" included (validation rejects that one)', () => {
    assert.equal(regexOf(policy('^app$')), '^app$');
    assert.equal(regexOf(policy('')), '');
  });

  it('adds no resourcesPolicy to a container without one', () => {
    const spec = defaulted({ containers: [{ name: 'c', image: 'c:1' }] });
    const [c] = spec['containers'] as Record<string, unknown>[];
    assert.equal(c?.['resourcesPolicy'], undefined);
  });

  it('hashes an omitted regex as OpenKruise hashes the stored .*', () => {
    const hashOf = (resourcesPolicy: unknown): string =>
      computeSidecarSetHash(
        defaultSidecarSet(
          makeSidecarSet({
            containers: [{ name: 'c', image: 'c:1', resourcesPolicy } as SidecarContainer],
          }),
        ).spec,
      );
    assert.equal(hashOf(policy()), hashOf(policy('.*')));
    assert.notEqual(hashOf(policy()), hashOf(policy('^app$')));
  });
});
