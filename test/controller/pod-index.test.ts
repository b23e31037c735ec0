/**
 * Which SidecarSets a pod event names (OpenKruise's TestGetPodMatchedSidecarSets and
 * TestPodEventHandler, pkg/controller/sidecarset/sidecarset_pod_event_handler_test.go): the pod's
 * kruise.io/sidecarset-injected-list, before and after the change. Unlike OpenKruise, every change
 * and the deletion name them: the slim pod holds only what planning reads (src/k8s/slim-pod.ts),
 * and a name without a SidecarSet makes an empty reconcile.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { createPodIndex } from '../../src/controller/pod-index.js';
import type { Pod } from '../../src/core/api/k8s-types.js';
import { makePod } from '../support/factories.js';

function injected(list: string, ready = true): Pod {
  const pod = makePod({ annotations: { 'kruise.io/sidecarset-injected-list': list } });
  pod.status = {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
  };
  return pod;
}

describe('pod index (TestGetPodMatchedSidecarSets)', () => {
  const cases: [string, string, string[]][] = [
    ['one SidecarSet', 'test-sidecarset-2', ['test-sidecarset-2']],
    [
      'two SidecarSets',
      'test-sidecarset-1,test-sidecarset-3',
      ['test-sidecarset-1', 'test-sidecarset-3'],
    ],
    ['no list', '', []],
  ];
  for (const [name, list, expected] of cases) {
    it(`${name}: ${JSON.stringify(list)}`, () => {
      const index = createPodIndex();
      assert.deepEqual(index.upsert('default/pod-1', injected(list)), expected);
      for (const ss of ['test-sidecarset-1', 'test-sidecarset-2', 'test-sidecarset-3']) {
        assert.equal(index.podsOf(ss).length, expected.includes(ss) ? 1 : 0);
      }
    });
  }
});

describe('pod index (TestPodEventHandler)', () => {
  it('create, readiness change, other change and delete name the injecting SidecarSets', () => {
    const index = createPodIndex();
    const created = injected('test-sidecarset');
    assert.deepEqual(index.upsert('default/pod-1', created), ['test-sidecarset']);
    const notReady = injected('test-sidecarset', false);
    assert.deepEqual(index.upsert('default/pod-1', notReady, created), ['test-sidecarset']);
    const moved = injected('other');
    assert.deepEqual(index.upsert('default/pod-1', moved, notReady), ['test-sidecarset', 'other']);
    assert.deepEqual(index.podsOf('test-sidecarset'), []);
    assert.equal(index.size(), 1);
    assert.deepEqual(index.remove('default/pod-1', moved), ['other']);
    assert.deepEqual(index.podsOf('other'), []);
    assert.equal(index.size(), 0);
  });
});
