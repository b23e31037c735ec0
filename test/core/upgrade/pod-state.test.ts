/** Pod predicates and state consistency (src/core/upgrade/pod-state.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Pod } from '../../../src/core/api/k8s-types.js';
import { sidecarSetContext } from '../../../src/core/upgrade/context.js';
import {
  hasEverySidecar,
  isReady,
  isStateConsistent,
  isUpgradeInFlight,
  whyNotUpgradable,
} from '../../../src/core/upgrade/pod-state.js';
import { inPlaceUpdateState, upgradePod, upgradeSidecarSet } from '../../support/upgrade-pods.js';

const ctx = sidecarSetContext(upgradeSidecarSet());

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
    assert.equal(whyNotUpgradable(ctx, upgradePod(0), resize), undefined);
    assert.ok(!isUpgradeInFlight(ctx, upgradePod(0)));
    assert.match(
      whyNotUpgradable(ctx, upgradePod(0, { withoutImage: 'x' }), resize) ?? '',
      /a sidecar field other than image changed/,
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
    assert.equal(whyNotUpgradable(ctx, pending, resize), undefined);
    assert.ok(!isUpgradeInFlight(ctx, pending));
    // The same, ready: the kubelet has not restarted the sidecar yet; wait.
    const applying = structuredClone(pending);
    const condition = applying.status?.conditions?.find((k) => k.type === 'Ready');
    const status = applying.status?.containerStatuses?.[0];
    if (condition && status) {
      condition.status = 'True';
      status.ready = true;
    }
    assert.ok(isUpgradeInFlight(ctx, applying));
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
