/**
 * The cases of OpenKruise's pod webhook tests (pkg/webhook/pod/mutating/sidecarset_test.go) that
 * test/core/inject/inject.test.ts does not already hold, with their fixtures as OpenKruise writes them:
 * SidecarSets that did not go through the defaulting webhook, so a container without
 * podInjectPolicy goes after the app containers.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  SIDECARSET_HASH,
  SIDECARSET_HASH_WITHOUT_IMAGE,
  SIDECARSET_INJECTED_LIST,
  SIDECARSET_WORKING_HOTUPGRADE_CONTAINER,
  versionAltAnnotation,
  versionAnnotation,
} from '../../../src/core/api/annotations.js';
import {
  computeSidecarSetHash,
  computeSidecarSetHashWithoutImage,
} from '../../../src/core/api/hash.js';
import type { InjectOptions } from '../../../src/core/inject/inject.js';
import { sourceFromFieldRef } from '../../../src/core/inject/env.js';
import { injectPod } from '../../../src/core/inject/inject.js';
import { applyPatchPodMetadata } from '../../../src/core/inject/pod-metadata.js';
import type { Container, Pod } from '../../../src/core/api/k8s-types.js';
import { matchSidecarSet, minimalNamespaceLabels } from '../../../src/core/matching/match.js';
import { parsePodSidecarSetHashes } from '../../../src/core/pod-annotations/pod-hash-annotation.js';
import { mutatePod } from '../../../src/core/mutation/pod-mutation.js';
import { buildSidecarSetIndex } from '../../../src/core/matching/sidecarset-index.js';
import type {
  SidecarContainer,
  SidecarSet,
  SidecarSetPatchPodMetadata,
  SidecarSetRevision,
  TransferEnvVar,
} from '../../../src/core/api/sidecarset-types.js';
import { FIXED_NOW, makePod } from '../../support/factories.js';
import { openKruisePod1 } from '../../support/openkruise-pods.js';

const TIMESTAMP = '2026-07-02T10:00:00Z';

const options = (extra: Partial<InjectOptions> = {}): InjectOptions => ({
  now: FIXED_NOW,
  random: () => 0.5,
  revisions: () => [],
  ...extra,
});

const inject = (pod: Pod, sets: SidecarSet[], extra: Partial<InjectOptions> = {}): Pod =>
  injectPod(pod, sets, options(extra)).pod;

const names = (containers: readonly Container[] | undefined): string[] =>
  (containers ?? []).map((c) => c.name);

/** A SidecarSet container as OpenKruise's fixtures write it: nothing defaulted. */
const raw = (name: string, extra: Partial<SidecarContainer> = {}): SidecarContainer => ({
  name,
  image: `${name}-image:1.0`,
  ...extra,
});

function sidecarSet(
  name: string,
  spec: Partial<SidecarSet['spec']>,
  annotations: Record<string, string> = {},
): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'SidecarSet',
    metadata: { name, annotations: { [SIDECARSET_HASH]: 'c4k2dbb95d', ...annotations } },
    spec: { selector: { matchLabels: { app: 'suxing-test' } }, ...spec },
  };
}

const sidecarSet1 = (): SidecarSet =>
  sidecarSet('sidecarset1', {
    initContainers: [raw('init-2'), raw('init-1')],
    containers: [
      raw('dns-f', {
        podInjectPolicy: 'BeforeAppContainer',
        shareVolumePolicy: { type: 'disabled' },
      }),
      raw('log-agent', {
        podInjectPolicy: 'AfterAppContainer',
        shareVolumePolicy: { type: 'disabled' },
      }),
    ],
  });

const sidecarsetWithTransferEnv = (): SidecarSet =>
  sidecarSet('sidecarset2', {
    initContainers: [
      raw('dns-e', {
        volumeMounts: [{ name: 'volume-1', mountPath: '/v1' }],
        podInjectPolicy: 'BeforeAppContainer',
        transferEnv: [{ sourceContainerName: 'nginx', envName: 'hello2' }],
      }),
    ],
    containers: [
      raw('dns-f', {
        volumeMounts: [{ name: 'volume-1', mountPath: '/v1' }],
        podInjectPolicy: 'BeforeAppContainer',
        shareVolumePolicy: { type: 'disabled' },
        transferEnv: [{ sourceContainerName: 'nginx', envName: 'hello2' }],
      }),
    ],
    volumes: [
      { name: 'volume-1', emptyDir: {} },
      { name: 'volume-2', emptyDir: {} },
    ],
  });

