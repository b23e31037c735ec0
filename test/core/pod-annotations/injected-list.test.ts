import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { SIDECARSET_INJECTED_LIST } from '../../../src/core/api/annotations.js';
import {
  injectedListWith,
  injectedNames,
} from '../../../src/core/pod-annotations/injected-list.js';

const pod = (value?: string) => ({
  metadata: value === undefined ? {} : { annotations: { [SIDECARSET_INJECTED_LIST]: value } },
});

describe('kruise.io/sidecarset-injected-list', () => {
  it('reads the names, dropping empty entries', () => {
    assert.deepEqual(injectedNames(pod()), []);
    assert.deepEqual(injectedNames(pod('')), []);
    assert.deepEqual(injectedNames(pod('b,a')), ['b', 'a']);
    assert.deepEqual(injectedNames(pod(',a,,b,')), ['a', 'b']);
  });

  it('writes the names sorted, once each, keeping those already listed', () => {
    assert.equal(injectedListWith({}, ['logtail']), 'logtail');
    assert.equal(
      injectedListWith({ [SIDECARSET_INJECTED_LIST]: 'mesh' }, ['logtail', 'mesh']),
      'logtail,mesh',
    );
    assert.equal(injectedListWith({ [SIDECARSET_INJECTED_LIST]: ',z,' }, ['', 'a']), 'a,z');
  });
});
