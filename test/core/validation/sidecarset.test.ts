import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prepareSidecarSets } from '../../../src/core/validation/sidecarsets-from-files.js';
import type { SidecarSet, SidecarSetRevision } from '../../../src/core/api/sidecarset-types.js';
import type { ValidationContext } from '../../../src/core/validation/sidecarset.js';
import { formatFieldError, formatFieldErrors } from '../../../src/core/validation/field-error.js';
import { validateSidecarSet } from '../../../src/core/validation/sidecarset.js';
import { validateSidecarSetSchema } from '../../../src/core/validation/schema-check.js';
import {
  initSidecar,
  makeSidecarSet,
  RESOURCES_POLICY_WITHOUT_REGEX,
  sidecar,
} from './fixtures.js';

const revisions: SidecarSetRevision[] = [
  {
    name: 'test-sidecarset-rev1',
    sidecarSetName: 'test-sidecarset',
    revision: 1,
    customVersion: 'v1',
    spec: {},
  },
];
const ctx: ValidationContext = { others: [], revisions };

function ss(mut: (s: SidecarSet) => void): SidecarSet {
  const s = makeSidecarSet('test-sidecarset');
  mut(s);
  return s;
}

const policy = {
  targetContainersMode: 'sum',
  targetContainersNameRegex: '.*',
  resourcesExpr: { limits: { cpu: 'cpu*50%' } },
};

