import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { InjectOptions } from '../../../src/core/inject/inject.js';
import { injectPod } from '../../../src/core/inject/inject.js';
import type { Container, Pod } from '../../../src/core/api/k8s-types.js';
import { parsePodSidecarSetHashes } from '../../../src/core/pod-annotations/pod-hash-annotation.js';
import type { SidecarSet, SidecarSetRevision } from '../../../src/core/api/sidecarset-types.js';
import { FIXED_NOW, makePod, makeSidecarSet, sidecar } from '../../support/factories.js';
import { openKruisePod1 } from '../../support/openkruise-pods.js';

const options = (extra: Partial<InjectOptions> = {}): InjectOptions => ({
  now: FIXED_NOW,
  random: () => 0.5,
  revisions: () => [],
  ...extra,
});

const names = (containers: readonly Container[] | undefined): string[] =>
  (containers ?? []).map((c) => c.name);

function inject(pod: Pod, sets: SidecarSet[], extra: Partial<InjectOptions> = {}): Pod {
  return injectPod(pod, sets, options(extra)).pod;
}

// The fixtures of OpenKruise's pod webhook tests (pkg/webhook/pod/mutating/sidecarset_test.go), reduced to what each test reads.
const pod1 = openKruisePod1;

const sidecarSet1 = (): SidecarSet =>
  makeSidecarSet(
    'sidecarset1',
    {
      selector: { matchLabels: { app: 'suxing-test' } },
      initContainers: [
        sidecar('init-2', { podInjectPolicy: 'AfterAppContainer', image: 'busybox:1.0.0' }),
        sidecar('init-1', { podInjectPolicy: 'AfterAppContainer', image: 'busybox:1.0.0' }),
      ],
      containers: [
        sidecar('dns-f', { image: 'dns-f-image:1.0' }),
        sidecar('log-agent', { podInjectPolicy: 'AfterAppContainer', image: 'log-agent:1.0' }),
      ],
    },
    { 'kruise.io/sidecarset-hash': 'c4k2dbb95d' },
  );

