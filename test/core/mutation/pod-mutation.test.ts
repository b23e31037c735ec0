import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';
import jsonPatch from 'fast-json-patch';
import { Pod as PodModel } from 'kubernetes-models/v1/Pod';

import type { Container, EnvVar, Pod, VolumeMount } from '../../../src/core/api/k8s-types.js';
import { minimalNamespaceLabels } from '../../../src/core/matching/match.js';
import type { InjectionSnapshot } from '../../../src/core/mutation/pod-mutation.js';
import { inactiveReason, mutatePod } from '../../../src/core/mutation/pod-mutation.js';
import { buildSidecarSetIndex } from '../../../src/core/matching/sidecarset-index.js';
import type { SidecarContainer, SidecarSet } from '../../../src/core/api/sidecarset-types.js';
import { FIXED_NOW, makePod, makeSidecarSet, sidecar } from '../../support/factories.js';

const env = { now: FIXED_NOW, random: () => 0.5 };

function snapshotOf(sets: SidecarSet[]): InjectionSnapshot {
  return {
    sidecarSets: buildSidecarSetIndex(sets),
    namespaces: new Map([['default', minimalNamespaceLabels('default')]]),
    revisions: () => [],
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** Throws with the schema's message when the pod is not a valid core/v1 Pod. */
function assertValidPod(pod: Pod): void {
  new PodModel(
    structuredClone(pod) as unknown as ConstructorParameters<typeof PodModel>[0],
  ).validate();
}

describe('mutatePod', () => {
  it('skips operations other than CREATE: UPDATE never re-injects', () => {
    const result = mutatePod(
      { operation: 'UPDATE', pod: makePod() },
      snapshotOf([makeSidecarSet('s')]),
      env,
    );
    assert.deepEqual(result, { kind: 'skipped', reason: 'operation UPDATE is not injected' });
  });

  it('skips finished and terminating pods', () => {
    const done = makePod();
    done.status = { phase: 'Succeeded' };
    const deleting = makePod();
    deleting.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    assert.match(inactiveReason(done) ?? '', /Succeeded/);
    assert.match(inactiveReason(deleting) ?? '', /deleted/);
    assert.equal(
      mutatePod({ operation: 'CREATE', pod: done }, snapshotOf([makeSidecarSet('s')]), env).kind,
      'skipped',
    );
    assert.equal(inactiveReason(makePod()), undefined);
  });

  it('skips pods no SidecarSet matches', () => {
    const pod = makePod({ labels: { app: 'other' } });
    assert.deepEqual(
      mutatePod({ operation: 'CREATE', pod }, snapshotOf([makeSidecarSet('s')]), env),
      {
        kind: 'skipped',
        reason: 'no SidecarSet matches the pod',
      },
    );
  });

  it('matches in the request namespace when the pod has none', () => {
    const pod = makePod();
    delete pod.metadata.namespace;
    const set = makeSidecarSet('s', { namespace: 'team-a' });
    const snapshot = snapshotOf([set]);
    assert.equal(
      mutatePod({ operation: 'CREATE', pod, namespace: 'team-a' }, snapshot, env).kind,
      'mutated',
    );
    assert.equal(mutatePod({ operation: 'CREATE', pod }, snapshot, env).kind, 'skipped');
  });

  it('returns the JSON patch from the original to the injected pod', () => {
    const pod = makePod();
    const result = mutatePod({ operation: 'CREATE', pod }, snapshotOf([makeSidecarSet('s')]), env);
    assert.equal(result.kind, 'mutated');
    assert.deepEqual(result.injected, ['s']);
    assert.ok(result.patch.some((op) => op.path === '/metadata/annotations'));
    assert.deepEqual(
      jsonPatch.applyPatch(structuredClone(pod), result.patch).newDocument,
      result.pod,
    );
  });
});

// ---- property tests ----

const APP_NAMES = ['app', 'web', 'proxy', 'log'] as const;
const SIDECAR_NAMES = ['proxy', 'log', 'agent', 'dns', 'istio'] as const;
const ENV_NAMES = ['TZ', 'A', 'B', 'POD_NAME'] as const;
const PATHS = ['/a', '/b', '/c', '/d', '/e'] as const;

// Pods and SidecarSets reach injection parsed from JSON or YAML: every object has the plain
// Object prototype (fast-check would also make null-prototype ones).
const envVar: fc.Arbitrary<EnvVar> = fc.record(
  {
    name: fc.constantFrom(...ENV_NAMES),
    value: fc.stringMatching(/^[a-z0-9]{0,6}$/),
  },
  { noNullPrototype: true },
);

const mounts = (volumes: readonly string[]): fc.Arbitrary<VolumeMount[]> =>
  fc.uniqueArray(
    fc.record(
      {
        name: fc.constantFrom(...volumes),
        mountPath: fc.constantFrom(...PATHS),
        subPathExpr: fc.constant('logs/$(POD_NAME)/$(TZ)'),
      },
      { requiredKeys: ['name', 'mountPath'], noNullPrototype: true },
    ),
    { selector: (m) => m.mountPath, maxLength: 3 },
  );

const appContainer = (name: string): fc.Arbitrary<Container> =>
  fc.record(
    {
      name: fc.constant(name),
      image: fc.constant(`${name}:1`),
      env: fc.array(envVar, { maxLength: 4 }),
      volumeMounts: mounts(['pv1', 'pv2', 'sv1']),
    },
    { noNullPrototype: true },
  );

const podArb: fc.Arbitrary<Pod> = fc
  .record({
    names: fc.uniqueArray(fc.constantFrom(...APP_NAMES), { minLength: 1, maxLength: 3 }),
    annotations: fc.option(fc.constantFrom({ meta: '{"app":5}' }, { meta: '' }, { other: 'x' }), {
      nil: undefined,
    }),
    secrets: fc.array(fc.constantFrom('s0', 's1', 's3'), { maxLength: 3 }),
    init: fc.boolean(),
  })
  .chain(({ names, annotations, secrets, init }) =>
    fc.tuple(...names.map(appContainer)).map((containers) => {
      const pod = makePod({ containers, ...(annotations ? { annotations } : {}) });
      pod.spec.volumes = [
        { name: 'pv1', emptyDir: {} },
        { name: 'pv2', emptyDir: {} },
        { name: 'sv1', hostPath: { path: '/pod' } },
      ];
      if (secrets.length > 0) pod.spec.imagePullSecrets = secrets.map((name) => ({ name }));
      if (init) pod.spec.initContainers = [{ name: 'setup', image: 'setup:1' }];
      return pod;
    }),
  );

const sidecarArb = (name: string, init: boolean): fc.Arbitrary<SidecarContainer> =>
  fc
    .record({
      before: fc.boolean(),
      share: fc.boolean(),
      shareDevices: fc.boolean(),
      native: fc.boolean(),
      own: fc.array(envVar, { maxLength: 2 }),
      mounts: mounts(['sv1', 'sv2']),
      transfer: fc.array(
        fc.record({
          sourceContainerName: fc.constantFrom(...APP_NAMES),
          envNames: fc.uniqueArray(fc.constantFrom(...ENV_NAMES), { maxLength: 2 }),
        }),
        { maxLength: 2 },
      ),
    })
    .map((g) =>
      sidecar(name, {
        podInjectPolicy: g.before ? 'BeforeAppContainer' : 'AfterAppContainer',
        shareVolumePolicy: { type: g.share ? 'enabled' : 'disabled' },
        ...(g.shareDevices ? { shareVolumeDevicePolicy: { type: 'enabled' } } : {}),
        ...(init && g.native ? { restartPolicy: 'Always' } : {}),
        ...(g.own.length > 0 ? { env: g.own } : {}),
        ...(g.mounts.length > 0 ? { volumeMounts: g.mounts } : {}),
        ...(g.transfer.length > 0 ? { transferEnv: g.transfer } : {}),
      }),
    );

const sidecarSetsArb: fc.Arbitrary<SidecarSet[]> = fc
  .uniqueArray(fc.constantFrom(...SIDECAR_NAMES), { minLength: 1, maxLength: 5 })
  .chain((names) =>
    fc.record({
      split: fc.integer({ min: 0, max: names.length }),
      containers: fc.tuple(...names.map((n) => sidecarArb(n, false))),
      inits: fc.tuple(sidecarArb('init-b', true), sidecarArb('init-a', true)),
      policy: fc.constantFrom('Retain', 'Overwrite', 'MergePatchJson'),
      secrets: fc.array(fc.constantFrom('s0', 's1', 's2'), { maxLength: 3 }),
    }),
  )
  .map(({ split, containers, inits, policy, secrets }) => {
    const volumes = [
      { name: 'sv1', emptyDir: {} },
      { name: 'sv2', emptyDir: { medium: 'Memory' } },
    ];
    const first = makeSidecarSet('first', {
      containers: containers.slice(0, split),
      initContainers: [inits[0]],
      volumes,
      imagePullSecrets: secrets.map((name) => ({ name })),
      patchPodMetadata: [{ annotations: { meta: '{"log":1}' }, patchPolicy: policy }],
    });
    const second = makeSidecarSet('second', {
      containers: containers.slice(split),
      initContainers: [inits[1]],
      volumes,
      patchPodMetadata: [
        { annotations: { meta: '{"proxy":{"on":true}}' }, patchPolicy: 'MergePatchJson' },
      ],
    });
    return [second, first];
  });

describe('mutatePod properties', () => {
  it('the patch turns the original into the injected pod, which is a valid Pod', () => {
    fc.assert(
      fc.property(podArb, sidecarSetsArb, (pod, sets) => {
        const result = mutatePod({ operation: 'CREATE', pod }, snapshotOf(sets), env);
        assert.equal(result.kind, 'mutated');
        const patched: unknown = jsonPatch.applyPatch(
          structuredClone(pod),
          result.patch,
          true,
          false,
        ).newDocument;
        assert.deepEqual(patched, result.pod);
        assertValidPod(result.pod);
      }),
      { numRuns: 300 },
    );
  });

  it('injecting an injected pod again yields an empty patch', () => {
    fc.assert(
      fc.property(podArb, sidecarSetsArb, (pod, sets) => {
        const snapshot = snapshotOf(sets);
        const first = mutatePod({ operation: 'CREATE', pod }, snapshot, env);
        assert.equal(first.kind, 'mutated');
        const later = { ...env, now: new Date(FIXED_NOW.getTime() + 60_000) };
        const second = mutatePod({ operation: 'CREATE', pod: first.pod }, snapshot, later);
        assert.equal(second.kind, 'mutated');
        assert.deepEqual(second.patch, []);
      }),
      { numRuns: 300 },
    );
  });

  it('never writes into the pod it is given, and shares only what it leaves alone', () => {
    fc.assert(
      fc.property(podArb, sidecarSetsArb, (pod, sets) => {
        const copy = structuredClone(pod);
        // A frozen object throws on any write (modules run in strict mode).
        const result = mutatePod(
          { operation: 'CREATE', pod: deepFreeze(pod) },
          snapshotOf(sets),
          env,
        );
        const fromCopy = mutatePod({ operation: 'CREATE', pod: copy }, snapshotOf(sets), env);
        assert.deepEqual(result, fromCopy);
        assert.deepEqual(pod, copy);
      }),
      { numRuns: 200 },
    );
  });

  it('never changes an app container', () => {
    fc.assert(
      fc.property(podArb, sidecarSetsArb, (pod, sets) => {
        const result = mutatePod({ operation: 'CREATE', pod }, snapshotOf(sets), env);
        assert.equal(result.kind, 'mutated');
        const sidecarNames = new Set(
          sets.flatMap((s) => (s.spec.containers ?? []).map((c) => c.name)),
        );
        for (const app of pod.spec.containers.filter((c) => !sidecarNames.has(c.name))) {
          assert.deepEqual(
            result.pod.spec.containers.find((c) => c.name === app.name),
            structuredClone(app),
          );
        }
      }),
      { numRuns: 200 },
    );
  });
});