// TestValidateSidecarSet (OpenKruise pkg/webhook/sidecarset/validating/sidecarset_validating_test.go), same error counts unless noted.
const table: [string, SidecarSet, number][] = [
  [
    'missing-selector',
    ss((s) => {
      delete s.spec.selector;
    }),
    1,
  ],
  [
    'wrong-updateStrategy',
    ss((s) => {
      s.spec.updateStrategy = {
        type: 'RollingUpdate',
        scatterStrategy: [
          { key: 'k', value: 'v' },
          { key: 'k', value: 'v' },
        ],
      };
    }),
    1,
  ],
  [
    'wrong-selector',
    ss((s) => {
      s.spec.selector = {
        matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['app-risk-'] }],
      };
    }),
    2,
  ],
  [
    'wrong-namespaceSelector',
    ss((s) => {
      s.spec.namespaceSelector = {
        matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['app-risk-'] }],
      };
    }),
    2,
  ],
  [
    'wrong-namespace-selector (valid a=b)',
    ss((s) => {
      s.spec.namespaceSelector = { matchLabels: { a: 'b' } };
    }),
    0,
  ],
  [
    'wrong-initContainer',
    ss((s) => {
      s.spec.initContainers = [initSidecar('init', { image: '' })];
    }),
    1,
  ],
  [
    'missing-container',
    ss((s) => {
      s.spec.containers = [];
    }),
    1,
  ],
  [
    'wrong-containers',
    ss((s) => {
      s.spec.containers = [sidecar('c', { shareVolumePolicy: { type: '' } })];
    }),
    1,
  ],
  [
    'wrong-volumes',
    ss((s) => {
      s.spec.volumes = [
        { name: 'test-volume' },
        {
          name: 'token',
          projected: {
            sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3600 } }],
          },
        },
      ];
    }),
    1,
  ],
  [
    'wrong-volumeDevice-volumes',
    ss((s) => {
      s.spec.containers = [
        sidecar('c', { volumeDevices: [{ name: 'disk', devicePath: '/dev/xvda' }] }),
      ];
    }),
    1,
  ],
  [
    'right-volumeDevice-volumes',
    ss((s) => {
      s.spec.containers = [
        sidecar('c', { volumeDevices: [{ name: 'disk', devicePath: '/dev/xvda' }] }),
      ];
      s.spec.volumes = [{ name: 'disk', persistentVolumeClaim: { claimName: 'pvc' } }];
    }),
    0,
  ],
  [
    'volumeDevice-volumeMount-path-conflict',
    ss((s) => {
      s.spec.containers = [
        sidecar('c', {
          volumeDevices: [{ name: 'disk', devicePath: '/data' }],
          volumeMounts: [{ name: 'vol', mountPath: '/data' }],
        }),
      ];
      s.spec.volumes = [
        { name: 'disk', persistentVolumeClaim: { claimName: 'pvc' } },
        { name: 'vol', emptyDir: {} },
      ];
    }),
    2,
  ],
  [
    'wrong-metadata',
    ss((s) => {
      s.spec.patchPodMetadata = [
        { annotations: { key1: 'a' }, patchPolicy: 'Retain' },
        { annotations: { key1: 'b' }, patchPolicy: 'Overwrite' },
      ];
    }),
    1,
  ],
  [
    'wrong-name-injectionStrategy',
    ss((s) => {
      s.spec.injectionStrategy = {
        revision: { customVersion: 'normal-sidecarset-01234', policy: 'Always' },
      };
    }),
    1,
  ],
  [
    'not-existing-injectionStrategy',
    ss((s) => {
      s.spec.injectionStrategy = { revision: { revisionName: 'nope', policy: 'Always' } };
    }),
    1,
  ],
  [
    'native sidecar under RollingUpdate: upgraded in place (OpenKruise refuses it)',
    ss((s) => {
      s.spec.initContainers = [initSidecar('native', { restartPolicy: 'Always' })];
    }),
    0,
  ],
  [
    'resources-policy-and-resources-conflict',
    ss((s) => {
      s.spec.containers = [
        sidecar('c', { resourcesPolicy: policy, resources: { limits: { cpu: '1' } } }),
      ];
    }),
    1,
  ],
  // The mode itself is the schema's (CRD enum) to refuse, here as upstream.
  [
    'invalid-target-container-mode',
    ss((s) => {
      s.spec.containers = [
        sidecar('c', {
          resourcesPolicy: {
            ...policy,
            targetContainersMode: 'invalid',
            targetContainersNameRegex: '',
          },
        }),
      ];
    }),
    1,
  ],
  [
    'initContainer-with-resources-policy-forbidden',
    ss((s) => {
      s.spec.initContainers = [initSidecar('i', { resourcesPolicy: policy })];
    }),
    1,
  ],
  [
    'native-sidecar-initContainer-with-resources-policy-allowed',
    ss((s) => {
      s.spec.initContainers = [
        initSidecar('i', { restartPolicy: 'Always', resourcesPolicy: policy }),
      ];
      s.spec.updateStrategy = { type: 'NotUpdate' };
    }),
    0,
  ],
  [
    'valid customVersion revision',
    ss((s) => {
      s.spec.injectionStrategy = { revision: { customVersion: 'v1', policy: 'Partial' } };
    }),
    0,
  ],
  [
    'valid revisionName',
    ss((s) => {
      s.spec.injectionStrategy = { revision: { revisionName: 'test-sidecarset-rev1' } };
    }),
    0,
  ],
];

for (const [name, set, count] of table) {
  test(`TestValidateSidecarSet: ${name}`, () => {
    const errs = validateSidecarSet(set, ctx);
    assert.equal(errs.length, count, formatFieldErrors(errs));
  });
}

const msg = (s: SidecarSet, c: ValidationContext = ctx): string =>
  formatFieldErrors(validateSidecarSet(s, c));

