/** What an upgrade writes into a pod's hash annotations, and how pods are judged by them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Pod } from '../../../src/core/api/k8s-types.js';
import {
  formatPodSidecarSetHashes,
  formatTimestamp,
  parsePodSidecarSetHashes,
} from '../../../src/core/pod-annotations/pod-hash-annotation.js';
import { buildPodUpgrade } from '../../../src/core/upgrade/change.js';
import { sidecarSetContext } from '../../../src/core/upgrade/context.js';
import { planUpgrade } from '../../../src/core/upgrade/plan.js';
import { names, upgradePod, upgradeSidecarSet } from '../../support/upgrade-pods.js';

const now = new Date('2026-07-02T10:00:00Z');
const HASH = 'kruise.io/sidecarset-hash';
const WITHOUT_IMAGE = 'kruise.io/sidecarset-hash-without-image';

describe('hash annotations', () => {
  it('pods sharing one annotation value are still judged on their own other fields', () => {
    const annotation = (pod: Pod, key: string): string => pod.metadata.annotations?.[key] ?? '';
    const ready = upgradePod(0);
    const notReady = upgradePod(1, { ready: false });
    const changed = upgradePod(2, { withoutImage: 'without-old' });
    const upgraded = upgradePod(3, { upgraded: true });
    const done = upgradePod(4, { done: true });
    // The very same strings on every pod: only the memo's key is shared.
    for (const pod of [notReady, changed]) {
      const annotations = pod.metadata.annotations ?? {};
      annotations[HASH] = annotation(ready, HASH);
      if (pod !== changed) annotations[WITHOUT_IMAGE] = annotation(ready, WITHOUT_IMAGE);
    }
    assert.equal(annotation(notReady, HASH), annotation(ready, HASH));
    assert.notEqual(annotation(changed, WITHOUT_IMAGE), annotation(ready, WITHOUT_IMAGE));
    assert.equal(annotation(done, HASH), annotation(upgraded, HASH));
    const plan = planUpgrade(
      upgradeSidecarSet({ maxUnavailable: 1 }),
      [ready, notReady, changed, upgraded, done],
      { now },
    );
    // The not-ready pod needs no budget and goes first; the ready one takes the one slot.
    assert.deepEqual(names(plan.upgrade), ['pod-1']);
    assert.deepEqual(
      plan.held.map((h) => [h.pod.name, h.reason]),
      [['pod-0', 'MaxUnavailable']],
    );
    assert.deepEqual(
      plan.notUpgradable.map((p) => p.pod.name),
      ['pod-2'],
    );
    assert.equal(plan.status.updatedPods, 2);
    assert.equal(plan.status.updatedReadyPods, 1);
  });

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

  it('formatTimestamp drops the milliseconds, far years included', () => {
    assert.equal(formatTimestamp(new Date('2026-07-02T10:00:00.123Z')), '2026-07-02T10:00:00Z');
    assert.equal(formatTimestamp(new Date('+010000-01-01T00:00:00Z')), '+010000-01-01T00:00:00Z');
  });
});
