import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Pod } from '../../../src/core/api/k8s-types.js';
import { applyPodUpgrade } from '../../../src/core/rollout/simulate.js';
import { sidecarSetContext } from '../../../src/core/upgrade/context.js';
import {
  imagesEqual,
  isDigestImage,
  parseImage,
  stripImageIdScheme,
} from '../../../src/core/api/image-compare.js';
import { planUpgrade } from '../../../src/core/upgrade/plan.js';
import {
  parsePodSidecarSetHashes,
  readHashes,
  recordedHash,
} from '../../../src/core/pod-annotations/pod-hash-annotation.js';
import {
  formatInPlaceUpdateStates,
  readInPlaceUpdateStates,
} from '../../../src/core/pod-annotations/in-place-update-state.js';
import {
  hasEverySidecar,
  isReady,
  isStateConsistent,
  upgradability,
} from '../../../src/core/upgrade/pod-state.js';
import { inPlaceUpdateState, upgradePod, upgradeSidecarSet } from '../../support/upgrade-pods.js';

const now = new Date('2026-07-02T10:00:00.500Z');
const ctx = sidecarSetContext(upgradeSidecarSet());

describe('hash annotation reading (TestGetPodSidecarSetRevision)', () => {
  const cases: [string | undefined, string][] = [
    ['{"test-sidecarset":{"hash":"aaa","sidecarSetName":"test-sidecarset"}}', 'aaa'],
    ['{"test-sidecarset":"aaa"}', 'aaa'],
    ['garbage', ''],
    ['[1]', ''],
    ['{"test-sidecarset":"aaa","other":{"hash":"x"}}', ''],
    ['{"test-sidecarset":5}', ''],
    ['{"test-sidecarset":{"hash":5}}', ''],
    ['{"other":{"hash":"x"}}', ''],
    [undefined, ''],
    ['', ''],
  ];
  for (const [value, expected] of cases) {
    it(`${String(value)} → "${expected}"`, () => {
      assert.equal(recordedHash(value, 'test-sidecarset'), expected);
    });
  }

  it('readHashes names the form', () => {
    assert.equal(readHashes('{"a":"b"}').form, 'legacy');
    assert.equal(readHashes('{}').form, 'object');
    assert.equal(readHashes('x').form, 'invalid');
    assert.equal(readHashes(undefined).form, 'absent');
  });
});

describe('in-place update state', () => {
  it('reads and writes in Go order, keeping extra fields', () => {
    const raw =
      '{"b":{"lastContainerStatuses":{"y":{"imageID":"i"},"x":null},"updateImages":true,"revision":"r","updateTimestamp":"t"},"a":null}';
    const states = readInPlaceUpdateStates(raw);
    assert.ok(states);
    assert.equal(
      formatInPlaceUpdateStates(states),
      '{"b":{"revision":"r","updateTimestamp":"t","lastContainerStatuses":{"x":{},"y":{"imageID":"i"}},"updateImages":true}}',
    );
    assert.deepEqual(readInPlaceUpdateStates('null'), {});
  });

  const bad = [
    'x',
    '[]',
    '{"a":1}',
    '{"a":{"revision":1}}',
    '{"a":{"lastContainerStatuses":[]}}',
    '{"a":{"lastContainerStatuses":{"c":1}}}',
    '{"a":{"lastContainerStatuses":{"c":{"imageID":1}}}}',
  ];
  for (const value of bad) {
    it(`${value} does not parse`, () => {
      assert.equal(readInPlaceUpdateStates(value), undefined);
    });
  }
});