const sidecarSet3 = (): SidecarSet =>
  sidecarSet(
    'sidecarset3',
    {
      containers: [
        raw('dns-f', {
          volumeMounts: [
            { name: 'volume-1', mountPath: '/a/b/c' },
            { name: 'volume-2', mountPath: '/d/e/f' },
          ],
          podInjectPolicy: 'AfterAppContainer',
          shareVolumePolicy: { type: 'enabled' },
        }),
        raw('log-agent', {
          podInjectPolicy: 'AfterAppContainer',
          shareVolumePolicy: { type: 'disabled' },
        }),
      ],
      volumes: [
        { name: 'volume-1', emptyDir: {} },
        { name: 'volume-2', emptyDir: {} },
      ],
    },
    { [SIDECARSET_HASH]: 'gm967682cm' },
  );

const pod1 = openKruisePod1;

/** The whole webhook path: match against every SidecarSet given, then inject. */
function admit(pod: Pod, sets: SidecarSet[]): Pod {
  const result = mutatePod(
    { operation: 'CREATE', pod },
    {
      sidecarSets: buildSidecarSetIndex(sets),
      namespaces: new Map([['default', minimalNamespaceLabels('default')]]),
      revisions: () => [],
    },
    { now: FIXED_NOW, random: () => 0.5 },
  );
  return result.kind === 'mutated' ? result.pod : pod;
}

describe('OpenKruise pod webhook cases', () => {
  it('TestPodHasNoMatchedSidecarSet: a pod no SidecarSet selects keeps its containers', () => {
    const pod = pod1();
    pod.metadata.labels = { app: 'doesnt-match' };
    assert.deepEqual(admit(pod, [sidecarSet1()]), pod);
  });

  it('TestInjectionStrategyPaused: a paused SidecarSet injects nothing', () => {
    const paused = sidecarSet1();
    paused.spec.injectionStrategy = { paused: true };
    assert.deepEqual(names(admit(pod1(), [paused]).spec.containers), ['nginx']);
  });

  it('TestSidecarSetPodInjectPolicy: an init container without policy goes after the pod ones', () => {
    const out = inject(pod1(), [sidecarSet1()]);
    assert.deepEqual(names(out.spec.containers), ['dns-f', 'nginx', 'log-agent']);
    assert.deepEqual(names(out.spec.initContainers), ['init-0', 'init-1', 'init-2']);
    for (const init of out.spec.initContainers?.slice(1) ?? []) {
      assert.ok(
        init.env?.some((e) => e.name === 'IS_INJECTED'),
        init.name,
      );
    }
  });

  it('TestSidecarSetTransferEnv: init containers receive transferEnv as containers do', () => {
    const set = sidecarsetWithTransferEnv();
    const init = set.spec.initContainers?.[0];
    if (init) delete init.podInjectPolicy;
    const out = inject(pod1(), [set]);
    const expected = [
      { name: 'IS_INJECTED', value: 'true' },
      { name: 'hello2', value: 'world2' },
    ];
    assert.deepEqual(out.spec.initContainers?.[1]?.env, expected);
    assert.deepEqual(out.spec.containers[0]?.env, expected);
  });

  it('TestSidecarSetHashInject: each injected SidecarSet records its own hash', () => {
    const notMatching = sidecarSet1();
    notMatching.spec.selector = { matchLabels: { app: 'doesnt-match' } };
    const out = admit(pod1(), [notMatching, sidecarsetWithTransferEnv(), sidecarSet3()]);
    const hashes = parsePodSidecarSetHashes(out.metadata.annotations?.[SIDECARSET_HASH], 'k');
    assert.deepEqual(Object.fromEntries(Object.entries(hashes).map(([k, v]) => [k, v.hash])), {
      sidecarset2: 'c4k2dbb95d',
      sidecarset3: 'gm967682cm',
    });
  });

  it('TestSidecarSetNameInject: the injected list names every SidecarSet, sorted', () => {
    const out = admit(pod1(), [sidecarSet3(), sidecarSet1()]);
    assert.equal(out.metadata.annotations?.[SIDECARSET_INJECTED_LIST], 'sidecarset1,sidecarset3');
  });
});