describe('container placement', () => {
  it('puts Before sidecars in front, After sidecars behind, inits sorted after the pod inits', () => {
    const out = inject(pod1(), [sidecarSet1()]);
    assert.deepEqual(names(out.spec.containers), ['dns-f', 'nginx', 'log-agent']);
    assert.deepEqual(names(out.spec.initContainers), ['init-0', 'init-1', 'init-2']);
    for (const init of out.spec.initContainers?.slice(1) ?? []) {
      assert.deepEqual(init.env, [{ name: 'IS_INJECTED', value: 'true' }]);
    }
  });

  const merge = (
    pod: string[],
    injected: [string, 'BeforeAppContainer' | 'AfterAppContainer'][],
    expected: string[],
  ): void => {
    const set = makeSidecarSet('s', {
      containers: injected.map(([n, p]) => sidecar(n, { podInjectPolicy: p })),
    });
    const out = inject(makePod({ containers: pod.map((n) => ({ name: n, image: 'x' })) }), [set]);
    assert.deepEqual(names(out.spec.containers), expected);
  };

  // TestMergeSidecarContainers, the injected list already sorted by name.
  const all: [string, 'BeforeAppContainer' | 'AfterAppContainer'][] = [
    ['new-sidecar-1', 'BeforeAppContainer'],
    ['sidecar-1', 'AfterAppContainer'],
    ['sidecar-2', 'AfterAppContainer'],
  ];
  it('merges Before and After around the app', () => {
    merge(['app-container'], all, ['new-sidecar-1', 'app-container', 'sidecar-1', 'sidecar-2']);
  });
  it('merges only Before', () => {
    merge(['app-container'], all.slice(0, 1), ['new-sidecar-1', 'app-container']);
  });
  it('merges only After', () => {
    merge(['app-container'], all.slice(1), ['app-container', 'sidecar-1', 'sidecar-2']);
  });
  it('replaces same-named pod containers where they stand', () => {
    merge(['sidecar-1', 'app-container', 'sidecar-2'], all, [
      'new-sidecar-1',
      'sidecar-1',
      'app-container',
      'sidecar-2',
    ]);
  });
  it('merges into an empty pod list', () => {
    merge([], all, ['new-sidecar-1', 'sidecar-1', 'sidecar-2']);
  });

  it('replaces a same-named pod container wholesale, losing its fields', () => {
    const pod = makePod({
      containers: [
        { name: 'app', image: 'app:1' },
        { name: 's-c', image: 'old:0', args: ['--old'] },
      ],
    });
    const out = inject(pod, [makeSidecarSet('s')]);
    assert.deepEqual(names(out.spec.containers), ['app', 's-c']);
    assert.equal(out.spec.containers[1]?.image, 's-c:1');
    assert.equal(out.spec.containers[1].args, undefined);
  });

  // TestInjectInitContainerSort
  it('sorts injected init containers by name; Before goes in front of the pod inits', () => {
    const set = makeSidecarSet('s', {
      containers: [],
      initContainers: [
        sidecar('c-init', { podInjectPolicy: 'BeforeAppContainer' }),
        sidecar('a-init', { podInjectPolicy: 'AfterAppContainer' }),
        sidecar('b-init', { podInjectPolicy: 'BeforeAppContainer' }),
      ],
    });
    const pod = makePod({
      initContainers: [
        { name: 'app1-init', image: 'x' },
        { name: 'app2-init', image: 'x' },
      ],
    });
    assert.deepEqual(names(inject(pod, [set]).spec.initContainers), [
      'b-init',
      'c-init',
      'app1-init',
      'app2-init',
      'a-init',
    ]);
  });

  it('strips the SidecarSet-only fields from injected containers', () => {
    const set = makeSidecarSet('s', {
      containers: [sidecar('x', { transferEnv: [{ sourceContainerName: 'app', envName: 'A' }] })],
    });
    const c = inject(makePod(), [set]).spec.containers[0];
    for (const field of [
      'podInjectPolicy',
      'shareVolumePolicy',
      'upgradeStrategy',
      'transferEnv',
    ]) {
      assert.equal(Object.hasOwn(c ?? {}, field), false, field);
    }
  });

  it('orders sidecars of several SidecarSets by SidecarSet name, spec order inside', () => {
    const b = makeSidecarSet('b', { containers: [sidecar('b2'), sidecar('b1')] });
    const a = makeSidecarSet('a', { containers: [sidecar('a1')] });
    assert.deepEqual(names(inject(makePod(), [b, a]).spec.containers), ['a1', 'b2', 'b1', 'app']);
  });
});

describe('volumes', () => {
  const sidecarsetWithTransferEnv = (): SidecarSet =>
    makeSidecarSet('sidecarset2', {
      selector: { matchLabels: { app: 'suxing-test' } },
      initContainers: [
        sidecar('dns-e', {
          podInjectPolicy: 'AfterAppContainer',
          volumeMounts: [{ name: 'volume-1', mountPath: '/a/b/c' }],
          transferEnv: [{ sourceContainerName: 'nginx', envName: 'hello2' }],
        }),
      ],
      containers: [
        sidecar('dns-f', {
          volumeMounts: [{ name: 'volume-1', mountPath: '/a/b/c' }],
          transferEnv: [{ sourceContainerName: 'nginx', envName: 'hello2' }],
        }),
      ],
      volumes: [
        { name: 'volume-1', emptyDir: {} },
        { name: 'volume-2', emptyDir: {} },
      ],
    });

  it('adds only the volumes an injected container mounts (TestSidecarVolumesAppend)', () => {
    const out = inject(pod1(), [sidecarsetWithTransferEnv()]);
    assert.deepEqual(
      out.spec.volumes?.map((v) => v.name),
      ['volume-a', 'volume-b', 'volume-1'],
    );
  });

  it("keeps the pod's own volume on a name clash", () => {
    const pod = pod1();
    pod.spec.volumes = [{ name: 'volume-1', hostPath: { path: '/pod' } }];
    const out = inject(pod, [sidecarsetWithTransferEnv()]);
    assert.deepEqual(out.spec.volumes, [{ name: 'volume-1', hostPath: { path: '/pod' } }]);
  });

  it('adds a volume two SidecarSets share once, the first one collected winning', () => {
    const mk = (name: string, medium: string): SidecarSet =>
      makeSidecarSet(name, {
        containers: [sidecar(`${name}-c`, { volumeMounts: [{ name: 'shared', mountPath: '/s' }] })],
        volumes: [{ name: 'shared', emptyDir: { medium } }],
      });
    const out = inject(makePod(), [mk('b', 'Memory'), mk('a', '')]);
    assert.deepEqual(out.spec.volumes, [{ name: 'shared', emptyDir: { medium: '' } }]);
  });

  it('adds volumes named by volumeDevices too; unknown names are skipped with a warning', () => {
    const set = makeSidecarSet('s', {
      containers: [
        sidecar('x', {
          volumeMounts: [{ name: 'missing', mountPath: '/m' }],
          volumeDevices: [{ name: 'disk0', devicePath: '/dev/xvda' }],
        }),
      ],
      volumes: [{ name: 'disk0', persistentVolumeClaim: { claimName: 'c' } }],
    });
    const outcome = injectPod(makePod(), [set], options());
    assert.deepEqual(outcome.pod.spec.volumes, [
      { name: 'disk0', persistentVolumeClaim: { claimName: 'c' } },
    ]);
    assert.match(outcome.warnings.join('\n'), /volume missing/);
  });
});

