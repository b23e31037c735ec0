/** The upgrade baseline a pod records (src/core/pod-annotations/upgrade-baseline.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  UPGRADE_BASELINE,
  readUpgradeBaselines,
} from '../../../src/core/pod-annotations/upgrade-baseline.js';
import { buildPodUpgrade } from '../../../src/core/upgrade/change.js';
import { sidecarSetContext } from '../../../src/core/upgrade/context.js';
import { T0, sidecarSet, upgraded } from '../../support/health-gate.js';
import { SET, SIDECAR, upgradePod } from '../../support/upgrade-pods.js';

describe('the upgrade baseline', () => {
  it('is written with the upgrade: hash, time, readiness and restarts before', () => {
    const pod = upgraded(sidecarSet(), 0, 'pending');
    const baseline = readUpgradeBaselines(pod.metadata.annotations?.[UPGRADE_BASELINE])[SET];
    assert.deepEqual(baseline, {
      hash: 'bbb',
      upgradedAt: '2026-07-02T10:00:00Z',
      podReady: true,
      restarts: { [SIDECAR]: 2 },
    });
  });

  it('keeps other SidecarSets entries; unreadable values and entries are no record', () => {
    const other = { other: { hash: 'x', upgradedAt: '2026-01-01T00:00:00Z', restarts: {} } };
    const pod = upgradePod(0);
    pod.metadata.annotations = {
      ...pod.metadata.annotations,
      [UPGRADE_BASELINE]: JSON.stringify(other),
    };
    const ctx = sidecarSetContext(sidecarSet());
    const change = buildPodUpgrade(ctx, pod, [], T0, false);
    const all = readUpgradeBaselines(change.annotations[UPGRADE_BASELINE]);
    assert.deepEqual(Object.keys(all).sort(), ['other', SET]);
    assert.equal(all[SET]?.podReady, false);
    assert.deepEqual(readUpgradeBaselines('{'), {});
    assert.deepEqual(readUpgradeBaselines('[]'), {});
    assert.deepEqual(readUpgradeBaselines(''), {});
    assert.deepEqual(
      readUpgradeBaselines('{"a":1,"b":{"hash":"h","upgradedAt":"never"},"c":{"hash":1}}'),
      {},
    );
  });
});
