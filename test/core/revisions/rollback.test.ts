import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  SIDECARSET_CUSTOM_VERSION_LABEL,
  SIDECARSET_NAME_LABEL,
} from '../../../src/core/api/annotations.js';
import { defaultSidecarSet } from '../../../src/core/api/defaults.js';
import type { StoredRevision } from '../../../src/core/revisions/history.js';
import { newRevision } from '../../../src/core/revisions/history.js';
import {
  applyRevision,
  CHANGE_CAUSE_ANNOTATION,
  planRollback,
  revisionHistory,
} from '../../../src/core/revisions/rollback.js';
import type { SidecarSet } from '../../../src/core/api/sidecarset-types.js';

function sidecarSet(image: string, extra: Partial<SidecarSet['spec']> = {}): SidecarSet {
  return {
    metadata: { name: 'logtail', annotations: { [CHANGE_CAUSE_ANNOTATION]: `image ${image}` } },
    spec: {
      selector: { matchLabels: { app: 'nginx' } },
      updateStrategy: { maxUnavailable: '50%' },
      containers: [{ name: 'logtail', image }],
      ...extra,
    },
  };
}

/** The revision the controller would store for this SidecarSet (of its defaulted spec). */
function stored(ss: SidecarSet, revision: number): StoredRevision {
  const r = newRevision(defaultSidecarSet(ss), revision, 0);
  return { name: r.name, revision, data: r.data, labels: r.labels, annotations: r.annotations };
}

const v1 = sidecarSet('logtail:1', { volumes: [{ name: 'logs', emptyDir: {} }] });
const v2 = sidecarSet('logtail:2');
const v3 = sidecarSet('logtail:3');
const history = [stored(v2, 2), stored(v1, 1), stored(v3, 3)];

describe('revisionHistory', () => {
  it('lists the revisions oldest first, with images and change cause, marking the current one', () => {
    const rows = revisionHistory(v3, history);
    assert.deepEqual(
      rows.map((r) => [r.revision, r.current, r.images, r.changeCause]),
      [
        [1, false, ['logtail=logtail:1'], 'image logtail:1'],
        [2, false, ['logtail=logtail:2'], 'image logtail:2'],
        [3, true, ['logtail=logtail:3'], 'image logtail:3'],
      ],
    );
    assert.equal(rows[0]?.name, history[1]?.name);
  });

  it('reports the custom version label and init containers', () => {
    const withInit = sidecarSet('a:1', { initContainers: [{ name: 'init', image: 'init:1' }] });
    withInit.metadata.labels = { [SIDECARSET_CUSTOM_VERSION_LABEL]: 'v1' };
    const [row] = revisionHistory(withInit, [stored(withInit, 1)]);
    assert.deepEqual(row?.images, ['logtail=a:1', 'init=init:1']);
    assert.equal(row.customVersion, 'v1');
    assert.equal(row.current, true);
  });

  it('shows no images for a revision without a readable spec', () => {
    const broken: StoredRevision = {
      name: 'logtail-x',
      revision: 1,
      data: '"not a spec"',
      labels: { [SIDECARSET_NAME_LABEL]: 'logtail' },
      annotations: {},
    };
    assert.deepEqual(revisionHistory(v1, [broken])[0]?.images, []);
  });
});

describe('planRollback', () => {
  it('goes back to the newest revision that differs from the spec by default', () => {
    const plan = planRollback(v3, history);
    assert.ok(plan.kind === 'rollback', plan.kind);
    assert.equal(plan.revision, 2);
    // As recorded: the defaulted containers, in Go's encoding.
    const [container] = plan.sidecarSet.spec.containers ?? [];
    assert.equal(container?.image, 'logtail:2');
    assert.equal(container.imagePullPolicy, 'IfNotPresent');
    // What the revision does not record stays as it is.
    assert.deepEqual(plan.sidecarSet.spec.selector, v3.spec.selector);
    assert.deepEqual(plan.sidecarSet.spec.updateStrategy, v3.spec.updateStrategy);
    assert.deepEqual(plan.sidecarSet.metadata, v3.metadata);
  });

  it('takes --to-revision 0 as the default, like kubectl', () => {
    const plan = planRollback(v3, history, 0);
    assert.ok(plan.kind === 'rollback');
    assert.equal(plan.revision, 2);
  });

  it('writes back every recorded field, removing those the revision lacks', () => {
    const plan = planRollback(v3, history, 1);
    assert.ok(plan.kind === 'rollback');
    assert.deepEqual(plan.sidecarSet.spec.volumes, [{ name: 'logs', emptyDir: {} }]);
    const back = planRollback(plan.sidecarSet, history, 3);
    assert.ok(back.kind === 'rollback');
    assert.equal(back.sidecarSet.spec.volumes, undefined);
    assert.deepEqual(
      back.sidecarSet.spec.containers?.map((c) => c.image),
      ['logtail:3'],
    );
  });

  it('the spec rolled back is recognised as that revision afterwards', () => {
    const plan = planRollback(v3, history, 1);
    assert.ok(plan.kind === 'rollback');
    const rows = revisionHistory(plan.sidecarSet, history);
    assert.deepEqual(
      rows.filter((r) => r.current).map((r) => r.revision),
      [1],
    );
  });

  it('skips a rollback to the revision the spec already holds', () => {
    assert.deepEqual(planRollback(v3, history, 3), {
      kind: 'unchanged',
      revision: 3,
      name: history[2]?.name,
    });
  });

  it('says which revisions exist when the one asked for does not', () => {
    assert.deepEqual(planRollback(v3, history, 7), {
      kind: 'error',
      message: 'SidecarSet logtail has no revision 7 (revisions: 1, 2, 3)',
    });
  });

  it('fails without history, or without an earlier revision', () => {
    assert.deepEqual(planRollback(v3, []), {
      kind: 'error',
      message: 'SidecarSet logtail has no revision history',
    });
    assert.deepEqual(planRollback(v1, [stored(v1, 1)]), {
      kind: 'error',
      message: 'SidecarSet logtail has no revision before the current one',
    });
  });

  it('refuses a revision whose data is not a SidecarSet spec', () => {
    const broken: StoredRevision = { ...stored(v1, 1), data: '{"spec":"x"}' };
    assert.deepEqual(planRollback(v3, [broken], 1), {
      kind: 'error',
      message: `ControllerRevision ${broken.name} does not hold a SidecarSet spec`,
    });
  });
});

describe('applyRevision', () => {
  it('copies the recorded lists, so the result does not share them with the revision', () => {
    const revision = {
      name: 'r',
      sidecarSetName: 'logtail',
      revision: 1,
      spec: {
        imagePullSecrets: [{ name: 'regcred' }],
        patchPodMetadata: [{ annotations: { a: 'b' } }],
      },
    };
    const out = applyRevision(v3, revision);
    assert.deepEqual(out.spec.imagePullSecrets, [{ name: 'regcred' }]);
    assert.deepEqual(out.spec.patchPodMetadata, [{ annotations: { a: 'b' } }]);
    assert.equal(out.spec.containers, undefined);
    assert.notEqual(out.spec.imagePullSecrets, revision.spec.imagePullSecrets);
    assert.deepEqual(v3.spec.containers, [{ name: 'logtail', image: 'logtail:3' }]);
  });
});