describe('shareVolumePolicy', () => {
  const podWithStaragent = (): Pod => {
    const pod = pod1();
    delete pod.spec.initContainers;
    pod.spec.containers[0]?.volumeMounts?.push({
      name: 'volume-staragent',
      mountPath: '/staragent',
    });
    pod.spec.volumes?.push({ name: 'volume-staragent' });
    return pod;
  };
  const staragentSet = (): SidecarSet =>
    makeSidecarSet('s', {
      initContainers: [
        sidecar('dns-e', {
          shareVolumePolicy: { type: 'enabled' },
          podInjectPolicy: 'AfterAppContainer',
          volumeMounts: [
            { name: 'volume-1', mountPath: '/g/h/i' },
            { name: 'volume-2', mountPath: '/j/k/l' },
            { name: 'volume-staragent', mountPath: '/staragent' },
          ],
        }),
      ],
      containers: [
        sidecar('dns-f', {
          shareVolumePolicy: { type: 'enabled' },
          volumeMounts: [
            { name: 'volume-1', mountPath: '/a/b/c' },
            { name: 'volume-2', mountPath: '/d/e/f' },
            { name: 'volume-staragent', mountPath: '/staragent' },
          ],
        }),
      ],
      volumes: [
        { name: 'volume-1', emptyDir: {} },
        { name: 'volume-2', emptyDir: {} },
        { name: 'volume-staragent', emptyDir: {} },
      ],
    });

  it('gives the sidecar the app mounts whose paths it does not use (TestPodVolumeMountsAppend)', () => {
    const out = inject(podWithStaragent(), [staragentSet()]);
    const paths = (c: Container | undefined): string[] =>
      (c?.volumeMounts ?? []).map((m) => m.mountPath).sort();
    assert.deepEqual(paths(out.spec.initContainers?.[0]), [
      '/a/b',
      '/e/f',
      '/g/h/i',
      '/j/k/l',
      '/staragent',
    ]);
    assert.deepEqual(paths(out.spec.containers[0]), [
      '/a/b',
      '/a/b/c',
      '/d/e/f',
      '/e/f',
      '/staragent',
    ]);
    // The sidecar's own mount wins at a shared path.
    const staragent = out.spec.containers[0]?.volumeMounts?.filter(
      (m) => m.mountPath === '/staragent',
    );
    assert.deepEqual(staragent, [{ name: 'volume-staragent', mountPath: '/staragent' }]);
  });

  it('copies the env vars a shared subPathExpr refers to', () => {
    const pod = makePod({
      containers: [
        {
          name: 'app',
          image: 'a',
          env: [
            { name: 'POD_NAME', value: 'p' },
            { name: 'OD_NAME', value: 'o' },
            { name: 'OTHER', value: 'x' },
          ],
          volumeMounts: [
            {
              name: 'v',
              mountPath: '/e/expansion',
              subPathExpr: 'foo/$(POD_NAME)/$(OD_NAME)/conf',
            },
            { name: 'v', mountPath: '/plain', subPath: 'foo' },
          ],
        },
      ],
    });
    const set = makeSidecarSet('s', {
      containers: [sidecar('x', { shareVolumePolicy: { type: 'enabled' } })],
    });
    const c = inject(pod, [set]).spec.containers[0];
    assert.deepEqual(
      c?.env?.map((e) => e.name),
      ['IS_INJECTED', 'POD_NAME', 'OD_NAME'],
    );
    assert.deepEqual(
      c.volumeMounts?.map((m) => m.mountPath),
      ['/e/expansion', '/plain'],
    );
  });

  it('never takes mounts from containers injected earlier', () => {
    const pod = makePod({
      containers: [
        { name: 'app', image: 'a', volumeMounts: [{ name: 'v', mountPath: '/app' }] },
        {
          name: 'old-sidecar',
          image: 's',
          env: [{ name: 'IS_INJECTED', value: 'true' }],
          volumeMounts: [{ name: 'w', mountPath: '/sidecar' }],
        },
      ],
    });
    const set = makeSidecarSet('s', {
      containers: [sidecar('x', { shareVolumePolicy: { type: 'enabled' } })],
    });
    const c = inject(pod, [set]).spec.containers[0];
    assert.deepEqual(
      c?.volumeMounts?.map((m) => m.mountPath),
      ['/app'],
    );
  });

  it('shares volumeDevices only with shareVolumeDevicePolicy enabled (TestPodVolumeDevicesAppend)', () => {
    const pod = makePod({
      containers: [
        {
          name: 'app',
          image: 'a',
          volumeDevices: [
            { name: 'volume-3', devicePath: '/origin-1' },
            { name: 'volume-4', devicePath: '/share' },
          ],
        },
      ],
    });
    const mk = (enabled: boolean): SidecarSet =>
      makeSidecarSet('s', {
        containers: [
          sidecar('x', {
            volumeDevices: [{ name: 'disk0', devicePath: '/dev/own' }],
            ...(enabled ? { shareVolumeDevicePolicy: { type: 'enabled' } } : {}),
          }),
        ],
        volumes: [{ name: 'disk0', persistentVolumeClaim: { claimName: 'c' } }],
      });
    const devices = (set: SidecarSet): string[] =>
      (inject(pod, [set]).spec.containers[0]?.volumeDevices ?? []).map((d) => d.devicePath);
    assert.deepEqual(devices(mk(false)), ['/dev/own']);
    assert.deepEqual(devices(mk(true)), ['/dev/own', '/origin-1', '/share']);
  });
});