describe('TestMergeSidecarContainers and TestInjectInitContainerSort (cases not in inject.test.ts)', () => {
  it('origin has the sidecars, nothing new: every sidecar stays where it stands', () => {
    const set = sidecarSet('s', {
      containers: [
        raw('sidecar-2', { podInjectPolicy: 'AfterAppContainer' }),
        raw('sidecar-1', { podInjectPolicy: 'AfterAppContainer' }),
      ],
    });
    const pod = makePod({
      labels: { app: 'suxing-test' },
      containers: ['sidecar-1', 'app-container', 'sidecar-2'].map((name) => ({ name, image: 'x' })),
    });
    assert.deepEqual(names(inject(pod, [set]).spec.containers), [
      'sidecar-1',
      'app-container',
      'sidecar-2',
    ]);
  });

  const initCases: [string, string[], string[]][] = [
    ['origins nil, inject containers(a, b, c)', [], ['a-init', 'b-init', 'c-init']],
    [
      'origin init, inject containers(a, b, c)',
      ['app1-init', 'app2-init'],
      ['app1-init', 'app2-init', 'a-init', 'b-init', 'c-init'],
    ],
  ];
  for (const [title, podInits, expected] of initCases) {
    it(title, () => {
      const set = sidecarSet('s', {
        initContainers: [raw('a-init'), raw('c-init'), raw('b-init')],
      });
      const pod = makePod({
        labels: { app: 'suxing-test' },
        initContainers: podInits.map((name) => ({ name, image: 'x' })),
      });
      assert.deepEqual(names(inject(pod, [set]).spec.initContainers), expected);
    });
  }
});

describe('TestInjectInitContainer', () => {
  it('native sidecar init containers, one hot-upgraded: the annotations exactly', () => {
    const withInit = (name: string, init: SidecarContainer): SidecarSet =>
      sidecarSet(
        name,
        {
          initContainers: [init],
          volumes: [{ name: 'volume-1', emptyDir: {} }],
        },
        {
          [SIDECARSET_HASH]: `${name}-hash`,
          [SIDECARSET_HASH_WITHOUT_IMAGE]: `${name}-without-image-hash`,
        },
      );
    const base = {
      volumeMounts: [{ name: 'volume-1', mountPath: '/v1' }],
      transferEnv: [{ sourceContainerName: 'nginx', envName: 'hello2' }],
      restartPolicy: 'Always',
    };
    const sets = [
      withInit('sidecarset-1', raw('init-1', base)),
      withInit(
        'sidecarset-2',
        raw('hot-init', {
          ...base,
          upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:v1' },
        }),
      ),
    ];
    const out = inject(pod1(), sets);
    const entry = (name: string, hash: string, sidecar: string): string =>
      `"${name}":{"updateTimestamp":"${TIMESTAMP}","hash":"${hash}","sidecarSetName":"${name}","sidecarList":["${sidecar}"]}`;
    assert.deepEqual(out.metadata.annotations, {
      [SIDECARSET_HASH]: `{${entry('sidecarset-1', 'sidecarset-1-hash', 'init-1')},${entry('sidecarset-2', 'sidecarset-2-hash', 'hot-init')}}`,
      [SIDECARSET_HASH_WITHOUT_IMAGE]: `{${entry('sidecarset-1', 'sidecarset-1-without-image-hash', 'init-1')},${entry('sidecarset-2', 'sidecarset-2-without-image-hash', 'hot-init')}}`,
      [SIDECARSET_INJECTED_LIST]: 'sidecarset-1,sidecarset-2',
      [SIDECARSET_WORKING_HOTUPGRADE_CONTAINER]: '{"hot-init":"hot-init-1"}',
      [versionAnnotation('hot-init-1')]: '1',
      [versionAltAnnotation('hot-init-1')]: '0',
      [versionAnnotation('hot-init-2')]: '0',
      [versionAltAnnotation('hot-init-2')]: '1',
    });
    assert.deepEqual(names(out.spec.initContainers), [
      'init-0',
      'hot-init-1',
      'hot-init-2',
      'init-1',
    ]);
    assert.deepEqual(
      out.spec.volumes?.map((v) => v.name),
      ['volume-a', 'volume-b', 'volume-1'],
    );
    const empty = out.spec.initContainers?.[2];
    assert.equal(empty?.image, 'empty:v1');
    assert.deepEqual(
      empty.env?.map((e) => e.name),
      ['IS_INJECTED', 'hello2', 'SIDECARSET_VERSION', 'SIDECARSET_VERSION_ALT'],
    );
  });
});

