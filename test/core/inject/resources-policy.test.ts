import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Pod as PodModel } from 'kubernetes-models/v1/Pod';

import { SidecarSetError } from '../../../src/core/errors.js';
import type { InjectOptions } from '../../../src/core/inject/inject.js';
import { injectPod } from '../../../src/core/inject/inject.js';
import {
  aggregateResources,
  declaredContainerNames,
  evaluatePolicyExpression,
  targetContainers,
} from '../../../src/core/inject/resources-policy.js';
import type { JsonObject } from '../../../src/core/encoding/json.js';
import type { Container, Pod } from '../../../src/core/api/k8s-types.js';
import { formatQuantity, parseQuantity } from '../../../src/core/encoding/quantity.js';
import type { GoRegexp } from '../../../src/core/encoding/go-regexp.js';
import { compileGoRegexp } from '../../../src/core/encoding/go-regexp.js';
import type {
  ResourcesPolicy,
  SidecarContainer,
  SidecarSet,
} from '../../../src/core/api/sidecarset-types.js';
import { FIXED_NOW, makePod, makeSidecarSet, sidecar } from '../../support/factories.js';

const options: InjectOptions = { now: FIXED_NOW, random: () => 0.5, revisions: () => [] };

interface CpuMem {
  cpu?: string | number;
  memory?: string | number;
}

/** A container with the given limits and requests (undefined: the list is absent). */
function app(name: string, limits?: CpuMem, requests?: CpuMem, extra: Partial<Container> = {}) {
  const resources: JsonObject = {};
  if (limits !== undefined) resources['limits'] = { ...limits };
  if (requests !== undefined) resources['requests'] = { ...requests };
  return { name, image: 'nginx:1.14.2', resources, ...extra } satisfies Container;
}

const native = (c: Container): Container => ({ ...c, restartPolicy: 'Always' });

function goRegexp(pattern: string): GoRegexp {
  const compiled = compileGoRegexp(pattern);
  if ('error' in compiled) throw new Error(compiled.error);
  return compiled;
}

function policy(
  mode: string,
  regex: string | undefined,
  limits?: { cpu?: string; memory?: string },
  requests?: { cpu?: string; memory?: string },
): ResourcesPolicy {
  const p: ResourcesPolicy = { targetContainersMode: mode, resourcesExpr: {} };
  if (regex !== undefined) p.targetContainersNameRegex = regex;
  if (limits !== undefined) p.resourcesExpr = { ...p.resourcesExpr, limits };
  if (requests !== undefined) p.resourcesExpr = { ...p.resourcesExpr, requests };
  return p;
}

const sidecarWith = (name: string, resourcesPolicy: ResourcesPolicy): SidecarContainer =>
  sidecar(name, { image: 'sidecar:latest', resourcesPolicy });

function podOf(containers: Container[], initContainers?: Container[]): Pod {
  return initContainers === undefined
    ? makePod({ containers })
    : makePod({ containers, initContainers });
}

/** Injects one SidecarSet whose container `sidecar1` has the policy; returns the pod. */
function injectPolicy(pod: Pod, p: ResourcesPolicy, others: SidecarSet[] = []): Pod {
  const set = makeSidecarSet('ss-policy', { containers: [sidecarWith('sidecar1', p)] });
  return injectPod(pod, [set, ...others], options).pod;
}

const find = (pod: Pod, name: string): Container | undefined =>
  [...(pod.spec.initContainers ?? []), ...pod.spec.containers].find((c) => c.name === name);

const resourcesOf = (pod: Pod, name: string): JsonObject | undefined => find(pod, name)?.resources;

function assertValidPod(pod: Pod): void {
  new PodModel(pod as unknown as ConstructorParameters<typeof PodModel>[0]).validate();
}

function assertPolicyError(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof SidecarSetError);
    assert.equal(e.code, 'SI_ERR_RESOURCES_POLICY');
    assert.equal(e.statusCode, 500);
    assert.match(e.message, message);
    return true;
  });
}

const full = (cpuL: string, memL: string, cpuR: string, memR: string) =>
  [
    { cpu: cpuL, memory: memL },
    { cpu: cpuR, memory: memR },
  ] as const;

