/**
 * The documented GitOps ignore rules (docs/argocd/ignore-differences.yaml for Argo CD,
 * docs/flux/helmrelease-drift-detection.yaml for Flux's helm-controller) name exactly the fields
 * the controller writes into the installation's objects: the paths are taken from the patches the
 * code builds (the webhook scope, src/core/scope/configuration-patch.ts; the caBundles,
 * src/server/cert-plan.ts) against the objects manifests/base ships, not from a second list.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';

import fastJsonPatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import { parse, parseAllDocuments } from 'yaml';

import { webhookScopes } from '../../src/core/scope/cel.js';
import type { ScopedConfiguration } from '../../src/core/scope/configuration-patch.js';
import { scopePatch } from '../../src/core/scope/configuration-patch.js';
import type { SidecarSet } from '../../src/core/api/sidecarset-types.js';
import type { ConversionHolder, WebhookEntry } from '../../src/server/cert-plan.js';
import { caBundlePatch, conversionCaBundlePatch } from '../../src/server/cert-plan.js';

const root = new URL('../../', import.meta.url);

interface Shipped {
  kind: string;
  metadata: { name: string };
  webhooks?: WebhookEntry[];
}

async function shipped(path: string): Promise<Shipped> {
  const docs = parseAllDocuments(await readFile(new URL(path, root), 'utf8'));
  const doc = docs[0]?.toJS() as Shipped | undefined;
  assert.ok(doc);
  return doc;
}

/** The fields a JSON patch writes: its paths, less its guards; a whole new map as its keys. */
function written(ops: readonly unknown[]): string[] {
  return (ops as Operation[]).flatMap((op) => {
    if (op.op === 'test' || op.path === '/metadata/resourceVersion') return [];
    if (op.op === 'add' && op.path === '/metadata/annotations') {
      return Object.keys(op.value as object).map((k) => `${op.path}/${k.replaceAll('/', '~1')}`);
    }
    return [op.path];
  });
}

const sidecarSet = (name: string, app: string): SidecarSet => ({
  metadata: { name },
  spec: {
    namespace: 'shop',
    selector: { matchLabels: { app, tier: 'web' } },
    containers: [{ name: 'logtail', image: 'logtail:1' }],
  },
});

/** Every path the controller writes, per object (kind/name), derived from the code. */
async function pathsTheCodeWrites(): Promise<Map<string, Set<string>>> {
  const mutating = await shipped('manifests/base/webhook/mutating-webhook-configuration.yaml');
  const validating = await shipped('manifests/base/webhook/validating-webhook-configuration.yaml');
  const crd = await shipped('manifests/base/crd/apps.kruise.io_sidecarsets.yaml');
  const key = (o: Shipped): string => `${o.kind}/${o.metadata.name}`;
  const scopeOps: unknown[] = [];
  // Every level of a scope that uses all of its means, then its removal.
  for (const scope of webhookScopes([sidecarSet('a', 'shop'), sidecarSet('b', 'cart')])) {
    const ops = scopePatch(mutating as ScopedConfiguration, scope);
    scopeOps.push(...ops);
    const scoped = fastJsonPatch.applyPatch(
      structuredClone(mutating),
      ops as Operation[],
    ).newDocument;
    scopeOps.push(...scopePatch(scoped as ScopedConfiguration, undefined));
  }
  const ca = Buffer.from('another CA').toString('base64');
  return new Map([
    [
      key(mutating),
      new Set([...written(scopeOps), ...written(caBundlePatch(mutating.webhooks ?? [], ca))]),
    ],
    [key(validating), new Set(written(caBundlePatch(validating.webhooks ?? [], ca)))],
    [key(crd), new Set(written(conversionCaBundlePatch(crd as ConversionHolder, ca)))],
  ]);
}

const sorted = (m: Map<string, Set<string>>): [string, string[]][] =>
  [...m]
    .map(([k, v]): [string, string[]] => [k, [...v].sort()])
    .sort(([a], [b]) => (a < b ? -1 : 1));

async function documented(path: string): Promise<unknown> {
  return parse(await readFile(new URL(path, root), 'utf8')) as unknown;
}

describe('the documented GitOps ignore rules', () => {
  it('the code writes the scope and the caBundles where the docs say', async () => {
    const paths = await pathsTheCodeWrites();
    assert.ok(paths.get('MutatingWebhookConfiguration/sidecarset-mutating-webhook')?.size === 6);
  });

  it('Argo CD: ignoreDifferences lists exactly those JSON pointers', async () => {
    const doc = (await documented('docs/argocd/ignore-differences.yaml')) as {
      ignoreDifferences: { kind: string; name: string; jsonPointers: string[] }[];
      syncPolicy: { syncOptions: string[] };
    };
    const listed = new Map(
      doc.ignoreDifferences.map((d) => [`${d.kind}/${d.name}`, new Set(d.jsonPointers)]),
    );
    assert.deepEqual(sorted(listed), sorted(await pathsTheCodeWrites()));
    assert.ok(doc.syncPolicy.syncOptions.includes('RespectIgnoreDifferences=true'));
  });

  it("Flux: the HelmRelease's driftDetection.ignore lists exactly those paths", async () => {
    const doc = (await documented('docs/flux/helmrelease-drift-detection.yaml')) as {
      driftDetection: {
        mode: string;
        ignore: { target: { kind: string; name: string }; paths: string[] }[];
      };
    };
    const listed = new Map(
      doc.driftDetection.ignore.map((d) => [`${d.target.kind}/${d.target.name}`, new Set(d.paths)]),
    );
    assert.deepEqual(sorted(listed), sorted(await pathsTheCodeWrites()));
    assert.equal(doc.driftDetection.mode, 'enabled');
  });
});