describe('TestPodVolumeMountsAppend (subPathExpr cases)', () => {
  const podWithExpansion = (subPathExpr: string): Pod => {
    const pod = pod1();
    delete pod.spec.initContainers;
    const nginx = pod.spec.containers[0];
    nginx?.volumeMounts?.push({ name: 'volume-expansion', mountPath: '/e/expansion', subPathExpr });
    nginx?.env?.push({ name: 'POD_NAME', value: 'bar' }, { name: 'OD_NAME', value: 'od_name' });
    return pod;
  };
  const sharing = (): SidecarSet =>
    sidecarSet('s', {
      initContainers: [
        raw('dns-e', {
          podInjectPolicy: 'BeforeAppContainer',
          shareVolumePolicy: { type: 'enabled' },
          volumeMounts: [{ name: 'volume-3', mountPath: '/g/h/i' }],
        }),
      ],
      containers: [
        raw('dns-f', {
          podInjectPolicy: 'AfterAppContainer',
          shareVolumePolicy: { type: 'enabled' },
          volumeMounts: [{ name: 'volume-1', mountPath: '/a/b/c' }],
        }),
      ],
      volumes: [
        { name: 'volume-1', emptyDir: {} },
        { name: 'volume-3', emptyDir: {} },
      ],
    });
  const cases: [string, string, string[]][] = [
    ['volumes with expanded subpath', 'foo/$(POD_NAME)/$(OD_NAME)/conf', ['POD_NAME', 'OD_NAME']],
    ['subpath with no expansion', 'foo', []],
    ['volumes expanded with empty subpath', '', []],
  ];
  for (const [title, subPathExpr, envs] of cases) {
    it(title, () => {
      const out = inject(podWithExpansion(subPathExpr), [sharing()]);
      for (const c of [out.spec.initContainers?.[0], out.spec.containers[1]]) {
        assert.ok(c, 'injected');
        assert.ok(
          c.volumeMounts?.some((m) => m.mountPath === '/e/expansion'),
          `${c.name} shares /e/expansion`,
        );
        assert.deepEqual(
          c.env?.map((e) => e.name),
          ['IS_INJECTED', ...envs],
          c.name,
        );
      }
    });
  }
});

it('a subPathExpr variable the app container repeats is copied from its first entry (GetContainerEnvVar)', () => {
  const pod = makePod({
    labels: { app: 'suxing-test' },
    containers: [
      {
        name: 'app',
        image: 'app',
        env: [
          { name: 'POD_NAME', value: 'first' },
          { name: 'POD_NAME', value: 'last' },
        ],
        volumeMounts: [{ name: 'v', mountPath: '/e', subPathExpr: '$(POD_NAME)' }],
      },
    ],
  });
  const set = sidecarSet('s', {
    containers: [raw('x', { shareVolumePolicy: { type: 'enabled' } })],
  });
  assert.deepEqual(inject(pod, [set]).spec.containers[1]?.env, [
    { name: 'IS_INJECTED', value: 'true' },
    { name: 'POD_NAME', value: 'first' },
  ]);
});