// TestApplyResourcesPolicy (pkg/webhook/pod/mutating/sidecarset_resources_test.go), end to end
// through the injection: the expected strings are upstream's Quantity.String() values.
describe('TestApplyResourcesPolicy', () => {
  const cases: {
    name: string;
    pod: Pod;
    policy: ResourcesPolicy;
    expected: JsonObject;
  }[] = [
    {
      name: 'sum mode with percentage - basic',
      pod: podOf([
        app('app1', ...full('200m', '200Mi', '50m', '100Mi')),
        app('app2', ...full('400m', '400Mi', '100m', '200Mi')),
      ]),
      policy: policy(
        'sum',
        '.*',
        { cpu: 'cpu*50%', memory: '200Mi' },
        { cpu: 'cpu*50%', memory: '100Mi' },
      ),
      expected: {
        limits: { cpu: '300m', memory: '200Mi' },
        requests: { cpu: '75m', memory: '100Mi' },
      },
    },
    {
      name: 'max mode with expression',
      pod: podOf([
        app('large.engine.v4', ...full('200m', '200Mi', '50m', '100Mi')),
        app('large.engine.v8', ...full('400m', '400Mi', '100m', '200Mi')),
      ]),
      policy: policy(
        'max',
        '^large.engine.v.*$',
        { cpu: 'max(cpu*50%, 50m)', memory: '200Mi' },
        { cpu: 'max(cpu*50%, 50m)', memory: '100Mi' },
      ),
      expected: {
        limits: { cpu: '200m', memory: '200Mi' },
        requests: { cpu: '50m', memory: '100Mi' },
      },
    },
    {
      name: 'regex filter - specific container',
      pod: podOf([
        app('large.engine.v4', ...full('200m', '200Mi', '50m', '100Mi')),
        app('large.engine.v8', ...full('400m', '400Mi', '100m', '200Mi')),
      ]),
      policy: policy(
        'sum',
        '^large.engine.v4$',
        { cpu: 'max(cpu*50%, 50m)', memory: '200Mi' },
        { cpu: 'max(cpu*50%, 50m)', memory: '100Mi' },
      ),
      expected: {
        limits: { cpu: '100m', memory: '200Mi' },
        requests: { cpu: '50m', memory: '100Mi' },
      },
    },
    {
      name: 'sum mode - one container without CPU limit (unlimited)',
      pod: podOf([
        app('app1', ...full('200m', '200Mi', '100m', '100Mi')),
        app('app2', { memory: '400Mi' }, { cpu: '50m', memory: '200Mi' }),
      ]),
      policy: policy(
        'sum',
        '.*',
        { cpu: 'cpu*50%', memory: 'memory*30%' },
        { cpu: 'cpu*30%', memory: 'memory*20%' },
      ),
      expected: { limits: { memory: '180Mi' }, requests: { cpu: '45m', memory: '60Mi' } },
    },
    {
      name: 'max mode - one container without Memory limit (unlimited)',
      pod: podOf([
        app('app1', ...full('200m', '200Mi', '100m', '100Mi')),
        app('app2', { cpu: '400m' }, { cpu: '200m' }),
      ]),
      policy: policy(
        'max',
        '.*',
        { cpu: 'cpu*40%', memory: 'memory*30%' },
        { cpu: 'cpu*25%', memory: 'memory*20%' },
      ),
      expected: { limits: { cpu: '160m' }, requests: { cpu: '50m', memory: '20Mi' } },
    },
    {
      name: 'sum mode - container without requests (treated as 0)',
      pod: podOf([
        app('app1', ...full('200m', '200Mi', '100m', '100Mi')),
        app('app2', { cpu: '400m', memory: '400Mi' }),
      ]),
      policy: policy(
        'sum',
        '.*',
        { cpu: 'cpu*50%', memory: 'memory*30%' },
        { cpu: 'cpu*30%', memory: 'memory*20%' },
      ),
      expected: {
        limits: { cpu: '300m', memory: '180Mi' },
        requests: { cpu: '30m', memory: '20Mi' },
      },
    },
    {
      name: 'native-sidecar init containers are targets, plain init containers are not',
      pod: podOf(
        [app('app2', ...full('600m', '1200Mi', '300m', '600Mi'))],
        [
          native(app('app1', ...full('400m', '800Mi', '200m', '400Mi'))),
          app('app2', ...full('400m', '800Mi', '200m', '400Mi')),
        ],
      ),
      policy: policy(
        'sum',
        '^app.*$',
        { cpu: 'max(cpu*30%, 50m)', memory: 'max(memory*25%, 100Mi)' },
        { cpu: 'cpu*20%', memory: 'memory*15%' },
      ),
      expected: {
        limits: { cpu: '300m', memory: '500Mi' },
        requests: { cpu: '100m', memory: '150Mi' },
      },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const out = injectPolicy(c.pod, c.policy);
      assert.deepEqual(resourcesOf(out, 'sidecar1'), c.expected);
      assertValidPod(out);
    });
  }

  it('no matching containers - should error', () => {
    const pod = podOf([app('app1', { cpu: '200m' })]);
    assertPolicyError(
      () => injectPolicy(pod, policy('sum', '^nonexistent$', { cpu: 'cpu*50%' })),
      /^SidecarSet ss-policy container sidecar1: resourcesPolicy: no containers match the regex pattern "\^nonexistent\$"$/,
    );
  });
});