describe('images', () => {
  const digest = 'busybox@sha256:' + 'a'.repeat(64);
  it('parses references without normalising', () => {
    assert.deepEqual(parseImage('docker.io/library/busybox:1.36'), {
      repository: 'docker.io/library/busybox',
      tag: '1.36',
      digest: '',
    });
    assert.equal(parseImage('repo/UPPER'), undefined);
    assert.ok(isDigestImage(digest));
    assert.ok(!isDigestImage('busybox:1'));
    assert.deepEqual(parseImage(`docker.io/busybox@sha256:${'b'.repeat(64)}`), {
      repository: 'docker.io/busybox',
      tag: '',
      digest: `sha256:${'b'.repeat(64)}`,
    });
  });

  it('refuses what reference.Parse refuses: long names, digests go-digest rejects', () => {
    assert.equal(parseImage(`${'a'.repeat(256)}:1`), undefined);
    assert.ok(parseImage(`${'a'.repeat(255)}:1`));
    for (const bad of [
      `busybox@sha256:${'a'.repeat(32)}`,
      `busybox@sha256:${'A'.repeat(64)}`,
      `busybox@md5:${'a'.repeat(32)}`,
    ]) {
      assert.equal(parseImage(bad), undefined, bad);
      assert.ok(!isDigestImage(bad), bad);
    }
    assert.ok(isDigestImage(`busybox@sha512:${'a'.repeat(128)}`));
  });
  const cases: [string, string, boolean][] = [
    [digest, digest, true],
    [digest, 'busybox:1', false],
    ['busybox:1', 'busybox:1', true],
    ['busybox:1', 'docker.io/library/busybox:1', false],
    ['busybox:1', 'Bad Ref', false],
    // TestIsContainerImageEqual (pkg/util/tools_test.go).
    ['docker.io/busybox:v1', 'docker.io/busybox:v1', true],
    ['docker.io/busybox:v1', 'docker.io/busybox:v2', false],
    [
      `docker.io/busybox@sha256:a9286defaba7b3a519d585ba0e37d0b2cbee74ebfe590960b0b1d6a5e97d1e1d`,
      `docker.io/busybox@sha256:a9286defaba7b3a519d585ba0e37d0b2cbee74ebfe590960b0b1d6a5e97d1e1d`,
      true,
    ],
    [
      `docker.io/busybox@sha256:a9286defaba7b3a519d585ba0e37d0b2cbee74ebfe590960b0b1d6a5e97d1e1d`,
      `docker.io/busybox@sha256:a2d86defaba7b3a519d585ba0e37d0b2cbee74ebfe590960b0b1d6a5e97d1e1d`,
      false,
    ],
  ];
  for (const [a, b, equal] of cases) {
    it(`${a} ${equal ? '=' : '≠'} ${b}`, () => {
      assert.equal(imagesEqual(a, b), equal);
    });
  }
  it('strips the imageID scheme', () => {
    assert.equal(stripImageIdScheme('docker-pullable://x@sha256:1'), 'x@sha256:1');
    assert.equal(stripImageIdScheme('x@sha256:1'), 'x@sha256:1');
  });
});