describe('TestPodVolumeDevicesAppend and TestBuildSidecarVolumes_WithDifferentVolumeScenarios', () => {
  const podWithDevices = (): Pod => {
    const pod = pod1();
    delete pod.spec.initContainers;
    const nginx = pod.spec.containers[0];
    if (nginx) {
      nginx.volumeDevices = [
        { name: 'origin-pvc-1', devicePath: '/origin-1' },
        { name: 'origin-pvc-share', devicePath: '/share' },
      ];
    }
    pod.spec.volumes?.push({ name: 'origin-pvc-1' }, { name: 'origin-pvc-share' });
    return pod;
  };

  it('shareVolumeDevicePolicy enabled: own devices, then the app ones; volumes in mount order', () => {
    const shareDevices = { shareVolumeDevicePolicy: { type: 'enabled' } };
    const set = sidecarSet('s', {
      initContainers: [
        raw('dns-e', {
          ...shareDevices,
          podInjectPolicy: 'BeforeAppContainer',
          volumeMounts: [
            { name: 'volume-3', mountPath: '/g/h/i' },
            { name: 'volume-4', mountPath: '/j/k/l' },
            { name: 'volume-a', mountPath: '/a/b' },
          ],
          volumeDevices: [{ name: 'disk0', devicePath: '/dev/nvme0' }],
        }),
      ],
      containers: [
        raw('dns-f', {
          ...shareDevices,
          podInjectPolicy: 'AfterAppContainer',
          volumeDevices: [{ name: 'disk0', devicePath: '/dev/nvme1' }],
        }),
      ],
      volumes: [
        { name: 'volume-3', emptyDir: {} },
        { name: 'volume-4', emptyDir: {} },
        { name: 'volume-a', emptyDir: {} },
        { name: 'disk0', persistentVolumeClaim: { claimName: 'pvc-0' } },
      ],
    });
    const out = inject(podWithDevices(), [set]);
    const shared = [
      { name: 'origin-pvc-1', devicePath: '/origin-1' },
      { name: 'origin-pvc-share', devicePath: '/share' },
    ];
    assert.deepEqual(out.spec.initContainers?.[0]?.volumeDevices, [
      { name: 'disk0', devicePath: '/dev/nvme0' },
      ...shared,
    ]);
    assert.deepEqual(out.spec.containers[1]?.volumeDevices, [
      { name: 'disk0', devicePath: '/dev/nvme1' },
      ...shared,
    ]);
    assert.deepEqual(
      out.spec.volumes?.map((v) => v.name),
      ['volume-a', 'volume-b', 'origin-pvc-1', 'origin-pvc-share', 'volume-3', 'volume-4', 'disk0'],
    );
  });

  it('volumes come in init mounts, init devices, mounts, devices order; missing ones are skipped', () => {
    const set = sidecarSet('s', {
      initContainers: [
        raw('dns-e', {
          volumeMounts: [
            { name: 'volume-1', mountPath: '/a/b' },
            { name: 'volume-2', mountPath: '/c/d' },
          ],
          volumeDevices: [{ name: 'disk0', devicePath: '/dev/nvme0' }],
        }),
      ],
      containers: [
        raw('dns-f', {
          volumeMounts: [
            { name: 'volume-3', mountPath: '/a/b' },
            { name: 'volume-4', mountPath: '/c/d' },
            { name: 'volume-missing', mountPath: '/m' },
          ],
          volumeDevices: [{ name: 'disk1', devicePath: '/dev/nvme1' }],
        }),
      ],
      volumes: ['disk1', 'volume-4', 'volume-3', 'disk0', 'volume-2', 'volume-1'].map((name) => ({
        name,
        emptyDir: {},
      })),
    });
    const out = injectPod(makePod({ labels: { app: 'suxing-test' } }), [set], options());
    assert.deepEqual(
      out.pod.spec.volumes?.map((v) => v.name),
      ['volume-1', 'volume-2', 'disk0', 'volume-3', 'volume-4', 'disk1'],
    );
    assert.match(out.warnings.join('\n'), /volume-missing/);
  });
});

describe('TestCanarySidecarSetInjection', () => {
  const canarySet = (strategy: Partial<NonNullable<SidecarSet['spec']['updateStrategy']>>) =>
    sidecarSet('sidecarset1', {
      selector: { matchLabels: { app: 'demo' } },
      containers: [{ name: 'sidecar', image: 'sidecar-image:canary' }],
      updateStrategy: { selector: { matchLabels: { canary: 'true' } }, ...strategy },
      injectionStrategy: {
        revision: { customVersion: 'sidecarset1-12345', policy: 'Partial' },
      },
    });
  const revision: SidecarSetRevision = {
    name: 'sidecarset1-12345',
    sidecarSetName: 'sidecarset1',
    customVersion: 'sidecarset1-12345',
    revision: 1,
    spec: { containers: [{ name: 'sidecar', image: 'sidecar-image:stable' }] },
  };
  const demoPod = (canary: boolean): Pod =>
    makePod({
      labels: canary ? { app: 'demo', canary: 'true' } : { app: 'demo' },
      containers: [{ name: 'app', image: 'demo' }],
    });
  const image = (pod: Pod, set: SidecarSet, history = [revision]): string | undefined => {
    const out = inject(pod, [set], { revisions: () => history });
    assert.deepEqual(names(out.spec.containers), ['app', 'sidecar']);
    return out.spec.containers[1]?.image;
  };

  const cases: [string, boolean, object, string][] = [
    ['stable pod', false, {}, 'sidecar-image:stable'],
    ['canary without partition', true, {}, 'sidecar-image:canary'],
    ['canary with partition 100%', true, { partition: '100%' }, 'sidecar-image:stable'],
    ['canary with partition 0%', true, { partition: '0%' }, 'sidecar-image:canary'],
    ['canary paused', true, { partition: '0%', paused: true }, 'sidecar-image:stable'],
  ];
  for (const [title, canary, strategy, expected] of cases) {
    it(title, () => {
      assert.equal(image(demoPod(canary), canarySet(strategy)), expected);
    });
  }

  it('canary with bad partition, no history, or a bad selector: an error', () => {
    assert.throws(() => image(demoPod(true), canarySet({ partition: 'abc%' })), {
      code: 'SI_ERR_BAD_PERCENT',
    });
    assert.throws(() => image(demoPod(true), canarySet({}), []), {
      code: 'SI_ERR_REVISION_NOT_FOUND',
    });
    const badSelector = canarySet({
      selector: { matchExpressions: [{ key: 'somekey', operator: 'badOp' }] },
    });
    assert.throws(() => image(demoPod(true), badSelector), /badOp/);
  });
});

