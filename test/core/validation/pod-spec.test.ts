import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Volume } from '../../../src/core/api/k8s-types.js';
import { formatFieldError } from '../../../src/core/validation/field-error.js';
import { stripSidecarFields } from '../../../src/core/api/sidecar-container.js';
import { validateFakePodSpec, validatePodSchema } from '../../../src/core/validation/pod-spec.js';

const c = (name: string, extra: Partial<Container> = {}): Container => ({
  name,
  image: 'img:1',
  ...extra,
});
const run = (input: {
  initContainers?: Container[];
  containers?: Container[];
  volumes?: Volume[];
}): string[] => validateFakePodSpec(input).map(formatFieldError);
const one = (extra: Partial<Container>, volumes: Volume[] = []): string[] =>
  run({ containers: [c('a', extra)], volumes });

test('schema errors are mapped to SidecarSet paths and stop semantic checks', () => {
  assert.deepEqual(
    run({
      containers: [
        c('a', {
          image: 3 as unknown as string,
          ports: [{ containerPort: 'x' as unknown as number }],
        }),
      ],
    }),
    [
      'spec.containers[0].image: Invalid value: 3: must be string',
      'spec.containers[0].ports[0].containerPort: Invalid value: "x": must be integer',
    ],
  );
  assert.deepEqual(run({ containers: [c('a', { imagePullPolicy: 'Sometimes' })] }), [
    'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
  ]);
  assert.deepEqual(run({ volumes: [{ name: 'v', hostPath: {} }], containers: [c('a')] }), [
    'spec.volumes[0].hostPath.path: Required value',
  ]);
  assert.match(
    run({ containers: [c('a', { resources: { limits: { cpu: 'lots' } } })] })[0] ?? '',
    /^spec\.containers\[0\]\.resources\.limits\.cpu: Invalid value: "lots": quantities must match/,
  );
  assert.deepEqual(run({ containers: [c('a', { env: [{ value: 'x' } as never] })] }), [
    'spec.containers[0].env[0].name: Required value',
  ]);
  assert.deepEqual(
    validatePodSchema({
      containers: [{ name: 'a', 'we/ird': 1, volumeMounts: [{ name: 'x', mountPath: 5 }] }],
    }).map(formatFieldError),
    ['spec.containers[0].volumeMounts[0].mountPath: Invalid value: 5: must be string'],
  );
});

test('SidecarSet-only fields are stripped; a dummy container stands in', () => {
  const s = stripSidecarFields({ name: 'a', podInjectPolicy: 'x', transferEnv: [] });
  assert.deepEqual(s, { name: 'a' });
  assert.deepEqual(run({ initContainers: [c('i')] }), []);
});

test('container names and images', () => {
  assert.deepEqual(
    run({
      initContainers: [c('x')],
      containers: [c('x'), c('Bad_Name'), c('', { image: ' img' })],
    }),
    [
      'spec.containers[0].name: Duplicate value: "x"',
      "spec.containers[1].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      'spec.containers[2].name: Required value',
      'spec.containers[2].image: Invalid value: " img": must not have leading or trailing whitespace',
    ],
  );
  assert.deepEqual(one({ image: '' }), ['spec.containers[0].image: Required value']);
});

test('restartPolicy and init-container-only restrictions', () => {
  assert.deepEqual(one({ restartPolicy: 'Always' }), [
    'spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers',
  ]);
  assert.deepEqual(
    run({ initContainers: [c('i', { restartPolicy: 'OnFailure' })], containers: [c('a')] }),
    [
      'spec.initContainers[0].restartPolicy: Unsupported value: "OnFailure": supported values: "Always"',
    ],
  );
  const probe = { exec: { command: ['true'] } };
  assert.deepEqual(
    run({ initContainers: [c('i', { readinessProbe: probe, lifecycle: { preStop: probe } })] }),
    [
      'spec.initContainers[0].lifecycle: Forbidden: may not be set for init containers without restartPolicy=Always',
      'spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always',
    ],
  );
  assert.deepEqual(
    run({
      initContainers: [
        c('i', {
          restartPolicy: 'Always',
          readinessProbe: probe,
          livenessProbe: probe,
          startupProbe: {},
          lifecycle: { postStart: probe },
        }),
      ],
    }),
    ['spec.initContainers[0].startupProbe: Required value: must specify a handler type'],
  );
});