test('exact messages', () => {
  assert.equal(
    msg(
      ss((s) => {
        delete s.spec.selector;
      }),
    ),
    'spec.selector: Required value: no selector defined for SidecarSet',
  );
  assert.equal(
    msg(
      ss((s) => {
        s.spec.containers = [];
      }),
    ),
    'spec: Required value: no initContainer or container defined for SidecarSet',
  );
  assert.equal(
    msg(
      ss((s) => {
        s.spec.selector = {};
      }),
    ),
    'spec.selector: Invalid value: {}: empty selector is not valid for sidecarset.',
  );
  assert.equal(
    msg(
      ss((s) => {
        s.spec.initContainers = [initSidecar('init', { image: '' })];
      }),
    ),
    'spec.initContainers[0].image: Required value',
  );
  assert.equal(
    msg(
      ss((s) => {
        s.spec.volumes = [{ name: 'v' }];
      }),
    ),
    'spec.volumes[0]: Required value: must specify a volume type',
  );
  assert.equal(
    msg(
      ss((s) => {
        s.spec.injectionStrategy = { revision: { revisionName: 'nope' } };
      }),
    ),
    'spec.injectionStrategy.revision: Invalid value: null: Cannot find specific ControllerRevision, err: controllerrevisions.apps "nope" not found',
  );
  assert.equal(
    msg(
      ss((s) => {
        s.spec.patchPodMetadata = [
          { annotations: { k: 'a' }, patchPolicy: 'Retain' },
          { annotations: { k: 'b' }, patchPolicy: 'Retain' },
        ];
      }),
    ),
    'spec.patchPodMetadata: Required value: patch annotation[k] already exist',
  );
  // The bookkeeping keys: another SidecarSet's hash, our own keys, a hot-upgrade slot's version.
  for (const key of [
    'kruise.io/sidecarset-hash',
    'kruise.io/sidecarset-injected-list',
    'kruise.io/sidecarset-inplace-update-state',
    'sidecarset.dev/upgrade-baseline',
    'version.sidecarset.kruise.io/logtail-1',
  ]) {
    assert.equal(
      msg(
        ss((s) => {
          s.spec.patchPodMetadata = [{ annotations: { [key]: '{}' }, patchPolicy: 'Overwrite' }];
        }),
      ),
      `spec.patchPodMetadata[0].annotations[${key}]: Forbidden: the key holds SidecarSet bookkeeping: patchPodMetadata may not write it`,
    );
  }
  assert.equal(
    msg(
      ss((s) => {
        s.spec.patchPodMetadata = [
          { annotations: { 'kruise.io/sidecarset-hash-like': 'x' }, patchPolicy: 'Retain' },
        ];
      }),
    ).includes('Forbidden'),
    true,
  );
  assert.equal(
    msg(
      ss((s) => {
        s.spec.patchPodMetadata = [
          { annotations: { 'oom-score-adj': '-1', 'kruise.io/other': 'x' }, patchPolicy: 'Retain' },
        ];
      }),
    ),
    '',
  );
});

test('metadata rules', () => {
  const named = (name: string): SidecarSet => ({ ...makeSidecarSet(name) });
  assert.equal(
    msg({ ...named(''), metadata: {} }),
    'metadata.name: Required value: name or generateName is required',
  );
  assert.equal(
    msg(named('a_b')),
    "metadata.name: Invalid value: \"a_b\": sidecarset name must consist of alphanumeric characters or '-' (e.g. 'example-com', regex used for validation is '^[a-zA-Z0-9\\-]+$')",
  );
  assert.equal(
    msg(named('A'.repeat(64))),
    `metadata.name: Invalid value: "${'A'.repeat(64)}": must be no more than 63 characters`,
  );
  const nsd = named('x');
  nsd.metadata.namespace = 'default';
  nsd.metadata.labels = { ok: 'bad-' };
  nsd.metadata.annotations = { 'bad key': 'v', big: 'x'.repeat(256 * 1024) };
  assert.deepEqual(
    validateSidecarSet(nsd, ctx).map((e) => `${e.type} ${e.field}`),
    [
      'Forbidden metadata.namespace',
      'Invalid metadata.labels',
      'Invalid metadata.annotations',
      'TooLong metadata.annotations',
    ],
  );
});

test('namespace rules', () => {
  assert.equal(
    msg(
      ss((s) => {
        s.spec.namespace = 'default';
        s.spec.namespaceSelector = { matchLabels: { a: 'b' } };
      }),
    ),
    'spec.namespace: Invalid value: "default": namespace and namespaceSelector are mutually exclusive',
  );
  assert.equal(
    validateSidecarSet(
      ss((s) => {
        s.spec.namespace = 'Bad_NS';
      }),
      ctx,
    ).length,
    1,
  );
  assert.equal(
    validateSidecarSet(
      ss((s) => {
        s.spec.namespace = 'default';
      }),
      ctx,
    ).length,
    0,
  );
});