describe('TestInjectionStrategyRevision', () => {
  it('injects the revision; one that recorded no hash is recorded with the hash of its spec', () => {
    const set = sidecarSet1();
    set.spec.injectionStrategy = {
      revision: { customVersion: 'sidecarset1-12345', policy: 'Always' },
    };
    const spec = {
      initContainers: [raw('init-2', { image: 'busybox:1.0.0' })],
      containers: [
        raw('dns-f', {
          podInjectPolicy: 'BeforeAppContainer',
          shareVolumePolicy: { type: 'disabled' },
        }),
      ],
    };
    const history: SidecarSetRevision[] = [
      {
        name: 'sidecarset1-12345',
        sidecarSetName: 'sidecarset1',
        customVersion: 'sidecarset1-12345',
        revision: 1,
        spec,
      },
    ];
    const out = inject(pod1(), [set], { revisions: () => history });
    assert.deepEqual(names(out.spec.containers), ['dns-f', 'nginx']);
    assert.deepEqual(names(out.spec.initContainers), ['init-0', 'init-2']);
    const a = out.metadata.annotations ?? {};
    const entry = parsePodSidecarSetHashes(a[SIDECARSET_HASH], 'k')['sidecarset1'];
    assert.equal(entry?.hash, computeSidecarSetHash(spec));
    assert.notEqual(entry.hash, 'c4k2dbb95d');
    assert.equal(entry.controllerRevision, 'sidecarset1-12345');
    assert.equal(
      parsePodSidecarSetHashes(a[SIDECARSET_HASH_WITHOUT_IMAGE], 'k')['sidecarset1']?.hash,
      computeSidecarSetHashWithoutImage(spec),
    );
  });
});

describe('TestIsCanarySidecarSet, as injection sees it', () => {
  const cases: [string, Record<string, string>, boolean][] = [
    ['canary "true" with a base', { canary: 'true', base: 'base' }, true],
    ['canary "true", empty base', { canary: 'true', base: '' }, false],
    ['canary "false"', { canary: 'false', base: 'base' }, false],
    ['only canary', { canary: 'true' }, false],
    ['only base', { base: 'base' }, false],
    ['canary "1"', { canary: '1', base: 'base' }, false],
    ['canary "TRUE" (case-sensitive)', { canary: 'TRUE', base: 'base' }, false],
  ];
  for (const [title, marks, isCanary] of cases) {
    it(`${title}: the base is ${isCanary ? 'dropped' : 'kept'}`, () => {
      const annotations: Record<string, string> = {};
      if (marks['canary'] !== undefined) {
        annotations['apps.kruise.io/sidecarset-canary'] = marks['canary'];
      }
      if (marks['base'] !== undefined)
        annotations['apps.kruise.io/sidecarset-base'] = marks['base'];
      const base = sidecarSet('base', { containers: [raw('base-c')] });
      const canary = sidecarSet('canary', { containers: [raw('canary-c')] }, annotations);
      const outcome = injectPod(pod1(), [base, canary], options());
      assert.deepEqual(outcome.injected, isCanary ? ['canary'] : ['base', 'canary']);
    });
  }
});

// pkg/control/sidecarcontrol/util_test.go