describe('native-sidecar init container with resourcesPolicy', () => {
  it('gets computed resources, and both halves of a hot-upgrade pair too', () => {
    const p = policy('sum', '.*', { cpu: 'cpu' }, { memory: 'memory / 2' });
    const set = makeSidecarSet('ss', {
      initContainers: [{ ...sidecarWith('init-proxy', p), restartPolicy: 'Always' }],
      containers: [
        {
          ...sidecarWith('hot', p),
          upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' },
        },
      ],
    });
    const pod = podOf([app('main', { cpu: '1', memory: '1Gi' }, { memory: '1Gi' })]);
    const out = injectPod(pod, [set], options).pod;
    const expected = { limits: { cpu: '1' }, requests: { memory: '512Mi' } };
    assert.deepEqual(resourcesOf(out, 'init-proxy'), expected);
    assert.deepEqual(resourcesOf(out, 'hot-1'), expected);
    assert.deepEqual(resourcesOf(out, 'hot-2'), expected);
    assertValidPod(out);
  });
});

describe('targets', () => {
  const pod = podOf(
    [app('app1'), app('my-app-2'), app('sidecar1'), app('other-set')],
    [app('init-sidecar1'), app('plain-init'), native(app('native-app')), native(app('other-init'))],
  );
  const names = (cs: Container[]): string[] => cs.map((c) => c.name);
  const excluded = new Set(['init-sidecar1', 'sidecar1']);

  // TestGetTargetContainers
  it('takes native-sidecar inits then plain containers, leaving out SidecarSet names', () => {
    assert.deepEqual(names(targetContainers(pod, goRegexp('^.*$'), excluded)), [
      'native-app',
      'other-init',
      'app1',
      'my-app-2',
      'other-set',
    ]);
  });

  it('matches the regex unanchored, as Go MatchString', () => {
    assert.deepEqual(names(targetContainers(pod, goRegexp('app'), excluded)), [
      'native-app',
      'app1',
      'my-app-2',
    ]);
    assert.deepEqual(names(targetContainers(pod, goRegexp('^app'), excluded)), ['app1']);
  });

  it("takes Go's syntax: inline flags and POSIX classes, which JavaScript's RegExp refuses", () => {
    assert.deepEqual(names(targetContainers(pod, goRegexp('(?i)^APP'), excluded)), ['app1']);
    assert.deepEqual(names(targetContainers(pod, goRegexp('^[[:alpha:]]+$'), excluded)), []);
  });

  it(
    'matches in linear time: a pattern that backtracks for minutes in JavaScript',
    { timeout: 10_000 },
    () => {
      const trap = podOf([app(`${'a'.repeat(30)}!`), app('aaa')]);
      assert.deepEqual(names(targetContainers(trap, goRegexp('^(a+)+$'), new Set())), ['aaa']);
    },
  );

  it('leaves out the containers and initContainers of every SidecarSet injected', () => {
    const other = makeSidecarSet('ss-other', {
      initContainers: [{ ...sidecar('other-init'), restartPolicy: 'Always' }],
      containers: [sidecar('other-set')],
    });
    const p = policy('sum', '.*', { cpu: 'cpu' });
    const limited = podOf(
      [app('app', { cpu: '100m' }), app('other-set', { cpu: '7' })],
      [native(app('other-init', { cpu: '9' }))],
    );
    assert.deepEqual(resourcesOf(injectPolicy(limited, p, [other]), 'sidecar1'), {
      limits: { cpu: '100m' },
    });
    // Without the other SidecarSet those two are app containers like any other.
    assert.deepEqual(resourcesOf(injectPolicy(limited, p), 'sidecar1'), {
      limits: { cpu: '16100m' },
    });
  });

  it('declaredContainerNames: declared names only, no hot-upgrade -1/-2 names (as upstream)', () => {
    const hot = makeSidecarSet('h', {
      initContainers: [sidecar('i')],
      containers: [sidecar('c', { upgradeStrategy: { upgradeType: 'HotUpgrade' } })],
    });
    assert.deepEqual([...declaredContainerNames([hot, makeSidecarSet('s')])], ['i', 'c', 's-c']);
  });

  it('defaults the regex to everything', () => {
    const p = policy('max', undefined, { cpu: 'cpu' });
    const out = injectPolicy(podOf([app('a', { cpu: '1' }), app('b', { cpu: '2' })]), p);
    assert.deepEqual(resourcesOf(out, 'sidecar1'), { limits: { cpu: '2' } });
  });

  const failing: [string, Pod, ResourcesPolicy, RegExp][] = [
    [
      'only SidecarSet containers',
      podOf([app('sidecar1', { cpu: '1' })]),
      policy('sum', '.*', { cpu: 'cpu' }),
      /no containers match the regex pattern "\.\*"/,
    ],
    [
      'only a plain init container matches',
      podOf([app('app')], [app('init-x', { cpu: '1' })]),
      policy('sum', 'init', { cpu: 'cpu' }),
      /no containers match the regex pattern "init"/,
    ],
    [
      'an invalid regex',
      podOf([app('app')]),
      policy('sum', '(app', { cpu: 'cpu' }),
      /invalid regex pattern "\(app": error parsing regexp: missing closing \)/,
    ],
  ];
  for (const [name, p, pol, re] of failing) {
    it(`rejects the pod: ${name}`, () => {
      assertPolicyError(() => injectPolicy(p, pol), re);
    });
  }
});

