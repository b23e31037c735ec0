import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';

import { parse as parseYaml } from 'yaml';

import { runPlan } from '../../src/cli/plan.js';
import type { Io } from '../../src/cli/io.js';
import { withHashes } from '../../src/core/api/hash.js';
import type { SidecarSet } from '../../src/core/api/sidecarset-types.js';
import { readManifests } from '../../src/io/documents.js';
import { applyPodUpgrade } from '../../src/core/rollout/simulate.js';
import { planUpgrade } from '../../src/core/upgrade/plan.js';
import { grayReleasePods } from '../fixtures/plan/gray-release-pods.js';
import { injected, ownedPod, sidecarSet } from '../support/injected-pods.js';
import { applied, hotPod, hotSidecarSet } from '../support/upgrade-pods.js';

const fixtures = fileURLToPath(new URL('../fixtures/plan/', import.meta.url));
const grayRelease = join(fixtures, 'gray-release-sidecarset.yaml');
const noPartition = join(fixtures, 'gray-release-no-partition.yaml');
const now = new Date('2026-07-02T10:00:00Z');

function memoryIo(): { io: Io; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  return { io: { stdin: new PassThrough(), stdout, stderr }, out: () => out, err: () => err };
}

let dir = '';
let podsFile = '';

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'plan-test-'));
  const doc = (await readManifests(grayRelease))[0];
  assert.ok(doc);
  const pods = grayReleasePods(
    withHashes(doc.object as unknown as SidecarSet),
    1000,
    'busybox:1.35',
  );
  // One pod the SidecarSet does not select: it is left out.
  const other = structuredClone(pods[0]);
  assert.ok(other);
  other.metadata.name = 'other';
  other.metadata.labels = { app: 'other' };
  podsFile = join(dir, 'pods.json');
  await writeFile(
    podsFile,
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [...pods, other] }),
  );
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('sidecarset plan', () => {
  it('-o json prints the issue shape for one SidecarSet', async () => {
    const { io, out } = memoryIo();
    const code = await runPlan(
      { sidecarsets: grayRelease, pods: podsFile, output: 'json', simulate: false },
      io,
      now,
    );
    assert.equal(code, 0);
    const result = JSON.parse(out()) as {
      sidecarSet: string;
      status: Record<string, number>;
      upgrade: string[];
      notUpgradable: string[];
      held: { pod: string; reason: string }[];
    };
    assert.deepEqual(Object.keys(result), [
      'sidecarSet',
      'status',
      'upgrade',
      'notUpgradable',
      'held',
    ]);
    assert.equal(result.sidecarSet, 'sidecarset');
    assert.deepEqual(result.status, {
      matchedPods: 1000,
      updatedPods: 0,
      readyPods: 1000,
      updatedReadyPods: 0,
    });
    assert.equal(result.upgrade.length, 20);
    assert.equal(result.upgrade[0], 'default/web-0999');
    assert.deepEqual(result.notUpgradable, []);
    assert.equal(result.held.length, 980);
    assert.deepEqual(result.held[0], { pod: 'default/web-0979', reason: 'Partition' });
  });

  it('lists pods to recreate, each with its controller, when the SidecarSet opts in', async () => {
    const v1 = sidecarSet();
    const v2 = sidecarSet({ env: 'b', annotations: { 'sidecarset.dev/recreate-pods': 'true' } });
    const files = {
      sidecarsets: join(dir, 'recreate.json'),
      pods: join(dir, 'recreate-pods.json'),
    };
    await writeFile(files.sidecarsets, JSON.stringify(v2));
    const pods = [ownedPod(0, v1), ownedPod(1, v1), ownedPod(2, v1), injected(3, v1)];
    const items = pods.map((pod) => ({ apiVersion: 'v1', kind: 'Pod', ...pod }));
    await writeFile(files.pods, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
    const json = memoryIo();
    await runPlan({ ...files, output: 'json', simulate: false }, json.io, now);
    const result = JSON.parse(json.out()) as { recreate: string[]; notUpgradable: string[] };
    assert.deepEqual(result.recreate, ['default/web-0', 'default/web-1']);
    assert.deepEqual(result.notUpgradable, ['default/web-3']);
    const table = memoryIo();
    await runPlan({ ...files, output: 'table', simulate: false }, table.io, now);
    assert.match(
      table.out(),
      /1 +default\/web-0 +recreate +evict, ReplicaSet\/web-5d8f recreates it/,
    );
  });

  it('lists finished hot upgrades under flip, and a table says what a flip is', async () => {
    const ss = hotSidecarSet();
    const fresh = hotPod(0);
    const upgrade = planUpgrade(ss, [fresh], { now }).upgrade[0];
    assert.ok(upgrade);
    const finished = applied(applyPodUpgrade(fresh, upgrade));
    const files = { sidecarsets: join(dir, 'hot.json'), pods: join(dir, 'hot-pods.json') };
    await writeFile(files.sidecarsets, JSON.stringify(ss));
    await writeFile(
      files.pods,
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [finished, hotPod(1)] }),
    );
    const json = memoryIo();
    await runPlan({ ...files, output: 'json', simulate: false }, json.io, now);
    const result = JSON.parse(json.out()) as { flip?: string[]; upgrade: string[] };
    assert.deepEqual(result.flip, ['default/pod-0']);
    assert.deepEqual(result.upgrade, []);
    const table = memoryIo();
    await runPlan({ ...files, output: 'table', simulate: true }, table.io, now);
    assert.match(
      table.out(),
      /flip +the old hot-upgrade slot back to the empty image: default\/pod-0/,
    );
    assert.match(table.out(), /final: +matched 2, updated 2, ready 2, updatedReady 2/);
  });

  it('--simulate -o json adds the waves', async () => {
    const { io, out } = memoryIo();
    await runPlan(
      { sidecarsets: noPartition, pods: podsFile, output: 'json', simulate: true },
      io,
      now,
    );
    const result = JSON.parse(out()) as {
      simulation: { waves: { pods: string[]; unavailable: number }[]; end: string };
    };
    assert.deepEqual(
      result.simulation.waves.map((w) => [w.pods.length, w.unavailable]),
      Array.from({ length: 10 }, () => [100, 100]),
    );
    assert.equal(result.simulation.end, 'Complete');
  });

  it('--simulate --fail-image: the health gate pauses after the first wave; table and json', async () => {
    const json = memoryIo();
    const files = { sidecarsets: noPartition, pods: podsFile, simulate: true };
    await runPlan({ ...files, output: 'json', failImage: ['busybox:1.36'] }, json.io, now);
    const result = JSON.parse(json.out()) as {
      simulation: { waves: unknown[]; end: string; touched: number; message: string };
    };
    assert.equal(result.simulation.waves.length, 1);
    assert.equal(result.simulation.touched, 100);
    assert.equal(result.simulation.end, 'UnhealthyPods');
    assert.match(result.simulation.message, /^100 upgraded pod\(s\) failed \(pause at 1\)/);
    const table = memoryIo();
    await runPlan({ ...files, output: 'table', failImage: ['busybox:1.36'] }, table.io, now);
    assert.match(table.out(), /stops: +UnhealthyPods: 100 upgraded pod\(s\) failed/);
    assert.match(table.out(), /touched: 100 pods upgraded/);
    await assert.rejects(
      runPlan({ ...files, simulate: false, output: 'json', failImage: ['x:1'] }, table.io, now),
      /--fail-image needs --simulate/,
    );
  });

  it('several SidecarSets give an array; table output is for people', async () => {
    const both = join(dir, 'sets.yaml');
    const noPartitionDoc = (await readManifests(noPartition))[0];
    assert.ok(noPartitionDoc);
    // Another name and another container: the same container in both would be a conflict.
    const spec = noPartitionDoc.object['spec'] as { containers: { name: string }[] };
    const renamed = {
      ...noPartitionDoc.object,
      metadata: { name: 'second' },
      spec: { ...spec, containers: spec.containers.map((c) => ({ ...c, name: `${c.name}-b` })) },
    };
    await writeFile(
      both,
      [JSON.stringify((await readManifests(grayRelease))[0]?.object), JSON.stringify(renamed)].join(
        '\n---\n',
      ),
    );
    const json = memoryIo();
    const code = await runPlan(
      { sidecarsets: both, pods: podsFile, output: 'json', simulate: false },
      json.io,
      now,
    );
    assert.equal(code, 0, json.err());
    const results = JSON.parse(json.out()) as { sidecarSet: string; upgrade: string[] }[];
    assert.deepEqual(
      results.map((r) => r.sidecarSet),
      ['sidecarset', 'second'],
    );
    // Pods are not injected by "second", so it matches nothing.
    assert.equal(results[1]?.upgrade.length, 0);

    const table = memoryIo();
    await runPlan(
      { sidecarsets: grayRelease, pods: podsFile, output: 'table', simulate: false },
      table.io,
      now,
    );
    assert.match(table.out(), /SidecarSet sidecarset/);
    assert.match(
      table.out(),
      /1 +default\/web-0999 {2}upgrade {2}sidecar1: busybox:1\.35 → busybox:1\.36/,
    );
    assert.match(table.out(), /980 pods +held +Partition: default\/web-0979/);

    const sim = memoryIo();
    await runPlan(
      { sidecarsets: grayRelease, pods: podsFile, output: 'table', simulate: true },
      sim.io,
      now,
    );
    assert.match(sim.out(), /WAVE {2}PODS {2}UNAVAILABLE {2}WHICH/);
    assert.match(
      sim.out(),
      /stops: {3}Partition: the partition \(980\) keeps 980 pods on the old version/,
    );
  });

  it('errors: no SidecarSet, wrong kinds', async () => {
    const empty = join(dir, 'empty.yaml');
    await writeFile(empty, '');
    const none = memoryIo();
    assert.equal(
      await runPlan(
        { sidecarsets: empty, pods: podsFile, output: 'json', simulate: false },
        none.io,
        now,
      ),
      1,
    );
    assert.match(none.err(), /no SidecarSet found/);
    await assert.rejects(
      runPlan(
        { sidecarsets: podsFile, pods: podsFile, output: 'json', simulate: false },
        memoryIo().io,
        now,
      ),
      /expected a SidecarSet, found kind Pod/,
    );
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'kind: Pod\nmetadata: {name: x}\n');
    await assert.rejects(
      runPlan(
        { sidecarsets: grayRelease, pods: bad, output: 'json', simulate: false },
        memoryIo().io,
        now,
      ),
      /the Pod has no spec.containers/,
    );
    const noMeta = join(dir, 'nometa.yaml');
    await writeFile(noMeta, 'kind: Pod\n');
    await assert.rejects(
      runPlan(
        { sidecarsets: grayRelease, pods: noMeta, output: 'json', simulate: false },
        memoryIo().io,
        now,
      ),
      /the Pod has no metadata/,
    );
  });

  it('-o yaml prints what -o json prints', async () => {
    const runs = await Promise.all(
      (['json', 'yaml'] as const).map(async (output) => {
        const { io, out } = memoryIo();
        const code = await runPlan(
          { sidecarsets: grayRelease, pods: podsFile, output, simulate: true },
          io,
          now,
        );
        assert.equal(code, 0);
        return out();
      }),
    );
    const [json, yaml] = runs;
    assert.ok(json !== undefined && yaml !== undefined);
    assert.match(yaml, /^sidecarSet: sidecarset\n/);
    assert.deepEqual(parseYaml(yaml), JSON.parse(json));
  });

  it('refuses an invalid SidecarSet as validate does, exit 1', async () => {
    const bad = join(dir, 'bad-budget.yaml');
    const text = await readFile(noPartition, 'utf8');
    assert.match(text, /maxUnavailable: 10%/);
    await writeFile(bad, text.replace('maxUnavailable: 10%', 'maxUnavailable: "abc%"'));
    const { io, out, err } = memoryIo();
    const code = await runPlan(
      { sidecarsets: bad, pods: podsFile, output: 'table', simulate: true },
      io,
      now,
    );
    assert.equal(code, 1);
    assert.equal(out(), '');
    assert.match(
      err(),
      /^\S*bad-budget\.yaml: SidecarSet "sidecarset": spec\.updateStrategy\.maxUnavailable: Invalid value: "abc%"/,
    );
  });

  it('an injection pause does not stop upgrades of injected pods', async () => {
    const paused = join(dir, 'paused.yaml');
    const doc = (await readManifests(grayRelease))[0];
    assert.ok(doc);
    const spec = doc.object['spec'] as Record<string, unknown>;
    await writeFile(
      paused,
      JSON.stringify({ ...doc.object, spec: { ...spec, injectionStrategy: { paused: true } } }),
    );
    const { io, out } = memoryIo();
    await runPlan(
      { sidecarsets: paused, pods: podsFile, output: 'json', simulate: false },
      io,
      now,
    );
    assert.equal((JSON.parse(out()) as { upgrade: string[] }).upgrade.length, 20);
  });
});
