/**
 * `sidecarset plan` on kubectl-style pods (test/fixtures/plan/realistic-pods.ts), which it reads
 * reduced to what the planner reads (src/k8s/slim-pod.ts) when the SidecarSets allow it: the plan
 * is the one the core API makes of the full pods.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';

import { runPlan } from '../../src/cli/plan.js';
import { withHashes } from '../../src/core/api/hash.js';
import type { Pod } from '../../src/core/api/k8s-types.js';
import { ANY_NAMESPACE } from '../../src/core/matching/match.js';
import { simulateRollout } from '../../src/core/rollout/simulate.js';
import type { SidecarSet } from '../../src/core/api/sidecarset-types.js';
import { planUpgrade } from '../../src/core/upgrade/plan.js';
import { podKey } from '../../src/core/api/pod-ref.js';
import { selectsForUpgrade } from '../../src/core/matching/upgrade-selection.js';
import type { UpgradeStatus } from '../../src/core/upgrade/types.js';
import { readManifests } from '../../src/io/documents.js';
import { grayReleasePods } from '../fixtures/plan/gray-release-pods.js';
import { realisticPod } from '../fixtures/plan/realistic-pods.js';

const fixtures = fileURLToPath(new URL('../fixtures/plan/', import.meta.url));
const now = new Date('2026-07-02T10:00:00Z');

interface PlanJson {
  status: UpgradeStatus;
  upgrade: string[];
  notUpgradable: string[];
  held: { pod: string; reason: string }[];
  simulation?: { waves: { pods: string[] }[]; end: string; touched: number };
}

let dir = '';

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'plan-fleet-'));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function sidecarSet(file: string): Promise<SidecarSet> {
  const doc = (await readManifests(join(fixtures, file)))[0];
  assert.ok(doc);
  return withHashes(doc.object as unknown as SidecarSet);
}

/**
 * 200 realistic pods of `ss`: 150 at the old image, 50 already at the new one; web-0003 not
 * ready, web-0010 being deleted, and one pod the SidecarSet does not select.
 */
function fleet(ss: SidecarSet): Pod[] {
  const old = grayReleasePods(ss, 150, 'busybox:1.35');
  const updated = grayReleasePods(ss, 200, 'busybox:1.36').slice(150);
  const pods = [...old, ...updated].map(realisticPod);
  // Not ready as the kubelet shows it: a container's probe fails, so Ready and ContainersReady.
  const notReady = pods[3]?.status;
  assert.ok(notReady?.conditions && notReady.containerStatuses?.[0]);
  for (const c of notReady.conditions) {
    if (c.type === 'Ready' || c.type === 'ContainersReady') c.status = 'False';
  }
  notReady.containerStatuses[0].ready = false;
  const deleting = pods[10];
  assert.ok(deleting);
  deleting.metadata.deletionTimestamp = '2026-07-02T09:59:00Z';
  const other = structuredClone(pods[0]);
  assert.ok(other);
  other.metadata.name = 'other';
  other.metadata.labels = { app: 'other' };
  return [...pods, other];
}

async function planFile(
  ss: SidecarSet,
  pods: readonly Pod[],
  simulate = false,
): Promise<{ cli: PlanJson; core: PlanJson }> {
  const files = { sidecarsets: join(dir, 'ss.json'), pods: join(dir, 'pods.json') };
  await writeFile(files.sidecarsets, JSON.stringify(ss));
  // As kubectl get pods -o json writes it: a List, indented by 4.
  await writeFile(
    files.pods,
    JSON.stringify({ apiVersion: 'v1', items: pods, kind: 'List', metadata: {} }, null, 4),
  );
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  const io = { stdin: new PassThrough(), stdout, stderr: new PassThrough() };
  assert.equal(await runPlan({ ...files, output: 'json', simulate }, io, now), 0);
  const cli = JSON.parse(out) as PlanJson;

  const matched = pods.filter((pod) => selectsForUpgrade(ss, pod, ANY_NAMESPACE));
  const plan = planUpgrade(ss, matched, { now });
  const core: PlanJson = {
    status: plan.status,
    upgrade: plan.upgrade.map((u) => podKey(u.pod)),
    notUpgradable: plan.notUpgradable.map((n) => podKey(n.pod)),
    held: plan.held.map((h) => ({ pod: podKey(h.pod), reason: h.reason })),
  };
  if (simulate) {
    const sim = simulateRollout(ss, matched, { now, failImages: [] });
    core.simulation = {
      waves: sim.waves.map((w) => ({ pods: w.pods.map(podKey) })),
      end: sim.end,
      touched: sim.touched,
    };
  }
  return { cli, core };
}

