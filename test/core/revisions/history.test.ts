import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  SIDECARSET_CUSTOM_VERSION_LABEL,
  SIDECARSET_HASH,
  SIDECARSET_NAME_LABEL,
} from '../../../src/core/api/annotations.js';
import { safeEncodeString, withHashes } from '../../../src/core/api/hash.js';
import type { Pod } from '../../../src/core/api/k8s-types.js';
import type { RevisionPlan, StoredRevision } from '../../../src/core/revisions/history.js';
import {
  CONTROLLER_REVISION_HASH_LABEL,
  activeRevisions,
  canonicalData,
  fnv1_32,
  planRevisions,
  podControllerRevision,
  revisionData,
  revisionHash,
  revisionName,
  toSidecarSetRevision,
  truncateHistory,
} from '../../../src/core/revisions/history.js';
import type { SidecarSet } from '../../../src/core/api/sidecarset-types.js';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

function sidecarSet(image: string, extra: Partial<SidecarSet['spec']> = {}): SidecarSet {
  return withHashes({
    metadata: { name: 'test-sidecarset', labels: { team: 'a' } },
    spec: {
      selector: { matchLabels: { app: 'nginx' } },
      containers: [{ name: 'sidecar1', image }],
      ...extra,
    },
  });
}

/** The revisions as the API would hold them after the edge applied each plan. */
class Store {
  readonly revisions = new Map<string, StoredRevision>();
  collisionCount = 0;
  latest = '';

  round(ss: SidecarSet, pods: readonly Pod[] = []): RevisionPlan {
    const withStatus: SidecarSet = {
      ...ss,
      status: { collisionCount: this.collisionCount, latestRevision: this.latest },
    };
    const plan = planRevisions(withStatus, [...this.revisions.values()], pods);
    if (plan.create) {
      const { name, revision, data, labels, annotations } = plan.create;
      this.revisions.set(name, { name, revision, data, labels, annotations });
    }
    if (plan.renumber) {
      const r = this.revisions.get(plan.renumber.name);
      assert.ok(r);
      r.revision = plan.renumber.revision;
    }
    if (plan.customVersion) {
      const r = this.revisions.get(plan.customVersion.name);
      assert.ok(r);
      r.labels = { ...r.labels, [SIDECARSET_CUSTOM_VERSION_LABEL]: plan.customVersion.value };
    }
    for (const name of plan.delete) this.revisions.delete(name);
    this.collisionCount = plan.collisionCount;
    this.latest = plan.latestRevision;
    return plan;
  }

  numbers(): number[] {
    return [...this.revisions.values()].map((r) => r.revision).sort((a, b) => a - b);
  }

  nameOf(number: number): string {
    return [...this.revisions.values()].find((r) => r.revision === number)?.name ?? '';
  }
}

function podUsing(revision: string): Pod {
  const hash = {
    'test-sidecarset': {
      updateTimestamp: null,
      hash: 'h',
      sidecarSetName: 'test-sidecarset',
      sidecarList: ['sidecar1'],
      controllerRevision: revision,
    },
  };
  return {
    metadata: { name: `pod-${revision}`, annotations: { [SIDECARSET_HASH]: JSON.stringify(hash) } },
    spec: { containers: [] },
  };
}

describe('revision hashing', () => {
  it('is 32-bit FNV-1 (not FNV-1a)', () => {
    assert.equal(fnv1_32(bytes('')), 0x811c9dc5);
    assert.equal(fnv1_32(bytes('a')), 0x050c5d7e);
    assert.equal(fnv1_32(bytes('foobar')), 0x31f0b262);
  });

  it('hashes the data then the decimal collision count, Sum32 in decimal, safe-encoded', () => {
    // Checked against Go: fnv.New32() over the bytes, strconv.FormatInt(probe), rand.SafeEncodeString.
    assert.equal(revisionHash('x', 0), '5944fc7777');
    assert.equal(revisionHash('{"spec":{"$patch":"replace"}}', 3), '7cd74b8599');
    assert.equal(revisionHash('x', 0), safeEncodeString(String(fnv1_32(bytes('x0')))));
  });

  it('names a revision <sidecarset>-<hash>, the name cut to 223 characters', () => {
    assert.equal(revisionName('ss', 'abc'), 'ss-abc');
    assert.equal(revisionName('n'.repeat(250), 'abc'), `${'n'.repeat(223)}-abc`);
  });
});