const fmt = (q: Parameters<typeof formatQuantity>[0] | undefined): string | undefined =>
  q === undefined ? undefined : formatQuantity(q);

function aggregated(containers: Container[], mode: string) {
  const a = aggregateResources(containers, mode);
  return {
    limits: { cpu: fmt(a.limits.cpu), memory: fmt(a.limits.memory) },
    requests: { cpu: fmt(a.requests.cpu), memory: fmt(a.requests.memory) },
  };
}

// TestAggregateResourcesBySum / TestAggregateResourcesByMax; undefined = not in the map.
describe('aggregation', () => {
  const both = [
    app('app1', ...full('200m', '200Mi', '50m', '100Mi')),
    app('app2', ...full('400m', '400Mi', '100m', '200Mi')),
  ];
  const noCpuLimit = [
    app('app1', ...full('200m', '200Mi', '50m', '100Mi')),
    app('app2', { memory: '400Mi' }, { cpu: '100m', memory: '200Mi' }),
  ];
  const noRequests = [
    app('app1', ...full('200m', '200Mi', '50m', '100Mi')),
    app('app2', { cpu: '400m', memory: '400Mi' }),
  ];
  const cases: [string, Container[], string, ReturnType<typeof aggregated>][] = [
    [
      'sum: all containers have limits',
      both,
      'sum',
      { limits: { cpu: '600m', memory: '600Mi' }, requests: { cpu: '150m', memory: '300Mi' } },
    ],
    [
      'sum: one container without CPU limit is unlimited',
      noCpuLimit,
      'sum',
      { limits: { cpu: undefined, memory: '600Mi' }, requests: { cpu: '150m', memory: '300Mi' } },
    ],
    [
      'sum: missing requests count as 0',
      noRequests,
      'sum',
      { limits: { cpu: '600m', memory: '600Mi' }, requests: { cpu: '50m', memory: '100Mi' } },
    ],
    [
      'max: all containers have limits',
      both,
      'max',
      { limits: { cpu: '400m', memory: '400Mi' }, requests: { cpu: '100m', memory: '200Mi' } },
    ],
    [
      'max: one container without Memory limit is unlimited',
      [
        app('app1', ...full('200m', '200Mi', '50m', '100Mi')),
        app('app2', { cpu: '400m' }, { cpu: '100m' }),
      ],
      'max',
      { limits: { cpu: '400m', memory: undefined }, requests: { cpu: '100m', memory: '100Mi' } },
    ],
    [
      'max: one container without CPU limit is unlimited',
      noCpuLimit,
      'max',
      { limits: { cpu: undefined, memory: '400Mi' }, requests: { cpu: '100m', memory: '200Mi' } },
    ],
    [
      'max: missing requests count as 0',
      [
        app('app1', ...full('200m', '200Mi', '50m', '100Mi')),
        app('app2', { cpu: '100m', memory: '150Mi' }),
      ],
      'max',
      { limits: { cpu: '200m', memory: '200Mi' }, requests: { cpu: '50m', memory: '100Mi' } },
    ],
    [
      'sum: formats follow Go (1 + 500m, 1Gi + 512Mi, YAML numbers)',
      [
        app('a', { cpu: '1', memory: '1Gi' }),
        app('b', { cpu: '500m', memory: '512Mi' }, { cpu: 2 }),
      ],
      'sum',
      {
        limits: { cpu: '1500m', memory: '1536Mi' },
        requests: { cpu: '2', memory: undefined },
      },
    ],
    [
      'sum: a zero sum of requests is left out; a null quantity reads as 0',
      [app('a', {}, { cpu: '0' }), app('b', {}, { cpu: null as unknown as string })],
      'sum',
      {
        limits: { cpu: undefined, memory: undefined },
        requests: { cpu: undefined, memory: undefined },
      },
    ],
    [
      'max: the first of equal values is kept, with its text',
      [app('a', { memory: '1073741824' }), app('b', { memory: '1Gi' })],
      'max',
      {
        limits: { cpu: undefined, memory: '1073741824' },
        requests: { cpu: undefined, memory: undefined },
      },
    ],
    [
      'an unknown mode aggregates nothing',
      both,
      'avg',
      {
        limits: { cpu: undefined, memory: undefined },
        requests: { cpu: undefined, memory: undefined },
      },
    ],
  ];
  for (const [name, containers, mode, expected] of cases) {
    it(name, () => {
      assert.deepEqual(aggregated(containers, mode), expected);
    });
  }

  it('rejects a resource value that is not a quantity', () => {
    const bad = app('x', { cpu: {} as unknown as string });
    assert.throws(() => aggregateResources([bad], 'sum'), {
      code: 'SI_ERR_BAD_INPUT',
      message: /container x: resources.limits.cpu is not a quantity/,
    });
    assert.throws(() => aggregateResources([app('y', { cpu: 'lots' })], 'sum'), {
      code: 'SI_ERR_BAD_INPUT',
    });
  });
});