test('ports', () => {
  assert.deepEqual(
    one({
      ports: [
        { name: 'http', containerPort: 80 },
        { name: 'http', containerPort: 0 },
        { name: '-Bad--', containerPort: 70000, hostPort: 70000 },
        { containerPort: 1, protocol: 'TCP' },
      ],
    }),
    [
      'spec.containers[0].ports[1].name: Duplicate value: "http"',
      'spec.containers[0].ports[1].containerPort: Required value',
      'spec.containers[0].ports[2].name: Invalid value: "-Bad--": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
      'spec.containers[0].ports[2].name: Invalid value: "-Bad--": must not contain consecutive hyphens',
      'spec.containers[0].ports[2].name: Invalid value: "-Bad--": must not begin or end with a hyphen',
      'spec.containers[0].ports[2].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
      'spec.containers[0].ports[2].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
    ],
  );
  assert.deepEqual(
    one({
      ports: [
        { name: 'a-very-long-port-name', containerPort: 1 },
        { name: '123', containerPort: 2 },
      ],
    }).length,
    2,
  );
});

test('env and envFrom', () => {
  const errs = one({
    env: [
      { name: '1BAD' },
      { name: '..x' },
      { name: '.' },
      { name: '..' },
      {
        name: 'A',
        value: 'v',
        valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } },
      },
      { name: 'B', valueFrom: {} },
      {
        name: 'C',
        valueFrom: {
          configMapKeyRef: { name: 'cm', key: '' },
          secretKeyRef: { name: 's', key: 'k' },
        },
      },
      { name: 'D', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'E', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: '' } } },
      { name: 'F', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.labels' } } },
      {
        name: 'G',
        valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.labels['a b']" } },
      },
      {
        name: 'H',
        valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.annotations['X.io/y']" } },
      },
      { name: 'I', valueFrom: { resourceFieldRef: { resource: '' } } },
    ],
    envFrom: [
      { prefix: '1x', configMapRef: { name: '' } },
      {},
      { configMapRef: { name: 'a' }, secretRef: { name: 'b' } },
    ],
  });
  const fields = errs.map((e) => e.split(': ').slice(0, 2).join(': '));
  assert.deepEqual(fields, [
    'spec.containers[0].env[0].name: Invalid value',
    'spec.containers[0].env[1].name: Invalid value',
    'spec.containers[0].env[2].name: Invalid value',
    'spec.containers[0].env[3].name: Invalid value',
    'spec.containers[0].env[4].valueFrom: Invalid value',
    'spec.containers[0].env[5].valueFrom: Invalid value',
    'spec.containers[0].env[6].valueFrom: Invalid value',
    'spec.containers[0].env[6].valueFrom.configMapKeyRef.key: Required value',
    'spec.containers[0].env[7].valueFrom.fieldRef.apiVersion: Required value',
    'spec.containers[0].env[8].valueFrom.fieldRef.fieldPath: Required value',
    'spec.containers[0].env[9].valueFrom.fieldRef.fieldPath: Unsupported value',
    'spec.containers[0].env[10].valueFrom.fieldRef: Invalid value',
    'spec.containers[0].env[12].valueFrom.resourceFieldRef.resource: Required value',
    'spec.containers[0].envFrom[0].prefix: Invalid value',
    'spec.containers[0].envFrom[0].configMapRef.name: Required value',
    'spec.containers[0].envFrom[1]: Invalid value',
    'spec.containers[0].envFrom[2]: Invalid value',
  ]);
  assert.ok(errs[1]?.endsWith("must not start with '..'"));
  assert.ok(errs[4]?.endsWith('may not be specified when `value` is not empty'));
});