test('injectionStrategy rules', () => {
  const r = (revision: object, c: ValidationContext = ctx): string[] =>
    validateSidecarSet(
      ss((s) => {
        s.spec.injectionStrategy = { revision };
      }),
      c,
    ).map((e) => e.detail);
  assert.deepEqual(r({ policy: 'Always' }), [
    'revisionName and customVersion cannot be empty simultaneously',
  ]);
  assert.deepEqual(r({ customVersion: 'v1', policy: 'Bogus' }), [
    'Invalid policy Bogus, supported: [Always, Partial]',
  ]);
  assert.deepEqual(
    r({ customVersion: 'missing' }, { others: [] }),
    [],
    'no revisions given: look-up skipped',
  );
  assert.deepEqual(r({ customVersion: 'v9' }), [
    'Cannot find specific ControllerRevision, err: ControllerRevision.apps "test-sidecarset" not found',
  ]);
});

test('updateStrategy rules', () => {
  const u = (updateStrategy: object): string[] =>
    validateSidecarSet(
      ss((s) => {
        s.spec.updateStrategy = updateStrategy;
      }),
      ctx,
    ).map(formatFieldError);
  assert.deepEqual(
    u({ type: 'NotUpdate', partition: 'junk' }),
    [],
    'only checked for RollingUpdate',
  );
  assert.deepEqual(
    u({ type: 'RollingUpdate', partition: 1, selector: { matchLabels: { a: 'b' } } }).length,
    1,
  );
  assert.match(
    u({ type: 'RollingUpdate', partition: '10%', selector: { matchLabels: { a: 'b' } } })[0] ?? '',
    /Partition and Selector cannot be used together/,
  );
  assert.deepEqual(
    u({ type: 'RollingUpdate', partition: 0, selector: { matchLabels: { a: 'b' } } }),
    [],
  );
  assert.equal(u({ type: 'RollingUpdate', selector: {} }).length, 1);
  assert.deepEqual(u({ type: 'RollingUpdate', partition: -1 }), [
    'spec.updateStrategy.partition: Invalid value: -1: must be greater than or equal to 0',
  ]);
  assert.deepEqual(u({ type: 'RollingUpdate', maxUnavailable: 'abc' }), [
    "spec.updateStrategy.maxUnavailable: Invalid value: \"abc\": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
  ]);
  assert.deepEqual(u({ type: 'RollingUpdate', maxUnavailable: 1.5 }), [
    "spec.updateStrategy.maxUnavailable: Invalid value: 1.5: must be an integer or percentage (e.g '5%')",
  ]);
  const prio = (priorityStrategy: object): string[] =>
    u({ type: 'RollingUpdate', priorityStrategy });
  assert.deepEqual(
    prio({
      orderPriority: [{ orderedKey: 'a' }],
      weightPriority: [{ weight: 1, matchSelector: { matchLabels: { a: 'b' } } }],
    }),
    [
      'spec.updateStrategy.priorityStrategy: Required value: only one of weightPriority and orderPriority can be used',
    ],
  );
  assert.match(
    prio({ weightPriority: [{ weight: 101, matchSelector: { matchLabels: { a: 'b' } } }] })[0] ??
      '',
    /weight must be valid number in the range 1-100/,
  );
  assert.match(
    prio({ weightPriority: [{ weight: 1, matchSelector: {} }] })[0] ?? '',
    /selector can not be empty/,
  );
  assert.match(
    prio({ weightPriority: [{ weight: 1, matchSelector: { matchLabels: { a: 'b-' } } }] })[0] ?? '',
    /invalid selector/,
  );
  assert.match(
    prio({ orderPriority: [{ orderedKey: '' }] })[0] ?? '',
    /order key can not be empty/,
  );
  assert.deepEqual(prio({ orderPriority: [{ orderedKey: 'k' }] }), []);
  const scatter = (scatterStrategy: object[]): string[] =>
    u({ type: 'RollingUpdate', scatterStrategy });
  assert.deepEqual(
    scatter([{ key: 'k' }, { key: 'k', value: 'v' }, { key: 'j', value: '*' }]),
    [],
    'key-only terms allowed',
  );
  assert.match(
    scatter([{ key: 'k' }, { key: 'k', value: '*' }])[0] ?? '',
    /duplicated key=k value=\*/,
  );
  assert.match(scatter([{ key: '', value: 'v' }])[0] ?? '', /key should not be empty/);
});