// TestEvaluateResourceExpression, plus the arithmetic and formatting corners of the calculator.
describe('expression evaluation (Go Quantity arithmetic and format)', () => {
  const cases: [string, string, string][] = [
    // [expression, aggregate, result]
    ['cpu*50%', '200m', '100m'],
    ['memory*30%', '600Mi', '180Mi'],
    ['max(cpu*50%, 100m)', '150m', '100m'],
    ['max(cpu*50%, 100m)', '400m', '200m'],
    ['cpu + 50m', '100m', '150m'],
    ['max(memory*20% + 100Mi, 200Mi)', '800Mi', '260Mi'],
    ['500m', '100m', '500m'],
    ['1Gi', '500Mi', '1Gi'],
    ['cpu*50%', '0', '0'],
    ['memory*25%', '400Mi', '100Mi'],
    ['1', '2', '1'],
    ['1', '2Mi', '1'],
    // Formats: millicores, whole units, binary suffixes, and the fractional-byte milli form.
    ['cpu * 2', '1', '2'],
    ['cpu / 3', '1', '333m'],
    ['cpu * 1.5', '1', '1500m'],
    ['memory / 3', '1Gi', '357913941333m'],
    ['memory * 30%', '1Gi', '322122547200m'],
    ['memory * 2', '1Gi', '2Gi'],
    ['memory', '1000Mi', '1000Mi'],
    ['memory - 24Mi', '1Gi', '1000Mi'],
    ['cpu', '1000m', '1'],
    // A plain number meets a quantity as truncated millicores; a number result is millicores.
    ['0.5', '1', '500m'],
    ['0.0005 + cpu', '1', '1'],
    ['2 * 3 / 4', '1', '1500m'],
    ['cpu + 1', '250m', '1250m'],
    ['1 + cpu', '250m', '1250m'],
    ['2 - cpu', '250m', '1750m'],
    ['-cpu + 1', '250m', '750m'],
    ['-(-1)', '1', '1'],
    ['max(cpu, 1)', '250m', '1'],
    ['max(1, cpu)', '2', '2'],
    ['min(cpu, 1)', '250m', '250m'],
    ['min(1, cpu)', '250m', '250m'],
    ['min(1, 2)', '0', '1'],
    ['max(1, 2)', '0', '2'],
    ['min(cpu, 2Gi)', '1', '1'],
    // The left operand's format wins, unless the left is zero.
    ['memory + 1Mi', '0', '1Mi'],
    ['cpu * 0', '2', '0'],
    ['CPU * 2', '1', '2'],
  ];
  for (const [expr, aggregate, expected] of cases) {
    it(`${expr} with ${aggregate} → ${expected}`, () => {
      assert.equal(
        formatQuantity(evaluatePolicyExpression(expr, parseQuantity(aggregate))),
        expected,
      );
    });
  }

  const errors: [string, string, RegExp][] = [
    ['cpu * invalid', '100m', /unknown variable: invalid/],
    ['cpu - 1', '500m', /calculation result is negative: -500m/],
    ['1 - 2', '1', /calculation result is negative: -1/],
    ['cpu * cpu', '1', /multiplication of two quantities/],
    ['cpu / cpu', '1', /division by quantity/],
    ['cpu / 0', '1', /division by zero/],
    ['4 / 0', '1', /division by zero/],
    ['1e3m', '1', /invalid quantity: 1e3m/],
    ['1.5.5m', '1', /invalid quantity|syntax error/],
    // Go's int64(+Inf) is undefined (MinInt64 on amd64): a garbage result there, an error here.
    ['cpu * 1e300 * 1e300', '1', /value out of range/],
    ['1e300 * 1e300', '1', /value out of range/],
  ];
  for (const [expr, aggregate, re] of errors) {
    it(`fails: ${expr}`, () => {
      assert.throws(() => evaluatePolicyExpression(expr, parseQuantity(aggregate)), re);
    });
  }

  it('the error at injection names the SidecarSet, the container and the expression', () => {
    const pod = podOf([app('app', { cpu: '500m' })]);
    assertPolicyError(
      () => injectPolicy(pod, policy('sum', '.*', { cpu: 'cpu - 1' })),
      /^SidecarSet ss-policy container sidecar1: resourcesPolicy: failed to evaluate CPU limits expression "cpu - 1": calculation result is negative: -500m$/,
    );
    assertPolicyError(
      () => injectPolicy(pod, policy('sum', '.*', undefined, { memory: 'memory / 0' })),
      /failed to evaluate memory requests expression "memory \/ 0": division by zero/,
    );
  });
});