describe('revisionData', () => {
  it('writes the recorded fields with sorted keys, absent or empty ones as null', () => {
    const ss = sidecarSet('busybox:1.0', {
      volumes: [{ name: 'v', emptyDir: {} }],
      imagePullSecrets: [],
      patchPodMetadata: [{ patchPolicy: 'Overwrite', annotations: { b: '<x>', a: '1' } }],
    });
    assert.equal(
      revisionData(ss),
      '{"spec":{"$patch":"replace","containers":[{"image":"busybox:1.0",' +
        '"imagePullPolicy":"IfNotPresent","name":"sidecar1","podInjectPolicy":"BeforeAppContainer",' +
        '"resources":{},"shareVolumePolicy":{"type":"disabled"},' +
        '"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",' +
        '"upgradeStrategy":{"upgradeType":"ColdUpgrade"}}],"imagePullSecrets":null,' +
        '"initContainers":null,"patchPodMetadata":[{"annotations":{"a":"1","b":"\\u003cx\\u003e"},' +
        '"patchPolicy":"Overwrite"}],"volumes":[{"emptyDir":{},"name":"v"}]}}',
    );
  });

  it('is stable under a read back from the API (canonicalData)', () => {
    const data = revisionData(sidecarSet('busybox:1.0'));
    assert.equal(canonicalData(JSON.parse(data)), data);
    assert.equal(canonicalData(undefined), 'null');
  });
});