describe('transferEnv', () => {
  it('copies env after IS_INJECTED (TestSidecarSetTransferEnv)', () => {
    const set = makeSidecarSet('s', {
      containers: [
        sidecar('dns-f', { transferEnv: [{ sourceContainerName: 'nginx', envName: 'hello2' }] }),
      ],
    });
    assert.deepEqual(inject(pod1(), [set]).spec.containers[0]?.env, [
      { name: 'IS_INJECTED', value: 'true' },
      { name: 'hello2', value: 'world2' },
    ]);
  });

  const source = (): Pod =>
    makePod({
      labels: { app: 'web', 'source-container': 'main' },
      annotations: { src: 'main' },
      containers: [
        {
          name: 'main',
          image: 'm',
          env: [
            { name: 'C', value: 'c' },
            { name: 'A', value: 'a' },
            { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'OWN', value: 'from-app' },
            { name: 'A', value: 'a-last' },
          ],
        },
      ],
    });

  const envOf = (
    transferEnv: NonNullable<SidecarSet['spec']['containers']>[number]['transferEnv'],
    own = [{ name: 'OWN', value: 'mine' }],
  ) =>
    inject(source(), [
      makeSidecarSet('s', {
        containers: [sidecar('x', { env: own, ...(transferEnv ? { transferEnv } : {}) })],
      }),
    ]).spec.containers[0]?.env;

  it('looks names up sorted, copies valueFrom, keeps the last duplicate, skips missing ones', () => {
    assert.deepEqual(
      envOf([{ sourceContainerName: 'main', envName: 'C', envNames: ['B', 'A', 'MISSING'] }]),
      [
        { name: 'OWN', value: 'mine' },
        { name: 'IS_INJECTED', value: 'true' },
        { name: 'A', value: 'a-last' },
        { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'C', value: 'c' },
      ],
    );
  });

  it("keeps the sidecar's own value", () => {
    assert.deepEqual(envOf([{ sourceContainerName: 'main', envName: 'OWN' }]), [
      { name: 'OWN', value: 'mine' },
      { name: 'IS_INJECTED', value: 'true' },
    ]);
  });

  it('reads the source container from a pod label or annotation', () => {
    for (const fieldPath of [
      "metadata.labels['source-container']",
      "metadata.annotations['src']",
    ]) {
      assert.deepEqual(
        envOf(
          [
            {
              sourceContainerNameFrom: { fieldRef: { apiVersion: 'v1', fieldPath } },
              envName: 'C',
            },
          ],
          [],
        ),
        [
          { name: 'IS_INJECTED', value: 'true' },
          { name: 'C', value: 'c' },
        ],
        fieldPath,
      );
    }
  });

  it('skips an entry whose fieldRef is not a label or annotation, with a warning', () => {
    const set = makeSidecarSet('s', {
      containers: [
        sidecar('x', {
          transferEnv: [
            { sourceContainerNameFrom: { fieldRef: { fieldPath: 'metadata.name' } }, envName: 'C' },
          ],
        }),
      ],
    });
    const outcome = injectPod(source(), [set], options());
    assert.deepEqual(outcome.pod.spec.containers[0]?.env, [{ name: 'IS_INJECTED', value: 'true' }]);
    assert.match(outcome.warnings.join(), /metadata\.name is not supported/);
  });

  it('adds a duplicate IS_INJECTED when the sidecar declares one (OpenKruise quirk)', () => {
    assert.deepEqual(envOf(undefined, [{ name: 'IS_INJECTED', value: 'false' }]), [
      { name: 'IS_INJECTED', value: 'false' },
      { name: 'IS_INJECTED', value: 'true' },
    ]);
  });
});