describe('pod predicates', () => {
  it('state consistency (IsPodStateConsistent)', () => {
    assert.ok(isStateConsistent(ctx, upgradePod(0)));
    assert.ok(!isStateConsistent(ctx, upgradePod(0, { upgraded: true })));
    assert.ok(isStateConsistent(ctx, upgradePod(0, { done: true })));
    const noStatus = upgradePod(0);
    delete noStatus.status;
    assert.ok(!isStateConsistent(ctx, noStatus));
    const garbage = upgradePod(0, { upgraded: true });
    garbage.metadata.annotations = {
      ...garbage.metadata.annotations,
      'kruise.io/sidecarset-inplace-update-state': 'garbage',
    };
    assert.ok(!isStateConsistent(ctx, garbage));
  });

  it('digest images compare repository and digest with the status imageID', () => {
    const d1 = 'test-sidecar@sha256:' + '1'.repeat(64);
    const d2 = 'test-sidecar@sha256:' + '2'.repeat(64);
    const pod = (spec: string, id: string | undefined): Pod => {
      const p = upgradePod(0, { upgraded: true });
      const c = p.spec.containers[0];
      const s = p.status?.containerStatuses?.[0];
      if (c && s) {
        c.image = spec;
        if (id === undefined) s.name = 'renamed';
        else s.imageID = id;
      }
      return p;
    };
    assert.ok(isStateConsistent(ctx, pod(d1, `docker-pullable://${d1}`)));
    assert.ok(!isStateConsistent(ctx, pod(d1, `docker-pullable://${d2}`)));
    assert.ok(!isStateConsistent(ctx, pod(d1, undefined)));
  });

  it('readiness (IsPodReady): Running, Ready=True and not deleting', () => {
    assert.ok(isReady(ctx, upgradePod(0)));
    assert.ok(!isReady(ctx, upgradePod(0, { phase: 'Pending' })));
    assert.ok(!isReady(ctx, upgradePod(0, { ready: false })));
    const deleting = upgradePod(0);
    deleting.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    assert.ok(!isReady(ctx, deleting));
  });

  it('hot-upgrade SidecarSets: both slots, a working entry, the empty slot on the empty image', () => {
    const ss = upgradeSidecarSet();
    ss.spec.containers = [
      {
        name: 'hot',
        image: 'hot:2',
        upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' },
      },
      { name: 'plain', image: 'plain:1', upgradeStrategy: { upgradeType: 'HotUpgrade' } },
    ];
    const hot = sidecarSetContext(ss);
    const pod = upgradePod(0);
    pod.spec.containers = ['hot-1', 'hot-2', 'plain-1', 'plain-2'].map((name) => ({
      name,
      image: name === 'hot-2' ? 'empty:1' : 'x:1',
    }));
    assert.ok(!hasEverySidecar(hot, pod));
    pod.metadata.annotations = {
      ...pod.metadata.annotations,
      'kruise.io/sidecarset-working-hotupgrade-container':
        '{"hot":"hot-1","plain":"plain-2","n":1}',
    };
    assert.ok(hasEverySidecar(hot, pod));
    assert.ok(isReady(hot, pod));
    pod.metadata.annotations['kruise.io/sidecarset-working-hotupgrade-container'] =
      '{"hot":"hot-2","plain":"plain-1"}';
    assert.ok(!isReady(hot, pod));
    pod.metadata.annotations['kruise.io/sidecarset-working-hotupgrade-container'] = '[';
    assert.ok(!hasEverySidecar(hot, pod));
    pod.metadata.annotations['kruise.io/sidecarset-working-hotupgrade-container'] = '[]';
    assert.ok(!hasEverySidecar(hot, pod));
  });

  it('upgradability (IsSidecarSetUpgradable)', () => {
    const resize = { podResize: true, versions: new Map<string, string>() };
    assert.equal(upgradability(ctx, upgradePod(0), resize).state, 'candidate');
    assert.equal(
      upgradability(ctx, upgradePod(0, { withoutImage: 'x' }), resize).state,
      'notUpgradable',
    );
    // Not ready while inconsistent: the pod is a candidate, not in flight.
    const pending = upgradePod(0, { ready: false });
    const c = pending.spec.containers[0];
    if (c) c.image = 'test-sidecar:v1.5';
    pending.metadata.annotations = {
      ...pending.metadata.annotations,
      'kruise.io/sidecarset-inplace-update-state':
        '{"test-sidecarset":{"revision":"aaa","updateTimestamp":null,"lastContainerStatuses":{"test-sidecar":{"imageID":"docker-pullable://test-sidecar@sha256:1111"}}}}',
    };
    assert.equal(upgradability(ctx, pending, resize).state, 'candidate');
  });
});