describe('TestPatchPodMetadata', () => {
  const cases: [
    string,
    Record<string, string>,
    SidecarSetPatchPodMetadata[],
    Record<string, string>,
  ][] = [
    [
      'add pod annotation',
      {},
      [
        { patchPolicy: 'Retain', annotations: { key1: 'value1' } },
        { patchPolicy: 'Overwrite', annotations: { key2: 'value2' } },
      ],
      { key1: 'value1', key2: 'value2' },
    ],
    [
      'add pod annotation, exist',
      { key1: 'old', key2: 'old' },
      [
        { patchPolicy: 'Retain', annotations: { key1: 'value1' } },
        { patchPolicy: 'Overwrite', annotations: { key2: 'value2' } },
      ],
      { key1: 'old', key2: 'value2' },
    ],
    [
      'json merge pod annotation',
      { key1: '{"log-agent":1}', key2: '{"log-agent":1}' },
      [
        {
          patchPolicy: 'MergePatchJson',
          annotations: { key1: '{"log-agent":1}', key2: '{"envoy":2}', key3: '{"probe":5}' },
        },
      ],
      { key1: '{"log-agent":1}', key2: '{"envoy":2,"log-agent":1}', key3: '{"probe":5}' },
    ],
    [
      'json merge pod annotation, skip',
      { key1: '{"log-agent":1}' },
      [{ patchPolicy: 'MergePatchJson', annotations: { key1: '{"log-agent":1}' } }],
      { key1: '{"log-agent":1}' },
    ],
  ];
  for (const [title, existing, patches, expected] of cases) {
    it(title, () => {
      const annotations = { ...existing };
      applyPatchPodMetadata(annotations, patches);
      assert.deepEqual(annotations, expected);
    });
  }
});