describe('imagePullSecrets', () => {
  // TestMergeSidecarSecrets
  const cases: [string, { name: string }[] | undefined, number][] = [
    [
      'pod with an overlap and its own duplicate',
      [{ name: 's2' }, { name: 's3' }, { name: 's3' }],
      4,
    ],
    ['pod with distinct secrets', [{ name: 's3' }, { name: 's4' }, { name: 's5' }], 6],
    ['pod without secrets', undefined, 3],
  ];
  for (const [title, podSecrets, expected] of cases) {
    it(title, () => {
      const pod = makePod();
      if (podSecrets) pod.spec.imagePullSecrets = podSecrets;
      const set = makeSidecarSet('s', {
        imagePullSecrets: [{ name: 's0' }, { name: 's1' }, { name: 's2' }],
      });
      assert.equal(inject(pod, [set]).spec.imagePullSecrets?.length, expected);
    });
  }
  it('leaves the field unset when nobody has secrets', () => {
    assert.equal(
      Object.hasOwn(inject(makePod(), [makeSidecarSet('s')]).spec, 'imagePullSecrets'),
      false,
    );
  });
});

describe('patchPodMetadata', () => {
  it('merges JSON, retains and overwrites (TestInjectMetadata)', () => {
    const a = makeSidecarSet('a', {
      patchPodMetadata: [
        { annotations: { key1: '{"log-agent":1}' }, patchPolicy: 'MergePatchJson' },
        { annotations: { key: 'envoy=1,log=2' }, patchPolicy: 'Retain' },
      ],
    });
    const b = makeSidecarSet('b', {
      patchPodMetadata: [{ annotations: { key1: '{"envoy":2}' }, patchPolicy: 'MergePatchJson' }],
    });
    const out = inject(makePod(), [b, a]);
    assert.equal(out.metadata.annotations?.['key1'], '{"envoy":2,"log-agent":1}');
    assert.equal(out.metadata.annotations['key'], 'envoy=1,log=2');
  });

  const policies: [string, string, string | undefined, string][] = [
    ['Retain keeps an existing value, even an empty one', 'Retain', '', ''],
    ['Retain sets an absent key', 'Retain', undefined, 'new'],
    ['Overwrite replaces', 'Overwrite', 'old', 'new'],
    ['MergePatchJson sets an absent key verbatim', 'MergePatchJson', undefined, 'new'],
  ];
  for (const [title, patchPolicy, existing, expected] of policies) {
    it(title, () => {
      const pod = makePod(existing === undefined ? {} : { annotations: { k: existing } });
      const set = makeSidecarSet('s', {
        patchPodMetadata: [{ annotations: { k: 'new' }, patchPolicy }],
      });
      assert.equal(inject(pod, [set]).metadata.annotations?.['k'], expected);
    });
  }

  it('MergePatchJson deletes keys patched with null and rejects invalid JSON', () => {
    const pod = makePod({ annotations: { k: '{"a":1,"b":{"c":2}}' } });
    const set = (value: string): SidecarSet =>
      makeSidecarSet('s', {
        patchPodMetadata: [{ annotations: { k: value }, patchPolicy: 'MergePatchJson' }],
      });
    assert.equal(
      inject(pod, [set('{"b":{"c":null,"d":3}}')]).metadata.annotations?.['k'],
      '{"a":1,"b":{"d":3}}',
    );
    assert.throws(() => inject(pod, [set('{not json')]), { code: 'SI_ERR_BAD_MERGE_PATCH' });
  });
});

