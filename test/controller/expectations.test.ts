/** OpenKruise's TestUpdate (pkg/util/expectations/update_expectations_test.go) on our expectations. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { createUpgradeExpectations } from '../../src/controller/expectations.js';

describe('upgrade expectations (TestUpdate)', () => {
  const set = 'controller-test';
  const pod = 'default/foo';

  it('waits for a written pod until the cache shows the hash; a new hash forgets old writes', () => {
    const e = createUpgradeExpectations();
    // No pod written: satisfied.
    assert.deepEqual(e.pending(set, 'rev-0'), []);
    // Written with rev-0: not satisfied until the cache shows rev-0 on the pod.
    e.expect(set, 'rev-0', pod);
    assert.deepEqual(e.pending(set, 'rev-0'), [pod]);
    e.observe(set, pod, 'none');
    assert.deepEqual(e.pending(set, 'rev-0'), [pod]);
    e.observe(set, pod, 'rev-0');
    assert.deepEqual(e.pending(set, 'rev-0'), []);
    // Written with rev-0 again while the SidecarSet moved on to rev-1: nothing to wait for.
    e.expect(set, 'rev-0', pod);
    assert.deepEqual(e.pending(set, 'rev-1'), []);
    e.observe(set, pod, 'rev-1');
    assert.deepEqual(e.pending(set, 'rev-1'), []);
    // Forgotten (the SidecarSet is gone): satisfied.
    e.expect(set, 'rev-1', pod);
    e.forget(set);
    assert.deepEqual(e.pending(set, 'rev-1'), []);
  });

  it('a deleted pod is not waited for (DeleteObject); other SidecarSets are untouched', () => {
    const e = createUpgradeExpectations();
    e.expect(set, 'rev-0', pod);
    e.expect(set, 'rev-0', 'default/bar');
    e.expect('other', 'x', pod);
    e.podDeleted(pod);
    assert.deepEqual(e.pending(set, 'rev-0'), ['default/bar']);
    assert.deepEqual(e.pending('other', 'x'), []);
  });
});