describe('sidecarset plan on realistic pods', () => {
  it('plans the pods the core API plans: the partition holds the oldest ones', async () => {
    const ss = await sidecarSet('gray-release-sidecarset.yaml');
    const { cli, core } = await planFile(ss, fleet(ss));
    // web-0010, being deleted, is not counted.
    assert.deepEqual(cli.status, {
      matchedPods: 199,
      updatedPods: 50,
      readyPods: 198,
      updatedReadyPods: 50,
    });
    // 200 pods, partition 980: none may be upgraded.
    assert.deepEqual(cli.upgrade, []);
    // The 150 old pods but web-0010, which is not active.
    assert.equal(cli.held.length, 149);
    assert.deepEqual(
      cli.held.slice(0, 2).map((h) => h.reason),
      ['Partition', 'Partition'],
    );
    assert.deepEqual(cli.upgrade, core.upgrade);
    assert.deepEqual(cli.held, core.held);
    assert.deepEqual(cli.status, core.status);
  });

  it('without a partition: upgrades the ready old pods first, as the core API does', async () => {
    const ss = await sidecarSet('gray-release-no-partition.yaml');
    const { cli, core } = await planFile(ss, fleet(ss), true);
    // web-0003, not ready, goes first and costs no budget; then 10% of 199 pods, 20, newest first.
    assert.deepEqual(cli.upgrade, [
      'default/web-0003',
      ...Array.from({ length: 20 }, (_, i) => `default/web-0${149 - i}`),
    ]);
    assert.deepEqual(
      cli.simulation?.waves.map((w) => w.pods.length),
      [21, 20, 20, 20, 20, 20, 20, 8],
    );
    assert.deepEqual(cli.upgrade, core.upgrade);
    assert.deepEqual(cli.held, core.held);
    assert.deepEqual(cli.notUpgradable, core.notUpgradable);
    assert.ok(cli.simulation);
    assert.equal(cli.simulation.touched, core.simulation?.touched);
    assert.deepEqual(
      cli.simulation.waves.map((w) => w.pods),
      core.simulation?.waves.map((w) => w.pods),
    );
  });

  it('reads full pods when the SidecarSet has patchPodMetadata, which reads annotations', async () => {
    const ss = await sidecarSet('gray-release-no-partition.yaml');
    ss.spec.patchPodMetadata = [
      {
        annotations: { 'example.com/settings': '{"sidecar":true}' },
        patchPolicy: 'MergePatchJson',
      },
    ];
    const pods = fleet(ss);
    // Old pods whose annotation cannot take a JSON merge patch: held, not upgraded.
    for (const pod of pods.slice(140, 150)) {
      pod.metadata.annotations = { ...pod.metadata.annotations, 'example.com/settings': 'x' };
    }
    const { cli, core } = await planFile(ss, pods);
    assert.deepEqual(
      cli.held.filter((h) => h.reason === 'PatchPodMetadataError').map((h) => h.pod),
      Array.from({ length: 10 }, (_, i) => `default/web-0${149 - i}`),
    );
    // The held pods take their share of the budget (as in OpenKruise): 10 of the 20 are left.
    assert.deepEqual(cli.upgrade, [
      'default/web-0003',
      ...Array.from({ length: 10 }, (_, i) => `default/web-0${139 - i}`),
    ]);
    assert.deepEqual(cli.upgrade, core.upgrade);
    assert.deepEqual(cli.held, core.held);
  });
});