describe('IsSidecarContainerUpdateCompleted (pkg/control/sidecarcontrol/util_test.go)', () => {
  const ids: Record<string, string> = {
    'main:v1': '4120593193b4',
    'cold-sidecar:v1': 'docker-pullable://cold-sidecar@sha256:9ead06a1362e',
    'cold-sidecar:v2': 'docker-pullable://cold-sidecar@sha256:7223aa0f3a7a',
    'hot-sidecar:v1': 'docker-pullable://hot-sidecar@sha256:86618128c92e',
    'hot-sidecar:v2': 'docker-pullable://hot-sidecar@sha256:74abd85af1e9',
    'hotupgrade:empty': 'docker-pullable://hotupgrade@sha256:0e9daf5c02e7',
  };
  const ss = upgradeSidecarSet();
  ss.spec.containers = [
    { name: 'cold-sidecar', image: 'cold-image:v1' },
    {
      name: 'hot-sidecar',
      image: 'hot-image:v1',
      upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'hotupgrade:empty' },
    },
  ];
  const demo = sidecarSetContext(ss);
  const all = ['cold-sidecar', 'hot-sidecar-1', 'hot-sidecar-2'];
  const images: [string, string][] = [
    ['main', 'main:v1'],
    ['cold-sidecar', 'cold-sidecar:v1'],
    ['hot-sidecar-1', 'hot-sidecar:v1'],
    ['hot-sidecar-2', 'hotupgrade:empty'],
  ];

  /** podDemo after `steps`: each writes a spec image (recording the status imageID) or an imageID. */
  function podAfter(steps: ([string, 'spec' | 'status', string] | 'none')[]): Pod {
    const pod = upgradePod(0);
    pod.spec.containers = images.map(([name, image]) => ({ name, image }));
    pod.status = {
      ...pod.status,
      containerStatuses: images.map(([name, image]) => ({
        name,
        image,
        imageID: ids[image] ?? '',
        ready: true,
        restartCount: 0,
      })),
    };
    const recorded: Record<string, string> = {};
    for (const step of steps) {
      if (step === 'none') continue;
      const [name, where, image] = step;
      const status = pod.status.containerStatuses?.find((c) => c.name === name);
      const container = pod.spec.containers.find((c) => c.name === name);
      assert.ok(status && container);
      if (where === 'status') {
        status.imageID = ids[image] ?? '';
        continue;
      }
      recorded[name] = status.imageID ?? '';
      container.image = image;
    }
    if (steps.length > 0) {
      pod.metadata.annotations = {
        ...pod.metadata.annotations,
        'kruise.io/sidecarset-inplace-update-state': inPlaceUpdateState('bbb', recorded),
      };
    } else delete pod.metadata.annotations?.['kruise.io/sidecarset-inplace-update-state'];
    return pod;
  }

  const cold: [string, 'spec', string] = ['cold-sidecar', 'spec', 'cold-sidecar:v2'];
  const coldDone: [string, 'status', string] = ['cold-sidecar', 'status', 'cold-sidecar:v2'];
  const hot2: [string, 'spec', string] = ['hot-sidecar-2', 'spec', 'hot-sidecar:v2'];
  const hot2Done: [string, 'status', string] = ['hot-sidecar-2', 'status', 'hot-sidecar:v2'];
  const hot1: [string, 'spec', string] = ['hot-sidecar-1', 'spec', 'hotupgrade:empty'];
  const hot1Done: [string, 'status', string] = ['hot-sidecar-1', 'status', 'hotupgrade:empty'];
  const cases: [string, Parameters<typeof podAfter>[0], boolean][] = [
    ['only inject sidecar, not upgrade', [], true],
    ['upgrade cold sidecar, upgrade not completed', [cold], false],
    ['upgrade cold sidecar, upgrade completed', [cold, coldDone], true],
    ['upgrade hot sidecar, upgrade hot-sidecar-2 not completed', [cold, coldDone, hot2], false],
    [
      'upgrade hot sidecar, upgrade hot-sidecar-1 not completed',
      [cold, coldDone, hot2, hot2Done, hot1],
      false,
    ],
    [
      'upgrade hot sidecar, upgrade hot-sidecar completed',
      [cold, coldDone, hot2, hot2Done, hot1, hot1Done],
      true,
    ],
  ];
  for (const [name, steps, completed] of cases) {
    it(name, () => {
      assert.equal(isStateConsistent(demo, podAfter(steps), all), completed);
    });
  }
});