test('container policy rules', () => {
  const c = (extra: object): string[] =>
    validateSidecarSet(
      ss((s) => {
        s.spec.containers = [sidecar('c', extra)];
      }),
      ctx,
    ).map(formatFieldError);
  assert.deepEqual(c({ podInjectPolicy: 'Middle' }), [
    'spec.containers[0].podInjectPolicy: Invalid value: "Middle": unsupported pod inject policy',
  ]);
  assert.deepEqual(c({ shareVolumeDevicePolicy: { type: 'yes' } }), [
    'spec.containers[0].shareVolumeDevicePolicy: Invalid value: {"type":"yes"}: unsupported share volume policy',
  ]);
  assert.deepEqual(c({ shareVolumeDevicePolicy: { type: 'enabled' } }), []);
  const fr = (fieldRef: object): string[] =>
    c({ transferEnv: [{ sourceContainerNameFrom: { fieldRef }, envName: 'TZ' }] });
  const base = 'spec.containers[0].transferEnv[0].sourceContainerNameFrom.fieldRef';
  assert.deepEqual(fr({ fieldPath: "metadata.labels['app']" }), [
    `${base}.apiVersion: Required value`,
  ]);
  assert.deepEqual(fr({ apiVersion: 'v1', fieldPath: '' }), [`${base}.fieldPath: Required value`]);
  assert.deepEqual(fr({ apiVersion: 'v2', fieldPath: "metadata.labels['a']" }), [
    `${base}.fieldPath: Invalid value: "metadata.labels['a']": error converting fieldPath: unsupported pod version: v2`,
  ]);
  assert.deepEqual(fr({ apiVersion: 'v1', fieldPath: 'metadata.name' }), [
    `${base}.fieldPath: Invalid value: "metadata.name": error converting fieldPath: field label not supported: metadata.name`,
  ]);
  assert.deepEqual(fr({ apiVersion: 'v1', fieldPath: "spec.x['a']" }), [
    `${base}.fieldPath: Invalid value: "spec.x['a']": error converting fieldPath: field path not supported: spec.x`,
  ]);
  assert.deepEqual(fr({ apiVersion: 'v1', fieldPath: "metadata.labels['app']" }), []);
  assert.deepEqual(
    fr({ apiVersion: 'v1', fieldPath: "metadata.annotations['Example.com/A']" }),
    [],
  );
  assert.equal(fr({ apiVersion: 'v1', fieldPath: "metadata.labels['a b']" }).length, 1);
  assert.equal(fr({ apiVersion: 'v1', fieldPath: "metadata.annotations['a b']" }).length, 1);
  assert.deepEqual(c({ transferEnv: [{ sourceContainerName: 'nginx', envName: 'TZ' }] }), []);
});