test('volumes', () => {
  const errs = run({
    containers: [c('a')],
    volumes: [
      { name: 'ok', emptyDir: {} },
      { name: 'ok', emptyDir: {} },
      { name: '', emptyDir: {} },
      { name: 'Bad', emptyDir: {} },
      { name: 'two', emptyDir: {}, hostPath: { path: '/x' } },
      { name: 'hp', hostPath: { path: '' } },
      { name: 'sec', secret: { secretName: '', defaultMode: 4095 } },
      { name: 'cm', configMap: { name: '' } },
      { name: 'pvc', persistentVolumeClaim: { claimName: '' } },
      {
        name: 'proj',
        projected: {
          sources: [
            {},
            { serviceAccountToken: { path: '', expirationSeconds: 60 }, secret: { name: 's' } },
            { serviceAccountToken: { path: 't', expirationSeconds: 2 ** 33 } },
          ],
        },
      },
    ],
  });
  assert.deepEqual(
    errs.map((e) => e.split(': ').slice(0, 2).join(': ')),
    [
      'spec.volumes[1].name: Duplicate value',
      'spec.volumes[2].name: Required value',
      'spec.volumes[3].name: Invalid value',
      'spec.volumes[4].hostPath: Forbidden',
      'spec.volumes[5].hostPath.path: Required value',
      'spec.volumes[6].secret.secretName: Required value',
      'spec.volumes[6].secret.defaultMode: Invalid value',
      'spec.volumes[7].configMap.name: Required value',
      'spec.volumes[8].persistentVolumeClaim.claimName: Required value',
      'spec.volumes[9].projected.sources[0]: Required value',
      'spec.volumes[9].projected.sources[1].secret: Forbidden',
      'spec.volumes[9].projected.sources[1].serviceAccountToken.path: Required value',
      'spec.volumes[9].projected.sources[1].serviceAccountToken.expirationSeconds: Invalid value',
      'spec.volumes[9].projected.sources[2].serviceAccountToken.expirationSeconds: Invalid value',
    ],
  );
});

test('volumeMounts and volumeDevices', () => {
  const vols: Volume[] = [
    { name: 'v', emptyDir: {} },
    { name: 'pvc', persistentVolumeClaim: { claimName: 'c' } },
    { name: 'pvc2', persistentVolumeClaim: { claimName: 'c' } },
  ];
  const errs = one(
    {
      securityContext: { privileged: false },
      volumeMounts: [
        { name: 'v', mountPath: '/a', subPath: '/abs/../x' },
        { name: 'missing', mountPath: '/a' },
        { name: '', mountPath: '', subPath: 'x', subPathExpr: '../$(X)' },
        { name: 'v', mountPath: '/b', mountPropagation: 'Bidirectional' },
        { name: 'v', mountPath: '/c', mountPropagation: 'HostToContainer' },
        { name: 'pvc2', mountPath: '/d', mountPropagation: 'None' },
      ],
      volumeDevices: [
        { name: 'v', devicePath: '/dev/a' },
        { name: 'pvc', devicePath: '/dev/../b' },
        { name: 'pvc', devicePath: '' },
        { name: '', devicePath: '/dev/a' },
        { name: 'pvc2', devicePath: '/d' },
      ],
    },
    vols,
  );
  assert.deepEqual(
    errs.map((e) => e.split(': ').slice(0, 2).join(': ')).sort(),
    [
      'spec.containers[0].volumeMounts[0].subPath: Invalid value',
      'spec.containers[0].volumeMounts[0].subPath: Invalid value',
      'spec.containers[0].volumeMounts[1].name: Not found',
      'spec.containers[0].volumeMounts[1].mountPath: Invalid value',
      'spec.containers[0].volumeMounts[2].name: Required value',
      'spec.containers[0].volumeMounts[2].mountPath: Required value',
      'spec.containers[0].volumeMounts[2].subPathExpr: Invalid value',
      'spec.containers[0].volumeMounts[2].subPathExpr: Invalid value',
      'spec.containers[0].volumeMounts[3].mountPropagation: Forbidden',
      'spec.containers[0].volumeMounts[5].mountPath: Invalid value',
      'spec.containers[0].volumeDevices[0].name: Invalid value',
      'spec.containers[0].volumeDevices[0].name: Invalid value',
      'spec.containers[0].volumeDevices[1].devicePath: Invalid value',
      'spec.containers[0].volumeDevices[2].name: Invalid value',
      'spec.containers[0].volumeDevices[2].devicePath: Required value',
      // The empty devicePath/name also collide with volumeMounts[2]'s empty mountPath/name.
      'spec.containers[0].volumeDevices[2].devicePath: Invalid value',
      'spec.containers[0].volumeDevices[3].name: Invalid value',
      'spec.containers[0].volumeMounts[2].mountPath: Invalid value',
      'spec.containers[0].volumeDevices[3].name: Required value',
      'spec.containers[0].volumeDevices[3].name: Not found',
      'spec.containers[0].volumeDevices[3].devicePath: Invalid value',
      'spec.containers[0].volumeDevices[4].name: Invalid value',
      'spec.containers[0].volumeDevices[4].devicePath: Invalid value',
    ].sort(),
  );
  assert.deepEqual(
    one(
      {
        securityContext: { privileged: true },
        volumeMounts: [{ name: 'v', mountPath: '/b', mountPropagation: 'Bidirectional' }],
      },
      vols,
    ),
    [],
  );
});

