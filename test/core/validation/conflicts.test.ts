import { test } from 'node:test';
import assert from 'node:assert/strict';

import fc from 'fast-check';
import type { LabelSelector } from '../../../src/core/api/k8s-types.js';
import type { SidecarSet } from '../../../src/core/api/sidecarset-types.js';
import { formatFieldError, formatFieldErrors } from '../../../src/core/validation/field-error.js';
import { validateSidecarSet } from '../../../src/core/validation/sidecarset.js';
import {
  sidecarSetsOverlap,
  validateCrossSidecarSetConflicts,
} from '../../../src/core/validation/sidecarset-conflicts.js';
import { simpleCrossSidecarSetConflicts } from '../../support/simple-conflicts.js';
import { initSidecar, makeSidecarSet, sidecar } from './fixtures.js';

const hostPath = (path: string): object => ({ path, type: '' });

test('TestSidecarSetNameConflict', () => {
  // test1: same selector; same container, init container and (identical) volume names → 2.
  const mk = (name: string): SidecarSet =>
    makeSidecarSet(name, {
      initContainers: [initSidecar('init-1')],
      containers: [sidecar('dns-f', { volumeMounts: [{ name: 'v', mountPath: '/v' }] })],
      volumes: [{ name: 'v', hostPath: hostPath('/a') }],
    });
  const a = mk('sidecarset1');
  const b = mk('sidecarset2');
  assert.equal(
    formatFieldErrors(validateSidecarSet(a, { others: [a, b] })),
    '[spec.containers: Invalid value: "init-1": container init-1 already exist in sidecarset2, spec.containers: Invalid value: "dns-f": container dns-f already exist in sidecarset2]',
  );
  // test2: equal namespaceSelectors and the same container name → 1.
  const ns = { matchLabels: { app: 'nginx' } };
  const c = makeSidecarSet('c', { namespaceSelector: ns });
  const d = makeSidecarSet('d', { namespaceSelector: ns });
  assert.equal(validateSidecarSet(c, { others: [d] }).length, 1);
  // test3: disjoint namespaceSelectors → 0.
  const e = makeSidecarSet('e', { namespaceSelector: { matchLabels: { app: 'redis' } } });
  assert.equal(validateSidecarSet(c, { others: [e] }).length, 0);
  // Init container vs container names are not cross-checked.
  const f = makeSidecarSet('f', { containers: [], initContainers: [initSidecar('sidecar1')] });
  assert.equal(validateSidecarSet(c, { others: [f] }).length, 0);
});

test('overlap: spec.namespace acts as a namespaceSelector on the name label', () => {
  const inNs = (name: string, ns: string): SidecarSet => makeSidecarSet(name, { namespace: ns });
  assert.equal(sidecarSetsOverlap(inNs('a', 'x'), inNs('b', 'y')), false);
  assert.equal(sidecarSetsOverlap(inNs('a', 'x'), inNs('b', 'x')), true);
  const sel = makeSidecarSet('c', {
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'y' } },
  });
  assert.equal(sidecarSetsOverlap(inNs('a', 'x'), sel), false);
  assert.equal(
    sidecarSetsOverlap(inNs('a', 'x'), makeSidecarSet('d')),
    true,
    'nil = all namespaces',
  );
  const other = makeSidecarSet('e', { selector: { matchLabels: { app: 'redis' } } });
  assert.equal(sidecarSetsOverlap(makeSidecarSet('f'), other), false);
  const noSelector = makeSidecarSet('g');
  delete noSelector.spec.selector;
  assert.equal(sidecarSetsOverlap(makeSidecarSet('h'), noSelector), true);
});

test('TestSidecarSetPodMetadataConflict', () => {
  const withPatch = (
    name: string,
    container: string,
    patchPolicy: string,
    key: string,
  ): SidecarSet =>
    makeSidecarSet(name, {
      containers: [sidecar(container)],
      patchPodMetadata: [{ annotations: { [key]: '{}' }, patchPolicy }],
    });
  const check = (a: SidecarSet, b: SidecarSet): string[] =>
    validateSidecarSet(a, { others: [b] }).map(formatFieldError);
  assert.deepEqual(
    check(withPatch('a', 'c1', 'Overwrite', 'k'), withPatch('b', 'c2', 'MergePatchJson', 'k')),
    ['spec.patchPodMetadata: Invalid value: "k": annotation k is in conflict with sidecarset b'],
  );
  assert.equal(
    check(withPatch('a', 'c1', 'MergePatchJson', 'k'), withPatch('b', 'c2', 'Overwrite', 'k'))
      .length,
    1,
  );
  assert.deepEqual(
    check(withPatch('a', 'c1', 'Overwrite', 'k'), withPatch('b', 'c2', 'Overwrite', 'j')),
    [],
  );
  assert.deepEqual(
    check(withPatch('a', 'c1', 'MergePatchJson', 'k'), withPatch('b', 'c2', 'MergePatchJson', 'k')),
    [],
  );
  assert.deepEqual(
    check(withPatch('a', 'c1', 'Retain', 'k'), withPatch('b', 'c2', 'Overwrite', 'k')),
    [],
  );
  assert.deepEqual(
    check(withPatch('a', 'c1', 'Overwrite', 'k'), withPatch('b', 'c2', 'Retain', 'k')),
    [],
  );
});