// TestValidateResourcesPolicy (sidecarset_resources_policy_test.go), by essence.
test('resourcesPolicy rules', () => {
  const rp = (resourcesPolicy: object, extra: object = {}): string[] =>
    validateSidecarSet(
      ss((s) => {
        s.spec.containers = [sidecar('c', { resourcesPolicy, ...extra })];
      }),
      ctx,
    ).map(formatFieldError);
  const ok = (expr: object): object => ({
    targetContainersMode: 'max',
    targetContainersNameRegex: '^app$',
    resourcesExpr: expr,
  });
  assert.deepEqual(
    rp(
      ok({
        limits: { cpu: 'max(cpu*50%, 50m)', memory: 'min(memory, 1Gi)' },
        requests: { cpu: '100m', memory: 'memory/2' },
      }),
    ),
    [],
  );
  assert.deepEqual(rp(ok({ requests: { cpu: '(cpu + 100m) * 2' } })), []);
  assert.deepEqual(rp({ ...ok({ limits: { cpu: 'cpu' } }), targetContainersNameRegex: '' }), [
    'spec.containers[0].resourcesPolicy.targetContainersNameRegex: Required value: invalid empty regex',
  ]);
  assert.match(
    rp({ ...ok({ limits: { cpu: 'cpu' } }), targetContainersNameRegex: '([' })[0] ?? '',
    /invalid regex pattern/,
  );
  assert.deepEqual(rp(ok({})), [
    'spec.containers[0].resourcesPolicy.resourcesExpr: Invalid value: {}: at least one of limits or requests must be configured',
  ]);
  assert.match(
    rp(ok({ limits: { cpu: 'cpu * (2' } }))[0] ?? '',
    /^spec\.containers\[0\]\.resourcesPolicy\.resourcesExpr\.limits\.cpu: Invalid value: "cpu \* \(2": invalid expression: /,
  );
  assert.match(rp(ok({ limits: { memory: 'cpu' } }))[0] ?? '', /unknown variable: cpu/);
  assert.match(rp(ok({ requests: { cpu: 'avg(cpu, 1)' } }))[0] ?? '', /unknown function: avg/);
  assert.equal(
    rp(ok({ limits: { cpu: 'cpu' } }), { resources: { requests: { cpu: '1' } } }).length,
    1,
  );
  assert.deepEqual(rp(ok({ limits: { cpu: 'cpu' } }), { resources: { limits: {} } }), []);
  const avg = ss((s) => {
    s.spec.containers = [
      sidecar('c', { resourcesPolicy: { ...policy, targetContainersMode: 'avg' } }),
    ];
  });
  assert.deepEqual(rp({ ...policy, targetContainersMode: 'avg' }), []);
  assert.deepEqual(validateSidecarSetSchema(avg).map(formatFieldError), [
    'spec.containers[0].resourcesPolicy.targetContainersMode: Unsupported value: "avg": supported values: "sum", "max"',
  ]);
});

test('UPDATE: containers cannot be added or renamed; upgradeType is immutable', () => {
  const old = makeSidecarSet('test-sidecarset', {
    containers: [sidecar('a'), sidecar('b', { upgradeStrategy: {} })],
  });
  const next = makeSidecarSet('test-sidecarset', {
    containers: [
      sidecar('a', {
        upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' },
      }),
      sidecar('b', {
        upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' },
      }),
      sidecar('c'),
    ],
  });
  assert.equal(
    formatFieldErrors(validateSidecarSet(next, { others: [old], old })),
    '[spec.containers.upgradeStrategy.upgradeType: Invalid value: "a": container a upgradeType is immutable, spec.containers.name: Invalid value: "c": container c is not found]',
  );
  // TestSidecarSetUpdateConflict: ColdUpgrade → HotUpgrade is one error.
  const cold = makeSidecarSet('s', { containers: [sidecar('x')] });
  const hot = makeSidecarSet('s', {
    containers: [
      sidecar('x', { upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'e:1' } }),
    ],
  });
  assert.equal(validateSidecarSet(hot, { others: [], old: cold }).length, 1);
  assert.equal(validateSidecarSet(cold, { others: [], old: cold }).length, 0);
});

test('resourcesPolicy without targetContainersNameRegex is accepted, defaulted to .*', () => {
  const { sidecarSets, problems } = prepareSidecarSets([
    { source: 'sized.yaml', object: structuredClone(RESOURCES_POLICY_WITHOUT_REGEX) },
  ]);
  assert.deepEqual(problems, []);
  assert.equal(
    sidecarSets[0]?.spec.containers?.[0]?.resourcesPolicy?.targetContainersNameRegex,
    '.*',
  );
});