describe('planRevisions', () => {
  it('creates revision 1 for a new SidecarSet, labelled and annotated', () => {
    const ss = sidecarSet('busybox:1.0');
    const plan = planRevisions(ss, [], []);
    assert.ok(plan.create);
    const hash = revisionHash(revisionData(ss), 0);
    assert.equal(plan.create.name, `test-sidecarset-${hash}`);
    assert.equal(plan.create.revision, 1);
    assert.deepEqual(plan.create.labels, {
      team: 'a',
      [CONTROLLER_REVISION_HASH_LABEL]: hash,
      [SIDECARSET_NAME_LABEL]: 'test-sidecarset',
    });
    assert.equal(
      plan.create.annotations[SIDECARSET_HASH],
      ss.metadata.annotations?.[SIDECARSET_HASH],
    );
    assert.equal(plan.latestRevision, plan.create.name);
    assert.equal(plan.collisionCount, 0);
    assert.deepEqual(plan.delete, []);
  });

  it('changes nothing when the spec matches the newest revision', () => {
    const store = new Store();
    store.round(sidecarSet('busybox:1.0'));
    const plan = store.round(sidecarSet('busybox:1.0'));
    assert.deepEqual(plan, {
      delete: [],
      latestRevision: store.nameOf(1),
      collisionCount: 0,
      overLimit: 0,
    });
  });

  it('15 updates with the default limit of 10 leave 6..15; going back to #12 renumbers it to 16', () => {
    const store = new Store();
    for (let i = 1; i <= 15; i++) store.round(sidecarSet(`busybox:${i}`));
    assert.deepEqual(store.numbers(), [6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    const twelve = store.nameOf(12);
    const plan = store.round(sidecarSet('busybox:12'));
    assert.deepEqual(plan.renumber, { name: twelve, revision: 16 });
    assert.equal(plan.create, undefined);
    assert.equal(plan.latestRevision, twelve);
    assert.deepEqual(store.numbers(), [6, 7, 8, 9, 10, 11, 13, 14, 15, 16]);
  });

  it('TestTruncateHistory: with revisions 1..8 in use by pods, deletes 9..13', () => {
    const store = new Store();
    const ss = (i: number) => sidecarSet(`busybox:${i}`, { revisionHistoryLimit: 100 });
    for (let i = 1; i <= 15; i++) store.round(ss(i));
    const pods = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => podUsing(store.nameOf(n)));
    const deleted = [9, 10, 11, 12, 13].map((n) => store.nameOf(n));
    const plan = store.round(sidecarSet('busybox:15', { revisionHistoryLimit: 10 }), pods);
    assert.deepEqual(plan.delete, deleted);
    assert.deepEqual(store.numbers(), [1, 2, 3, 4, 5, 6, 7, 8, 14, 15]);
  });

  it('never deletes the newest, keeps pinned revisions and reports what does not fit', () => {
    const store = new Store();
    for (let i = 1; i <= 3; i++)
      store.round(sidecarSet(`busybox:${i}`, { revisionHistoryLimit: 0 }));
    assert.deepEqual(store.numbers(), [3]);
    const first = store.nameOf(3);
    store.round(
      sidecarSet('busybox:4', {
        revisionHistoryLimit: 1,
        injectionStrategy: { revision: { revisionName: first } },
      }),
    );
    assert.deepEqual(store.numbers(), [3, 4]);
    const plan = store.round(
      sidecarSet('busybox:5', {
        revisionHistoryLimit: 1,
        injectionStrategy: { revision: { revisionName: first } },
      }),
      [podUsing(store.nameOf(4))],
    );
    assert.deepEqual(plan.delete, []);
    assert.equal(plan.overLimit, 2);
  });

  it('labels the latest with the custom version and keeps the newest one pinned by it', () => {
    const store = new Store();
    const labelled = (image: string, version: string, pin?: string): SidecarSet => {
      const ss = sidecarSet(image, {
        revisionHistoryLimit: 1,
        ...(pin ? { injectionStrategy: { revision: { customVersion: pin } } } : {}),
      });
      ss.metadata.labels = { ...ss.metadata.labels, [SIDECARSET_CUSTOM_VERSION_LABEL]: version };
      return ss;
    };
    const one = store.round(labelled('busybox:1', 'v1'));
    assert.equal(one.customVersion, undefined, 'a new revision carries the label already');
    // Same spec, new custom version: the label of the latest revision is patched.
    const relabel = store.round(labelled('busybox:1', 'v2'));
    assert.deepEqual(relabel.customVersion, { name: store.nameOf(1), value: 'v2' });
    store.round(labelled('busybox:2', 'v3', 'v2'));
    assert.deepEqual(store.numbers(), [1, 2], 'the v2 revision is pinned');
    store.round(labelled('busybox:3', 'v4', 'v4'));
    assert.deepEqual(store.numbers(), [3]);
  });

  it('raises the collision count when the name is taken by other data', () => {
    const ss = sidecarSet('busybox:1.0');
    const taken = planRevisions(ss, [], []).create;
    assert.ok(taken);
    const plan = planRevisions(
      ss,
      [{ ...taken, data: '{"spec":{}}', labels: { ...taken.labels }, annotations: {} }],
      [],
    );
    assert.equal(plan.collisionCount, 1);
    assert.equal(plan.create?.name, `test-sidecarset-${revisionHash(revisionData(ss), 1)}`);
    assert.equal(plan.create.revision, 2);
  });

  it('truncateHistory defaults the limit to 10', () => {
    const ordered = Array.from({ length: 12 }, (_, i) => ({ name: `r${i + 1}` }));
    const noLimit = { ...sidecarSet('x'), spec: { containers: [] } } as SidecarSet;
    assert.deepEqual(truncateHistory(noLimit, ordered, new Set(['r1'])), {
      delete: ['r2', 'r3'],
      overLimit: 0,
    });
  });
});

describe('planRevisions: sidecarset_processor_test.go', () => {
  const latestNumber = (store: Store): number => store.revisions.get(store.latest)?.revision ?? 0;

  it('TestGetActiveRevisions: create 1, update to 2, roll back to 3, keep 10 of 100 updates', () => {
    const store = new Store();
    const base = sidecarSet('busybox:1.0', { revisionHistoryLimit: 10 });
    store.round(base);
    assert.equal(latestNumber(store), 1);
    const updated = sidecarSet('busybox:1.0', {
      revisionHistoryLimit: 10,
      initContainers: [{ name: 'emptyInitC' }],
      volumes: [{ name: 'emptyVolume' }],
      imagePullSecrets: [{ name: 'emptySecret' }],
    });
    for (let i = 0; i < 5; i++) {
      store.round(updated);
      assert.equal(latestNumber(store), 2);
    }
    const data = JSON.parse(store.revisions.get(store.latest)?.data ?? '{}') as {
      spec: Record<string, unknown>;
    };
    for (const field of ['volumes', 'containers', 'initContainers', 'imagePullSecrets']) {
      assert.ok(Array.isArray(data.spec[field]), field);
    }
    for (let i = 0; i < 5; i++) {
      store.round(base);
      assert.equal(latestNumber(store), 3);
    }
    assert.equal(store.revisions.size, 2);
    for (let i = 0; i < 100; i++) store.round(sidecarSet(`${i}`, { revisionHistoryLimit: 10 }));
    assert.equal(store.revisions.size, 10);
  });

  it('TestReplaceRevision: a rollback moves the revision to the end, the rest keep their order', () => {
    // Back to 1..9 (10 is the newest: no rollback).
    for (let back = 1; back <= 9; back++) {
      const store = new Store();
      for (let i = 1; i <= 10; i++) store.round(sidecarSet(`busybox:${i}`));
      const name = store.nameOf(back);
      const rollback = store.round(sidecarSet(`busybox:${back}`));
      assert.deepEqual(rollback.renumber, { name, revision: 11 });
      assert.deepEqual(rollback.delete, []);
      // One more revision: the oldest one goes, never the one just rolled back to.
      const oldest = store.nameOf(back === 1 ? 2 : 1);
      assert.deepEqual(store.round(sidecarSet('busybox:new')).delete, [oldest]);
      assert.ok(store.revisions.has(name));
    }
  });

  it('TestTruncateHistory: 15 revisions, limit 10, pods using 1..n of them', () => {
    const ordered = Array.from({ length: 15 }, (_, i) => ({
      name: `sidecar-${i + 1}`,
      labels: {},
    }));
    const ss = sidecarSet('x', { revisionHistoryLimit: 10 });
    // n revisions in use → how many stay over the limit (OpenKruise's error: 10 + this).
    const cases: [number, number][] = [
      ...[1, 2, 3, 4, 5, 6, 7, 8, 9].map((n): [number, number] => [n, 0]),
      [10, 1],
      [11, 2],
      [14, 5],
      [15, 5],
      [20, 5],
    ];
    for (const [used, over] of cases) {
      const pods = Array.from({ length: 100 }, (_, i) => podUsing(`sidecar-${(i % used) + 1}`));
      const result = truncateHistory(ss, ordered, activeRevisions(ss, pods, ordered));
      assert.equal(result.overLimit, over, `${used} in use`);
      assert.equal(result.delete.length, 5 - over, `${used} in use`);
      assert.ok(!result.delete.includes('sidecar-15'), 'the newest stays');
      for (const name of result.delete) assert.ok(Number(name.slice(8)) > used, name);
    }
  });
});

describe('stored revisions', () => {
  it('reads a pod’s controllerRevision, or nothing', () => {
    assert.equal(podControllerRevision(podUsing('rev-1'), 'test-sidecarset'), 'rev-1');
    assert.equal(podControllerRevision(podUsing('rev-1'), 'other'), '');
    const broken = {
      metadata: { annotations: { [SIDECARSET_HASH]: '{' } },
      spec: { containers: [] },
    } as Pod;
    assert.equal(podControllerRevision(broken, 'test-sidecarset'), '');
  });

  it('turns a stored revision into what injection reads', () => {
    const ss = sidecarSet('busybox:1.0', { volumes: [{ name: 'v', emptyDir: {} }] });
    const created = planRevisions(ss, [], []).create;
    assert.ok(created);
    const stored: StoredRevision = {
      ...created,
      labels: { ...created.labels, [SIDECARSET_CUSTOM_VERSION_LABEL]: 'v1' },
    };
    const revision = toSidecarSetRevision(stored);
    assert.ok(revision);
    assert.equal(revision.name, created.name);
    assert.equal(revision.sidecarSetName, 'test-sidecarset');
    assert.equal(revision.customVersion, 'v1');
    assert.equal(revision.revision, 1);
    assert.equal(revision.spec.containers?.[0]?.image, 'busybox:1.0');
    assert.deepEqual(revision.spec.volumes, [{ emptyDir: {}, name: 'v' }]);
    assert.equal(revision.spec.initContainers, undefined);
    assert.equal(
      revision.annotations?.[SIDECARSET_HASH],
      ss.metadata.annotations?.[SIDECARSET_HASH],
    );
    assert.equal(toSidecarSetRevision({ ...stored, labels: {} }), undefined);
    assert.equal(toSidecarSetRevision({ ...stored, data: '{' }), undefined);
    assert.equal(toSidecarSetRevision({ ...stored, data: '{"spec":1}' }), undefined);
  });
});
