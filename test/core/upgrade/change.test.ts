/** What an upgrade writes into a picked pod (src/core/upgrade/change.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  SIDECARSET_HASH as HASH,
  SIDECARSET_HASH_WITHOUT_IMAGE as WITHOUT_IMAGE,
} from '../../../src/core/api/annotations.js';
import {
  formatPodSidecarSetHashes,
  parsePodSidecarSetHashes,
} from '../../../src/core/pod-annotations/pod-hash-annotation.js';
import { applyPodUpgrade } from '../../../src/core/rollout/simulate.js';
import { buildPodUpgrade } from '../../../src/core/upgrade/change.js';
import { sidecarSetContext } from '../../../src/core/upgrade/context.js';
import { planUpgrade } from '../../../src/core/upgrade/plan.js';
import { upgradePod, upgradeSidecarSet } from '../../support/upgrade-pods.js';

/** With milliseconds, which the written timestamps drop. */
const now = new Date('2026-07-02T10:00:00.500Z');

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

describe('buildPodUpgrade: hash annotations', () => {
  it('a legacy map is converted, its own without-image values kept', () => {
    const ctx = sidecarSetContext(upgradeSidecarSet({}, { latestRevision: 'rev-2' }));
    const pod = upgradePod(1);
    const annotations = pod.metadata.annotations ?? {};
    annotations[HASH] = '{"test-sidecarset":"aaa","other":"o"}';
    annotations[WITHOUT_IMAGE] = `{"test-sidecarset":"${ctx.hashWithoutImage}","gone":"w1"}`;
    const upgrade = buildPodUpgrade(ctx, pod, [], now);
    assert.match(upgrade.annotations[WITHOUT_IMAGE] ?? '', /"gone":\{[^}]*"hash":"w1"/);
    const written = parsePodSidecarSetHashes(upgrade.annotations[HASH], HASH);
    assert.equal(written['other']?.hash, 'o');
    assert.equal(written['test-sidecarset']?.controllerRevision, 'rev-2');
  });

  it('writes the parsed map with this SidecarSet entry replaced, however the value is laid out', () => {
    const ctx = sidecarSetContext(upgradeSidecarSet({}, { latestRevision: 'rev-2' }));
    const entry = (name: string, hash: string, extra = ''): string =>
      `"${name}":{"updateTimestamp":"2025-01-01T00:00:00Z","hash":"${hash}","sidecarSetName":"${name}","sidecarList":["c"]${extra}}`;
    const values = [
      `{${entry('test-sidecarset', 'aaa')}}`,
      `{${entry('test-sidecarset', 'aaa', ',"controllerRevision":"rev-1"')}}`,
      `{ ${entry('test-sidecarset', 'aaa')}}`,
      `{${entry('other', 'o')},${entry('test-sidecarset', 'aaa')}}`,
      `{${entry('other', 'o')}}`,
      `{${entry('test-sidecarset', 'a\\u0061a')}}`,
    ];
    for (const [i, value] of [...values, ...values].entries()) {
      const pod = upgradePod(i);
      const annotations = pod.metadata.annotations ?? {};
      annotations[HASH] = value;
      const upgrade = buildPodUpgrade(ctx, pod, [], now);
      const entry = parsePodSidecarSetHashes(upgrade.annotations[HASH], HASH)['test-sidecarset'];
      assert.ok(entry);
      const expected = formatPodSidecarSetHashes({
        ...parsePodSidecarSetHashes(value, HASH),
        'test-sidecarset': entry,
      });
      assert.equal(upgrade.annotations[HASH], expected, value);
      assert.equal(upgrade.annotations[WITHOUT_IMAGE], undefined);
    }
  });
});