describe('annotations', () => {
  it('records hashes and the injected list in OpenKruise format', () => {
    const set3 = makeSidecarSet(
      'sidecarset3',
      { containers: [sidecar('log-agent'), sidecar('dns-f')] },
      {
        'kruise.io/sidecarset-hash': 'gm967682cm',
        'kruise.io/sidecarset-hash-without-image': 'noimg3',
      },
    );
    set3.status = { latestRevision: 'sidecarset3-rev' };
    const set1 = makeSidecarSet('sidecarset1', {}, { 'kruise.io/sidecarset-hash': 'c4k2dbb95d' });
    const out = inject(makePod(), [set3, set1]);
    const a = out.metadata.annotations ?? {};
    assert.equal(
      a['kruise.io/sidecarset-hash'],
      '{"sidecarset1":{"updateTimestamp":"2026-07-02T10:00:00Z","hash":"c4k2dbb95d","sidecarSetName":"sidecarset1","sidecarList":["sidecarset1-c"]},' +
        '"sidecarset3":{"updateTimestamp":"2026-07-02T10:00:00Z","hash":"gm967682cm","sidecarSetName":"sidecarset3","sidecarList":["dns-f","log-agent"],"controllerRevision":"sidecarset3-rev"}}',
    );
    assert.equal(
      parsePodSidecarSetHashes(a['kruise.io/sidecarset-hash-without-image'], 'k')['sidecarset3']
        ?.hash,
      'noimg3',
    );
    assert.equal(a['kruise.io/sidecarset-injected-list'], 'sidecarset1,sidecarset3');
  });

  it('keeps entries of other SidecarSets, accepts the legacy format, unions the injected list', () => {
    const pod = makePod({
      annotations: {
        'kruise.io/sidecarset-hash': '{"other":"h0"}',
        'kruise.io/sidecarset-injected-list': 'other',
      },
    });
    const a = inject(pod, [makeSidecarSet('mine')]).metadata.annotations ?? {};
    const hashes = parsePodSidecarSetHashes(a['kruise.io/sidecarset-hash'], 'k');
    assert.deepEqual(hashes['other'], {
      updateTimestamp: null,
      hash: 'h0',
      sidecarSetName: 'other',
      sidecarList: null,
    });
    assert.equal(hashes['mine']?.hash, 'mine-hash');
    assert.equal(a['kruise.io/sidecarset-injected-list'], 'mine,other');
  });

  it('rejects a pod whose hash annotation is not JSON', () => {
    const pod = makePod({ annotations: { 'kruise.io/sidecarset-hash': 'nope' } });
    assert.throws(() => inject(pod, [makeSidecarSet('s')]), { code: 'SI_ERR_BAD_HASH_ANNOTATION' });
  });

  it('lists native-sidecar init containers in sidecarList, plain ones not', () => {
    const set = makeSidecarSet('s', {
      containers: [],
      initContainers: [
        sidecar('native', { restartPolicy: 'Always', podInjectPolicy: 'AfterAppContainer' }),
        sidecar('plain', { podInjectPolicy: 'AfterAppContainer' }),
      ],
    });
    const a = inject(makePod(), [set]).metadata.annotations ?? {};
    assert.deepEqual(
      parsePodSidecarSetHashes(a['kruise.io/sidecarset-hash'], 'k')['s']?.sidecarList,
      ['native'],
    );
  });
});