describe('the change written to a picked pod (updatePodSidecarAndHash)', () => {
  it('the images, the hash entry and the in-place state, as applyPodUpgrade applies them', () => {
    const pod = upgradePod(0, { uid: 'u-1' });
    const ss = upgradeSidecarSet({}, { latestRevision: 'test-sidecarset-rev2' });
    ss.spec.initContainers = [
      { name: 'native', image: 'n:1', restartPolicy: 'Always' },
      { name: 'init', image: 'i:1' },
    ];
    ss.status = { ...ss.status, collisionCount: 0 };
    // The pod runs the native sidecar as an init container, already on its image.
    pod.spec.initContainers = [{ name: 'native', image: 'n:1', restartPolicy: 'Always' }];
    const plan = planUpgrade(ss, [pod], { now });
    const upgrade = plan.upgrade[0];
    assert.ok(upgrade);
    const hashes = upgrade.annotations['kruise.io/sidecarset-hash'];
    assert.deepEqual(parsePodSidecarSetHashes(hashes, 'hash')['test-sidecarset'], {
      updateTimestamp: '2026-07-02T10:00:00Z',
      hash: 'bbb',
      sidecarSetName: 'test-sidecarset',
      sidecarList: ['native', 'test-sidecar'],
      controllerRevision: 'test-sidecarset-rev2',
    });
    assert.equal(plan.status.latestRevision, 'test-sidecarset-rev2');
    assert.equal(plan.status.collisionCount, 0);
    assert.deepEqual(upgrade.pod, { namespace: 'default', name: 'pod-0', uid: 'u-1' });
    const patched = applyPodUpgrade(pod, upgrade);
    assert.equal(patched.spec.containers[0]?.image, 'test-sidecar:v2');
    assert.equal(patched.spec.containers[1]?.image, 'nginx:1.25');
    assert.equal(
      patched.metadata.annotations?.['kruise.io/sidecarset-inplace-update-state'],
      '{"test-sidecarset":{"revision":"bbb","updateTimestamp":"2026-07-02T10:00:00Z","lastContainerStatuses":{"test-sidecar":{"imageID":"docker-pullable://test-sidecar@sha256:1111"}}}}',
    );
    // The without-image annotation is not rewritten.
    assert.equal(upgrade.annotations['kruise.io/sidecarset-hash-without-image'], undefined);
  });

  it('an existing in-place state entry keeps its revision and time; other entries are kept', () => {
    const pod = upgradePod(0);
    delete pod.status?.containerStatuses?.[0]?.imageID;
    pod.metadata.annotations = {
      ...pod.metadata.annotations,
      'kruise.io/sidecarset-hash':
        '{"other":{"updateTimestamp":"2025-01-01T00:00:00Z","hash":"o","sidecarSetName":"other","sidecarList":["o"]},"test-sidecarset":{"updateTimestamp":"2025-01-01T00:00:00Z","hash":"aaa","sidecarSetName":"test-sidecarset","sidecarList":["test-sidecar"]}}',
      'kruise.io/sidecarset-inplace-update-state':
        '{"test-sidecarset":{"revision":"first","updateTimestamp":"2025-01-01T00:00:00Z","lastContainerStatuses":{"old":{"imageID":"z"}}}}',
    };
    const u = planUpgrade(upgradeSidecarSet(), [pod], { now }).upgrade[0];
    assert.ok(u);
    assert.equal(
      u.annotations['kruise.io/sidecarset-inplace-update-state'],
      '{"test-sidecarset":{"revision":"first","updateTimestamp":"2025-01-01T00:00:00Z","lastContainerStatuses":{"old":{"imageID":"z"},"test-sidecar":{}}}}',
    );
    assert.equal(
      u.annotations['kruise.io/sidecarset-hash'],
      '{"other":{"updateTimestamp":"2025-01-01T00:00:00Z","hash":"o","sidecarSetName":"other","sidecarList":["o"]},"test-sidecarset":{"updateTimestamp":"2026-07-02T10:00:00Z","hash":"bbb","sidecarSetName":"test-sidecarset","sidecarList":["test-sidecar"]}}',
    );
  });

  it('legacy hash annotations are converted to the object form (TestUpdatePodSidecarSetHash)', () => {
    const pod = upgradePod(0);
    pod.metadata.annotations = {
      ...pod.metadata.annotations,
      'kruise.io/sidecarset-hash': '{"test-sidecarset":"aaa","other":"o"}',
      'kruise.io/sidecarset-hash-without-image': '{"test-sidecarset":"without-bbb"}',
    };
    const u = planUpgrade(upgradeSidecarSet(), [pod], { now }).upgrade[0];
    assert.ok(u);
    assert.equal(
      u.annotations['kruise.io/sidecarset-hash'],
      '{"other":{"updateTimestamp":"2026-07-02T10:00:00Z","hash":"o","sidecarSetName":"other","sidecarList":null},"test-sidecarset":{"updateTimestamp":"2026-07-02T10:00:00Z","hash":"bbb","sidecarSetName":"test-sidecarset","sidecarList":["test-sidecar"]}}',
    );
    assert.equal(
      u.annotations['kruise.io/sidecarset-hash-without-image'],
      '{"other":{"updateTimestamp":"2026-07-02T10:00:00Z","hash":"o","sidecarSetName":"other","sidecarList":null},"test-sidecarset":{"updateTimestamp":"2026-07-02T10:00:00Z","hash":"without-bbb","sidecarSetName":"test-sidecarset","sidecarList":null}}',
    );
  });

  it('garbage or missing hash annotations end with the object form (empty hash = not updated)', () => {
    const ss = upgradeSidecarSet({}, { withoutImage: '' });
    for (const value of ['garbage', undefined]) {
      const pod = upgradePod(0);
      const a = pod.metadata.annotations ?? {};
      if (value === undefined) delete a['kruise.io/sidecarset-hash'];
      else a['kruise.io/sidecarset-hash'] = value;
      delete a['kruise.io/sidecarset-hash-without-image'];
      const u = planUpgrade(ss, [pod], { now }).upgrade[0];
      assert.match(u?.annotations['kruise.io/sidecarset-hash'] ?? '', /^\{"test-sidecarset":\{/);
    }
  });

  it('patchPodMetadata is applied; a MergePatchJson that cannot apply holds the pod', () => {
    const ss = upgradeSidecarSet({ maxUnavailable: 2 });
    ss.spec.patchPodMetadata = [
      { annotations: { 'x/json': '{"b":2}' }, patchPolicy: 'MergePatchJson' },
      { annotations: { 'x/plain': 'v' }, patchPolicy: 'Overwrite' },
    ];
    const good = upgradePod(1);
    const bad = upgradePod(0);
    bad.metadata.annotations = { ...bad.metadata.annotations, 'x/json': 'not json' };
    good.metadata.annotations = { ...good.metadata.annotations, 'x/json': '{"a":1}' };
    const plan = planUpgrade(ss, [good, bad], { now });
    assert.deepEqual(
      plan.upgrade.map((u) => [u.pod.name, u.annotations['x/json'], u.annotations['x/plain']]),
      [['pod-1', '{"a":1,"b":2}', 'v']],
    );
    assert.deepEqual(
      plan.held.map((h) => [h.pod.name, h.reason]),
      [['pod-0', 'PatchPodMetadataError']],
    );
  });
});