test('TestSidecarSetVolumeConflict', () => {
  const withVol = (name: string, container: string, vol: string, path: string): SidecarSet =>
    makeSidecarSet(name, {
      containers: [sidecar(container, { volumeMounts: [{ name: vol, mountPath: '/m' }] })],
      volumes: [{ name: vol, hostPath: hostPath(path) }],
    });
  const check = (a: SidecarSet, b: SidecarSet): string[] =>
    validateSidecarSet(a, { others: [b] }).map(formatFieldError);
  assert.deepEqual(check(withVol('a', 'c1', 'v1', '/a'), withVol('b', 'c2', 'v2', '/b')), []);
  assert.deepEqual(check(withVol('a', 'c1', 'v1', '/a'), withVol('b', 'c2', 'v1', '/a')), []);
  assert.deepEqual(check(withVol('a', 'c1', 'v1', '/a'), withVol('b', 'c2', 'v1', '/b')), [
    'spec.volumes: Invalid value: "v1": volume v1 is in conflict with sidecarset b',
  ]);
});

test('conflicts are only checked when everything else passed', () => {
  const a = makeSidecarSet('a', { revisionHistoryLimit: 10 });
  delete a.spec.selector;
  const b = makeSidecarSet('b');
  assert.equal(validateSidecarSet(a, { others: [b] }).length, 1);
});

test('TestValidateSidecarSetCanaryAnnotations', () => {
  const canary = (name: string, base: string, type = 'NotUpdate'): SidecarSet => {
    const s = makeSidecarSet(name, { updateStrategy: { type } });
    s.metadata.annotations = {
      'apps.kruise.io/sidecarset-canary': 'true',
      'apps.kruise.io/sidecarset-base': base,
    };
    return s;
  };
  const base = makeSidecarSet('base');
  const details = (s: SidecarSet, others: SidecarSet[], old?: SidecarSet): string[] =>
    validateSidecarSet(s, old === undefined ? { others } : { others, old }).map((e) => e.detail);
  assert.deepEqual(details(makeSidecarSet('plain'), []), []);
  assert.deepEqual(details(canary('me', 'me'), []), [
    'base sidecarSet cannot be itself',
    'base sidecarSet cannot be canary',
  ]);
  // The base has the same container name; conflict detection ignores it.
  assert.deepEqual(details(canary('c', 'base'), [base]), []);
  assert.deepEqual(details(canary('c', 'base'), [canary('base', 'other')]), [
    'base sidecarSet cannot be canary',
  ]);
  assert.deepEqual(details(canary('c', 'nonexistent-sidecarset'), [base]), [
    'fetch base sidecarSet[nonexistent-sidecarset] failed: sidecarsets.apps.kruise.io "nonexistent-sidecarset" not found',
  ]);
  assert.deepEqual(details(canary('c', 'base'), [base], canary('c', 'base')), []);
  assert.deepEqual(details(canary('c', 'base2'), [makeSidecarSet('base2')], canary('c', 'base')), [
    'annotations[apps.kruise.io/sidecarset-base] is immutable',
  ]);
  assert.deepEqual(details(canary('c', 'base', 'RollingUpdate'), [base]), [
    'RollingUpdate is not supported for canary sidecarSet',
  ]);
  assert.equal(
    formatFieldError(
      validateSidecarSet(canary('c', 'base', 'RollingUpdate'), { others: [base] })[0] ?? {
        type: 'Required',
        field: '',
        detail: '',
      },
    ),
    'metadata: Invalid value: {"apps.kruise.io/sidecarset-base":"base","apps.kruise.io/sidecarset-canary":"true"}: RollingUpdate is not supported for canary sidecarSet',
  );
});