describe('hot upgrade injection', () => {
  it('emits the -1/-2 pair with version env and annotations (TestInjectHotUpgradeSidecar)', () => {
    const set = makeSidecarSet('sidecarset1', {
      containers: [
        sidecar('dns-f', {
          upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1.0' },
        }),
      ],
    });
    const out = inject(makePod(), [set]);
    assert.deepEqual(names(out.spec.containers), ['dns-f-1', 'dns-f-2', 'app']);
    assert.equal(out.spec.containers[0]?.image, 'dns-f:1');
    assert.equal(out.spec.containers[1]?.image, 'empty:1.0');
    assert.deepEqual(
      out.spec.containers[1].env?.map((e) => e.name),
      ['IS_INJECTED', 'SIDECARSET_VERSION', 'SIDECARSET_VERSION_ALT'],
    );
    const a = out.metadata.annotations ?? {};
    assert.equal(a['kruise.io/sidecarset-working-hotupgrade-container'], '{"dns-f":"dns-f-1"}');
    assert.equal(a['version.sidecarset.kruise.io/dns-f-1'], '1');
    assert.equal(a['versionalt.sidecarset.kruise.io/dns-f-1'], '0');
    assert.equal(a['version.sidecarset.kruise.io/dns-f-2'], '0');
    assert.equal(a['versionalt.sidecarset.kruise.io/dns-f-2'], '1');
    assert.deepEqual(
      parsePodSidecarSetHashes(a['kruise.io/sidecarset-hash'], 'k')['sidecarset1']?.sidecarList,
      ['dns-f'],
    );
  });
});

describe('canary SidecarSets', () => {
  it('drop their base for the pods both match', () => {
    const base = makeSidecarSet('base', {
      containers: [sidecar('proxy', { image: 'proxy:stable' })],
    });
    const canary = makeSidecarSet(
      'canary',
      { containers: [sidecar('proxy', { image: 'proxy:canary' })] },
      { 'apps.kruise.io/sidecarset-canary': 'true', 'apps.kruise.io/sidecarset-base': 'base' },
    );
    const outcome = injectPod(makePod(), [base, canary], options());
    assert.deepEqual(outcome.injected, ['canary']);
    assert.equal(outcome.pod.spec.containers[0]?.image, 'proxy:canary');
  });
});