describe('what the sidecar ends up with', () => {
  it('replaces resources; an unlimited aggregate leaves the limit unset despite its expression', () => {
    const set = makeSidecarSet('ss', {
      containers: [
        {
          ...sidecarWith('sidecar1', policy('sum', '.*', { cpu: 'cpu', memory: 'memory' })),
          resources: { claims: [{ name: 'gpu' }] },
        },
      ],
    });
    const out = injectPod(podOf([app('app', { cpu: '1' })]), [set], options).pod;
    assert.deepEqual(resourcesOf(out, 'sidecar1'), { limits: { cpu: '1' } });
  });

  it('no resources at all when nothing is computed', () => {
    const set = makeSidecarSet('ss', {
      containers: [
        {
          ...sidecarWith('sidecar1', policy('sum', '.*', { cpu: 'cpu' }, { cpu: '', memory: '' })),
          resources: { claims: [{ name: 'gpu' }] },
        },
      ],
    });
    const out = injectPod(podOf([app('app', {}, { cpu: '1' })]), [set], options).pod;
    assert.equal(find(out, 'sidecar1')?.resources, undefined);
    assertValidPod(out);
  });

  it('a missing request counts as 0: the expression still runs on zero', () => {
    const out = injectPolicy(
      podOf([app('app', { memory: '1Gi' })]),
      policy('sum', '.*', undefined, { cpu: 'max(cpu, 10m)', memory: 'memory + 64Mi' }),
    );
    assert.deepEqual(resourcesOf(out, 'sidecar1'), {
      requests: { cpu: '10m', memory: '64Mi' },
    });
  });

  it('an unknown mode: limits unset, requests computed on zero', () => {
    const out = injectPolicy(
      podOf([app('app', { cpu: '1' }, { cpu: '1' })]),
      policy('avg', '.*', { cpu: 'cpu' }, { cpu: 'cpu + 100m' }),
    );
    assert.deepEqual(resourcesOf(out, 'sidecar1'), { requests: { cpu: '100m' } });
  });

  it('a sidecar without resourcesPolicy keeps its own resources', () => {
    const set = makeSidecarSet('ss', {
      containers: [sidecar('plain', { resources: { limits: { cpu: '1' } } })],
    });
    const out = injectPod(podOf([app('app')]), [set], options).pod;
    assert.deepEqual(resourcesOf(out, 'plain'), { limits: { cpu: '1' } });
  });
});