test('probes and lifecycle', () => {
  const errs = one({
    livenessProbe: {
      exec: { command: [] },
      httpGet: { port: 80 },
      initialDelaySeconds: -1,
      periodSeconds: 0,
      timeoutSeconds: -2,
      successThreshold: 2,
      terminationGracePeriodSeconds: 0,
    },
    readinessProbe: {
      httpGet: { port: 'http-x', scheme: 'HTTPS' },
      terminationGracePeriodSeconds: 5,
    },
    startupProbe: { tcpSocket: { port: '0' } },
    lifecycle: { preStop: { sleep: { seconds: -1 } }, postStart: { httpGet: { port: 'Bad' } } },
  });
  assert.deepEqual(
    errs.map((e) => e.split(': ').slice(0, 2).join(': ')).sort(),
    [
      'spec.containers[0].livenessProbe.httpGet: Forbidden',
      'spec.containers[0].livenessProbe.exec.command: Required value',
      'spec.containers[0].livenessProbe.initialDelaySeconds: Invalid value',
      'spec.containers[0].livenessProbe.timeoutSeconds: Invalid value',
      'spec.containers[0].livenessProbe.periodSeconds: Invalid value',
      'spec.containers[0].livenessProbe.successThreshold: Invalid value',
      'spec.containers[0].livenessProbe.terminationGracePeriodSeconds: Invalid value',
      'spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value',
      'spec.containers[0].startupProbe.tcpSocket.port: Required value',
      'spec.containers[0].lifecycle.postStart.httpGet.port: Invalid value',
      'spec.containers[0].lifecycle.preStop.sleep.seconds: Invalid value',
    ].sort(),
  );
  assert.deepEqual(
    one({
      livenessProbe: { grpc: { port: 70000 } },
      readinessProbe: { tcpSocket: { port: '8080' } },
      startupProbe: { exec: { command: ['x'] }, terminationGracePeriodSeconds: 3 },
    }).length,
    1,
  );
});

test('resources: non-negative, request at most limit', () => {
  assert.deepEqual(
    one({
      resources: {
        limits: { cpu: '500m', memory: 1000 },
        requests: { cpu: '1', memory: '-1', 'x/y': '2' },
      },
    }),
    [
      'spec.containers[0].resources.requests[memory]: Invalid value: "-1": must be greater than or equal to 0',
      'spec.containers[0].resources.requests[cpu]: Invalid value: "1": must be less than or equal to cpu limit of 500m',
    ],
  );
  assert.deepEqual(
    one({ resources: { limits: { memory: '1Gi' }, requests: { memory: 1e9 } } }),
    [],
  );
});
