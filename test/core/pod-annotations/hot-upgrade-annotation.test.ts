import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';

import {
  formatWorkingSlots,
  hotSlots,
  readWorkingSlots,
} from '../../../src/core/pod-annotations/hot-upgrade-annotation.js';

describe('kruise.io/sidecarset-working-hotupgrade-container', () => {
  it('reads the working slot of each sidecar', () => {
    assert.deepEqual(readWorkingSlots('{"envoy":"envoy-2","dns":"dns-1"}'), {
      envoy: 'envoy-2',
      dns: 'dns-1',
    });
  });

  it('reads what it cannot understand as no slots, as OpenKruise does', () => {
    for (const value of [undefined, '', 'not json', '[]', '"envoy-1"', 'null', '5']) {
      assert.deepEqual(readWorkingSlots(value), {}, String(value));
    }
    assert.deepEqual(readWorkingSlots('{"envoy":"envoy-1","bad":2,"worse":{}}'), {
      envoy: 'envoy-1',
    });
  });

  it('writes Go’s encoding of a map[string]string: sorted keys, HTML-safe', () => {
    assert.equal(
      formatWorkingSlots({ envoy: 'envoy-2', dns: 'dns-1', 'a<b': 'x&y' }),
      '{"a\\u003cb":"x\\u0026y","dns":"dns-1","envoy":"envoy-2"}',
    );
    assert.equal(formatWorkingSlots({}), '{}');
  });

  it('reads back what it writes', () => {
    const name = fc.stringMatching(/^[a-z][-a-z0-9<>&]{0,10}$/);
    fc.assert(
      fc.property(fc.dictionary(name, name, { noNullPrototype: true }), (slots) => {
        assert.deepEqual(readWorkingSlots(formatWorkingSlots(slots)), slots);
      }),
    );
  });
});

describe('hot upgrade: the working and idle slots (GetPodHotUpgradeContainers)', () => {
  const hot = { name: 'hot', slots: ['hot-1', 'hot-2'] } as const;
  // The annotation names the working slot; naming neither (or missing) means the second works.
  const cases: [Record<string, string>, { working: string; idle: string }][] = [
    [{ hot: 'hot-1' }, { working: 'hot-1', idle: 'hot-2' }],
    [{ hot: 'hot-2' }, { working: 'hot-2', idle: 'hot-1' }],
    [{}, { working: 'hot-2', idle: 'hot-1' }],
    [{ hot: 'other' }, { working: 'hot-2', idle: 'hot-1' }],
    [{ other: 'hot-1' }, { working: 'hot-2', idle: 'hot-1' }],
  ];
  for (const [working, expected] of cases) {
    it(`${JSON.stringify(working)} → ${expected.working} works`, () => {
      assert.deepEqual(hotSlots(hot, working), expected);
    });
  }
});
