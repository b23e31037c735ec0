/**
 * The webhook's snapshot of a cluster's SidecarSets: invalid ones left out with a warning, and each
 * stored version prepared (validated, defaulted, hashed) once, however often the snapshot is rebuilt.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { it } from 'node:test';

import { pino } from 'pino';

import { createClusterSource } from '../../src/cache/cluster-source.js';
import type { SnapshotSource } from '../../src/cache/snapshot.js';
import { SharedCaches } from '../../src/k8s/shared-caches.js';
import type { FakeApiServer, JsonObject } from '../fake-apiserver/index.js';
import { SIDECARSETS, startFakeApiServer } from '../fake-apiserver/index.js';
import { eventually } from '../support/eventually.js';

function sidecarSet(name: string, spec: JsonObject): JsonObject {
  return { apiVersion: 'apps.kruise.io/v1beta1', kind: 'SidecarSet', metadata: { name }, spec };
}

const VALID = {
  selector: { matchLabels: { app: 'web' } },
  containers: [{ name: 'agent', image: 'agent:1' }],
};

async function withSource(
  body: (api: FakeApiServer, source: SnapshotSource, warnings: () => string[]) => Promise<void>,
): Promise<void> {
  const api = await startFakeApiServer();
  const lines: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const logger = pino({ level: 'warn' }, out);
  const source = createClusterSource({
    caches: new SharedCaches({ kubeConfig: api.kubeConfig(), logger }),
    logger,
  });
  const warnings = (): string[] =>
    lines
      .map((line) => JSON.parse(line) as { msg: string; sidecarSet?: string })
      .filter((entry) => entry.msg === 'ignoring an invalid SidecarSet')
      .map((entry) => entry.sidecarSet ?? '');
  try {
    await body(api, source, warnings);
  } finally {
    await source.stop();
    await api.close();
  }
}

/** Changes the SidecarSet's status (as the controller's writes do) and waits for the cache. */
async function writeStatus(api: FakeApiServer, source: SnapshotSource, name: string) {
  const before = source.read();
  const changed = api.store.mutate(SIDECARSETS, '', name, (obj) => {
    obj['status'] = { observedGeneration: 1, matchedPods: 3 };
  });
  await eventually(
    () => source.read() !== before,
    `the cache to store ${name} at ${changed.metadata.resourceVersion ?? ''}`,
  );
}

it('leaves invalid SidecarSets out, warning once for each stored version', async () => {
  await withSource(async (api, source, warnings) => {
    api.store.create(SIDECARSETS, '', sidecarSet('good', VALID));
    api.store.create(SIDECARSETS, '', sidecarSet('bad', VALID));
    // Stored without validation, as by an API server without the CRD's schema.
    api.store.mutate(SIDECARSETS, '', 'bad', (obj) => {
      obj['spec'] = { containers: 'agent' };
    });
    await source.start();
    assert.deepEqual(
      source.read().sidecarSets.all.map((ss) => ss.metadata.name),
      ['good'],
    );
    await writeStatus(api, source, 'good');
    source.read();
    assert.deepEqual(warnings(), ['bad'], 'a rebuild does not warn again');
    await writeStatus(api, source, 'bad');
    assert.deepEqual(warnings(), ['bad', 'bad'], 'a new version of it does');
  });
});

it('prepares again only the SidecarSet that changed', async () => {
  await withSource(async (api, source) => {
    for (const name of ['a', 'b']) api.store.create(SIDECARSETS, '', sidecarSet(name, VALID));
    await source.start();
    const first = source.read().sidecarSets.byName;
    await writeStatus(api, source, 'a');
    const second = source.read().sidecarSets.byName;
    assert.equal(second.get('b'), first.get('b'), 'b: the object prepared before');
    assert.notEqual(second.get('a'), first.get('a'), 'a: prepared from its new version');
    assert.equal(second.get('a')?.status?.matchedPods, 3);
  });
});