describe('TestExtractContainerNameFromFieldPath and TestGetSidecarTransferEnvs', () => {
  const podWith = (metadata: Partial<Pod['metadata']>): Pod => {
    const pod = makePod({
      containers: [
        { name: 'main', image: 'main:v1', env: [{ name: 'test-env', value: 'test-value' }] },
      ],
    });
    pod.metadata = { ...pod.metadata, ...metadata };
    return pod;
  };
  const fieldCases: [string, Partial<Pod['metadata']>, string][] = [
    [
      "metadata.labels['test-label']",
      { labels: { 'test-label': 'test-pod-label' } },
      'test-pod-label',
    ],
    ["metadata.labels['test-label']", { labels: {} }, ''],
    [
      "metadata.annotations['test-anno']",
      { annotations: { 'test-anno': 'test-pod-anno' } },
      'test-pod-anno',
    ],
  ];
  for (const [fieldPath, metadata, expected] of fieldCases) {
    it(`${fieldPath} on ${JSON.stringify(metadata)} names ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(sourceFromFieldRef(fieldPath, podWith(metadata)), {
        ok: true,
        name: expected,
      });
    });
  }

  const transferCases: [string, TransferEnvVar, Partial<Pod['metadata']>][] = [
    ['by name', { envName: 'test-env', sourceContainerName: 'main' }, {}],
    [
      'from a label',
      {
        envName: 'test-env',
        sourceContainerNameFrom: {
          fieldRef: { apiVersion: 'v1', fieldPath: "metadata.labels['app']" },
        },
      },
      { labels: { app: 'main' } },
    ],
    [
      'from an annotation',
      {
        envName: 'test-env',
        sourceContainerNameFrom: {
          fieldRef: { apiVersion: 'v1', fieldPath: "metadata.annotations['app']" },
        },
      },
      { annotations: { app: 'main' } },
    ],
  ];
  for (const [title, entry, metadata] of transferCases) {
    it(`transferEnv ${title}`, () => {
      const set = sidecarSet('s', {
        selector: { matchLabels: { app: 'web' } },
        containers: [raw('cold-sidecar', { transferEnv: [entry] })],
      });
      assert.deepEqual(inject(podWith(metadata), [set]).spec.containers[1]?.env, [
        { name: 'IS_INJECTED', value: 'true' },
        { name: 'test-env', value: 'test-value' },
      ]);
    });
  }
});

describe('TestGetInjectedVolumeDevices', () => {
  const pod = (): Pod =>
    makePod({
      containers: [
        { name: 'a', image: 'a', volumeDevices: [{ name: 'vd-1', devicePath: '/data/volume-1' }] },
        { name: 'b', image: 'b', volumeDevices: [{ name: 'vd-2', devicePath: '/data/volume-2' }] },
        {
          name: 'injected',
          image: 'c',
          volumeDevices: [{ name: 'vd-3', devicePath: '/data/volume-3' }],
          env: [{ name: 'IS_INJECTED', value: 'true' }],
        },
      ],
    });
  const devices = (extra: Partial<SidecarContainer>): unknown =>
    inject(pod(), [sidecarSet('s', { containers: [raw('x', extra)] })]).spec.containers[3]
      ?.volumeDevices;
  it('disabled: none shared', () => {
    assert.equal(devices({}), undefined);
  });
  it('enabled: those of the app containers, not of injected ones', () => {
    assert.deepEqual(devices({ shareVolumeDevicePolicy: { type: 'enabled' } }), [
      { name: 'vd-1', devicePath: '/data/volume-1' },
      { name: 'vd-2', devicePath: '/data/volume-2' },
    ]);
  });
});

describe('TestPodMatchedSidecarSet', () => {
  const namespaces = new Map([
    ['app1', { 'kubernetes.io/metadata.name': 'app1', ns: 'app1', app: 'app1' }],
    ['app2', { 'kubernetes.io/metadata.name': 'app2', app: 'app2' }],
  ]);
  const pod = makePod({ name: 'test-pod', namespace: 'app1', labels: { app: 'nginx' } });
  const cases: [string, Record<string, string> | undefined, boolean][] = [
    ['test1: no namespaceSelector', undefined, true],
    ['test2: namespaceSelector ns=app1', { ns: 'app1' }, true],
    ['test3: namespaceSelector ns=app2', { ns: 'app2' }, false],
    ['test4: namespaceSelector app=app1', { app: 'app1' }, true],
    ['test5: namespaceSelector app=app2', { app: 'app2' }, false],
  ];
  for (const [title, nsLabels, expected] of cases) {
    it(title, () => {
      const set = sidecarSet('sidecarset-test', {
        selector: { matchLabels: { app: 'nginx' } },
        containers: [raw('c')],
        ...(nsLabels ? { namespaceSelector: { matchLabels: nsLabels } } : {}),
      });
      assert.equal(matchSidecarSet(set, pod, 'app1', namespaces).matched, expected);
    });
  }
});

describe('GetSidecarTransferEnvs sources', () => {
  it('a container injected earlier is a source of transferEnv, though not of shared mounts', () => {
    const pod = makePod({
      labels: { app: 'suxing-test' },
      containers: [
        { name: 'app', image: 'app', volumeMounts: [{ name: 'v', mountPath: '/app' }] },
        {
          name: 'mesh',
          image: 'mesh',
          env: [
            { name: 'IS_INJECTED', value: 'true' },
            { name: 'MESH_PORT', value: '15001' },
          ],
          volumeMounts: [{ name: 'w', mountPath: '/mesh' }],
        },
      ],
    });
    const set = sidecarSet('s', {
      containers: [
        raw('x', {
          shareVolumePolicy: { type: 'enabled' },
          transferEnv: [{ sourceContainerName: 'mesh', envName: 'MESH_PORT' }],
        }),
      ],
    });
    const x = inject(pod, [set]).spec.containers[2];
    assert.deepEqual(x?.env, [
      { name: 'IS_INJECTED', value: 'true' },
      { name: 'MESH_PORT', value: '15001' },
    ]);
    assert.deepEqual(x.volumeMounts, [{ name: 'v', mountPath: '/app' }]);
  });
});

describe('IsInjectedSidecarContainerInPod', () => {
  const sharedPaths = (env: { name: string; value: string }[]): string[] => {
    const pod = makePod({
      labels: { app: 'suxing-test' },
      containers: [
        { name: 'other', image: 'o', env, volumeMounts: [{ name: 'w', mountPath: '/other' }] },
      ],
    });
    const set = sidecarSet('s', {
      containers: [raw('x', { shareVolumePolicy: { type: 'enabled' } })],
    });
    return (inject(pod, [set]).spec.containers[1]?.volumeMounts ?? []).map((m) => m.mountPath);
  };
  const cases: [string, { name: string; value: string }[], string[]][] = [
    ['IS_INJECTED=true: injected, no source', [{ name: 'IS_INJECTED', value: 'true' }], []],
    ['IS_INJECTED=TRUE: an app container', [{ name: 'IS_INJECTED', value: 'TRUE' }], ['/other']],
    [
      'the first IS_INJECTED counts: false then true is an app container',
      [
        { name: 'IS_INJECTED', value: 'false' },
        { name: 'IS_INJECTED', value: 'true' },
      ],
      ['/other'],
    ],
  ];
  for (const [title, env, expected] of cases) {
    it(title, () => {
      assert.deepEqual(sharedPaths(env), expected);
    });
  }
});