/** SidecarSets drawn from small pools of names, so that conflicts and overlaps are common. */
const arbitrarySidecarSet = fc
  .record({
    name: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
    containers: fc.uniqueArray(fc.constantFrom('c1', 'c2', 'c3')),
    initContainers: fc.uniqueArray(fc.constantFrom('c1', 'i1', 'i2')),
    volumes: fc.array(
      fc.record({ name: fc.constantFrom('v1', 'v2'), path: fc.constantFrom('/a', '/b') }),
      { maxLength: 3 },
    ),
    patches: fc.array(
      fc.record({
        keys: fc.uniqueArray(fc.constantFrom('k1', 'k2', 'k3')),
        policy: fc.constantFrom('Retain', 'Overwrite', 'MergePatchJson', undefined),
      }),
      { maxLength: 2 },
    ),
    // First labels that the index groups by, and expressions that widen or narrow what they allow.
    selector: fc.constantFrom<LabelSelector>(
      {},
      { matchLabels: { app: 'web' } },
      { matchLabels: { app: 'db' } },
      { matchLabels: { app: 'web', tier: 'front' } },
      { matchLabels: { tier: 'front', app: 'db' } },
      { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'db'] }] },
      { matchExpressions: [{ key: 'app', operator: 'Exists' }] },
      {
        matchLabels: { app: 'web' },
        matchExpressions: [{ key: 'app', operator: 'In', values: ['db'] }],
      },
      { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['web'] }] },
    ),
    namespace: fc.constantFrom('x', 'y', undefined),
    canaryOf: fc.constantFrom('a', 'b', undefined),
  })
  .map((r): SidecarSet => {
    const ss = makeSidecarSet(r.name, {
      selector: r.selector,
      containers: r.containers.map((c) => sidecar(c)),
      initContainers: r.initContainers.map((c) => initSidecar(c)),
      volumes: r.volumes.map((v) => ({ name: v.name, hostPath: hostPath(v.path) })),
      patchPodMetadata: r.patches.map((p) => ({
        annotations: Object.fromEntries(p.keys.map((k) => [k, '{}'])),
        ...(p.policy === undefined ? {} : { patchPolicy: p.policy }),
      })),
      ...(r.namespace === undefined ? {} : { namespace: r.namespace }),
    });
    if (r.canaryOf !== undefined) {
      ss.metadata.annotations = {
        'apps.kruise.io/sidecarset-canary': 'true',
        'apps.kruise.io/sidecarset-base': r.canaryOf,
      };
    }
    return ss;
  });

test('the indexed conflict check finds exactly what comparing with every other finds', () => {
  fc.assert(
    fc.property(
      fc.array(arbitrarySidecarSet, { maxLength: 12 }),
      arbitrarySidecarSet,
      (all, extra) => {
        for (const ss of [...all, extra]) {
          assert.deepEqual(
            validateCrossSidecarSetConflicts(ss, all),
            simpleCrossSidecarSetConflicts(ss, all),
          );
        }
      },
    ),
    { numRuns: 2000 },
  );
});

test('the conflict index follows a new array of SidecarSets', () => {
  const a = makeSidecarSet('a');
  const b = makeSidecarSet('b');
  const c = makeSidecarSet('c', { containers: [sidecar('other')] });
  assert.equal(validateCrossSidecarSetConflicts(a, [a, c]).length, 0);
  assert.equal(validateCrossSidecarSetConflicts(a, [a, b]).length, 1);
  const growing = [a, c];
  assert.equal(validateCrossSidecarSetConflicts(a, growing).length, 0);
  growing.push(b);
  assert.equal(validateCrossSidecarSetConflicts(a, growing).length, 1);
});

/**
 * The SidecarSets as the conflict check sees them, each counting how often its pod selector is
 * read: every selector comparison reads both selectors, so the count bounds the comparisons.
 */
function countingSelectorReads(sets: readonly SidecarSet[]): {
  all: SidecarSet[];
  reads: () => number;
} {
  let reads = 0;
  const all = sets.map((ss) => ({
    ...ss,
    spec: new Proxy(ss.spec, {
      get(target, key, receiver): unknown {
        if (key === 'selector') reads++;
        return Reflect.get(target, key, receiver) as unknown;
      },
    }),
  }));
  return { all, reads: () => reads };
}

test('SidecarSets sharing a volume are compared a number of times linear in their count', () => {
  const n = 2000;
  const shared = (name: string, app: string, path: string): SidecarSet =>
    makeSidecarSet(name, {
      selector: { matchLabels: { app } },
      containers: [sidecar(`agent-${name}`)],
      volumes: [{ name: 'logs', hostPath: hostPath(path) }],
    });
  const scenarios: [string, (i: number) => SidecarSet, number][] = [
    // One app each, each its own directory: no two can select the same pod.
    ['disjoint selectors', (i) => shared(`s${i}`, `app-${i}`, `/logs/${i}`), 0],
    // One app for all, the same volume: sharing it is no conflict.
    ['one selector, the same volume', (i) => shared(`s${i}`, 'web', '/logs'), 0],
    // One app for all, a directory each: every one conflicts with the last (the last, with the one before).
    ['one selector, different volumes', (i) => shared(`s${i}`, 'web', `/logs/${i}`), n],
    // A selector each, all overlapping, the same volume.
    [
      'overlapping selectors, the same volume',
      (i) => ({
        ...shared(`s${i}`, 'web', '/logs'),
        spec: {
          ...shared(`s${i}`, 'web', '/logs').spec,
          selector: {
            matchLabels: { app: 'web' },
            matchExpressions: [{ key: 'team', operator: 'NotIn', values: [`t${i}`] }],
          },
        },
      }),
      0,
    ],
  ];
  for (const [what, make, conflicts] of scenarios) {
    const { all, reads } = countingSelectorReads(Array.from({ length: n }, (_, i) => make(i)));
    let found = 0;
    for (const ss of all) found += validateCrossSidecarSetConflicts(ss, all).length;
    assert.equal(found, conflicts, what);
    assert.ok(reads() <= 10 * n, `${what}: ${reads()} selector reads for ${n} SidecarSets`);
  }
});