describe('injectionStrategy.revision', () => {
  const history: SidecarSetRevision[] = [
    {
      name: 'rev-1',
      sidecarSetName: 's',
      customVersion: 'v1',
      revision: 1,
      spec: { containers: [sidecar('old', { image: 'old:1' })] },
    },
    {
      name: 'rev-2',
      sidecarSetName: 's',
      customVersion: 'v1',
      revision: 2,
      annotations: { 'kruise.io/sidecarset-hash': 'hash-rev-2' },
      spec: {
        containers: [sidecar('old', { image: 'old:2' })],
        initContainers: [sidecar('old-init')],
      },
    },
  ];
  const withRevision = (
    revision: NonNullable<NonNullable<SidecarSet['spec']['injectionStrategy']>['revision']>,
    strategy = {},
  ) =>
    makeSidecarSet('s', {
      containers: [sidecar('new', { image: 'new:3' }), sidecar('new2'), sidecar('new3')],
      initContainers: [sidecar('init-a'), sidecar('init-b')],
      injectionStrategy: { revision },
      updateStrategy: { type: 'RollingUpdate', ...strategy },
    });
  const run = (set: SidecarSet, random = 0.5) =>
    injectPod(makePod(), [set], options({ revisions: () => history, random: () => random }));

  it('injects the newest revision with that custom version, not the current spec', () => {
    const out = run(withRevision({ customVersion: 'v1', policy: 'Always' })).pod;
    assert.deepEqual(names(out.spec.containers), ['old', 'app']);
    assert.deepEqual(names(out.spec.initContainers), ['old-init']);
    const hashes = parsePodSidecarSetHashes(
      out.metadata.annotations?.['kruise.io/sidecarset-hash'],
      'k',
    );
    assert.equal(hashes['s']?.hash, 'hash-rev-2');
    assert.equal(hashes['s'].controllerRevision, 'rev-2');
  });

  it('prefers revisionName over customVersion and fails on an unknown revision', () => {
    assert.equal(
      run(withRevision({ revisionName: 'rev-1', customVersion: 'v1' })).pod.spec.containers[0]
        ?.image,
      'old:1',
    );
    assert.throws(() => run(withRevision({ revisionName: 'rev-9' })), {
      code: 'SI_ERR_REVISION_NOT_FOUND',
    });
  });

  it('Partial: partition percent decides by chance; selector and pause pick history', () => {
    const partial = (strategy: object, random: number): string | undefined =>
      run(withRevision({ customVersion: 'v1', policy: 'Partial' }, strategy), random).pod.spec
        .containers[0]?.image;
    assert.equal(partial({ partition: '30%' }, 0.2), 'old:2');
    assert.equal(partial({ partition: '30%' }, 0.4), 'new:3');
    assert.equal(partial({ partition: 5 }, 0), 'new:3');
    assert.equal(partial({ paused: true }, 0.9), 'old:2');
    assert.equal(partial({ selector: { matchLabels: { canary: 'true' } } }, 0.9), 'old:2');
    assert.throws(() => partial({ partition: 'abc%' }, 0.5), { code: 'SI_ERR_BAD_PERCENT' });
  });
});

describe('input', () => {
  it('is never mutated', () => {
    const pod = pod1();
    const set = sidecarSet1();
    const before = structuredClone({ pod, set });
    inject(pod, [set]);
    assert.deepEqual({ pod, set }, before);
  });
});

describe('containers about to be replaced', () => {
  it('are not a source of shared mounts or transferEnv, so re-injection is stable', () => {
    const pod = makePod({
      containers: [
        {
          name: 'app',
          image: 'a',
          env: [{ name: 'TZ', value: 'UTC' }],
          volumeMounts: [{ name: 'v', mountPath: '/app' }],
        },
        {
          name: 'x',
          image: 'stale',
          env: [{ name: 'TZ', value: 'stale' }],
          volumeMounts: [{ name: 'w', mountPath: '/stale' }],
        },
      ],
    });
    const set = makeSidecarSet('s', {
      containers: [
        sidecar('x', {
          shareVolumePolicy: { type: 'enabled' },
          transferEnv: [
            { sourceContainerName: 'x', envName: 'TZ' },
            { sourceContainerName: 'app', envName: 'TZ' },
          ],
        }),
      ],
    });
    const c = inject(pod, [set]).spec.containers[1];
    assert.deepEqual(c?.env, [
      { name: 'IS_INJECTED', value: 'true' },
      { name: 'TZ', value: 'UTC' },
    ]);
    assert.deepEqual(c.volumeMounts, [{ name: 'v', mountPath: '/app' }]);
  });
});

describe('injected containers', () => {
  it('list their fields in core/v1 order, unknown ones last', () => {
    const set = makeSidecarSet('s', {
      containers: [
        sidecar('x', {
          volumeMounts: [{ name: 'v', mountPath: '/v' }],
          futureField: 1,
          args: ['a'],
          command: ['c'],
        }),
      ],
      volumes: [{ name: 'v', emptyDir: {} }],
    });
    const c = inject(makePod(), [set]).spec.containers[0] ?? { name: '' };
    assert.deepEqual(Object.keys(c), [
      'name',
      'image',
      'command',
      'args',
      'env',
      'volumeMounts',
      'futureField',
    ]);
  });
});
