/**
 * Installs `manifests/` into a real control plane with `kubectl apply -k`, as a user installs it,
 * through a kustomize overlay that points every webhook at a test process on 127.0.0.1 (what
 * envtest does to webhook configurations) with that process's CA as the caBundle, and scales the
 * Deployment to 0 (that process serves instead; as docs/helm.md's `--set replicas=0`, ADR 26).
 * Then waits until the API server calls the webhooks.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

import { parse, stringify } from 'yaml';

import type { ControlPlane } from '../kube-fixture/control-plane.js';
import { eventually } from '../support/eventually.js';
import { crdEstablished } from './apply-crd.js';

const manifests = new URL('../../manifests/', import.meta.url).pathname;

interface WebhookConfiguration {
  kind: string;
  metadata: { name: string };
  webhooks: { name: string; clientConfig: { service?: { path?: string } } }[];
}

/**
 * JSON 6902 patches: each webhook's clientConfig, the CRD's conversion webhook included, becomes
 * `url: base + its path` and `caBundle` (none without `caPem`: the webhook's self-managed
 * certificate writes it).
 */
async function clientConfigPatches(webhookBase: string, caPem?: string): Promise<unknown[]> {
  const caBundle = caPem === undefined ? {} : { caBundle: Buffer.from(caPem).toString('base64') };
  const patches = [];
  for (const file of [
    'mutating-webhook-configuration.yaml',
    'validating-webhook-configuration.yaml',
  ]) {
    const config = parse(
      await readFile(join(manifests, 'base', 'webhook', file), 'utf8'),
    ) as WebhookConfiguration;
    patches.push({
      target: { kind: config.kind, name: config.metadata.name },
      patch: stringify(
        config.webhooks.map((webhook, i) => ({
          op: 'replace',
          path: `/webhooks/${i}/clientConfig`,
          value: { url: `${webhookBase}${webhook.clientConfig.service?.path ?? '/'}`, ...caBundle },
        })),
      ),
    });
  }
  patches.push({
    target: { kind: 'CustomResourceDefinition', name: 'sidecarsets.apps.kruise.io' },
    patch: stringify([
      {
        op: 'replace',
        path: '/spec/conversion/webhook/clientConfig',
        value: { url: `${webhookBase}/convert`, ...caBundle },
      },
    ]),
  });
  return patches;
}

/** The process on the host serves instead of the Deployment, whose image no node has. */
const NO_REPLICAS = {
  target: { kind: 'Deployment', name: 'sidecarset-webhook' },
  patch: stringify([{ op: 'replace', path: '/spec/replicas', value: 0 }]),
};

/** Without `caPem`, no caBundle at all: the webhook's self-managed certificate writes it. */
export async function installManifests(
  plane: ControlPlane,
  webhook: { url: string; caPem?: string },
): Promise<void> {
  const overlay = join(plane.dir, 'overlay');
  await mkdir(overlay, { recursive: true });
  await writeFile(
    join(overlay, 'kustomization.yaml'),
    stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      // kustomize refuses an absolute path here; a relative one may leave the overlay's folder.
      resources: [relative(overlay, manifests)],
      patches: [...(await clientConfigPatches(webhook.url, webhook.caPem)), NO_REPLICAS],
    }),
  );
  const applied = await plane.kubectl(['apply', '-k', overlay]);
  assert.equal(applied.code, 0, `kubectl apply -k: ${applied.stderr}`);
  await crdEstablished(plane);
}

/**
 * Resolves once the API server sends SidecarSets to our webhooks: a server-side dry run of a
 * v1alpha1 SidecarSet (converted to v1beta1 by /convert to be stored) comes back with the hash
 * annotation. A new webhook configuration takes a moment to be used.
 */
export async function webhooksInUse(plane: ControlPlane): Promise<void> {
  const probe = stringify({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'webhook-probe' },
    spec: {
      selector: { matchLabels: { probe: 'true' } },
      containers: [{ name: 'p', image: 'p:1' }],
    },
  });
  await eventually(async () => {
    const result = await plane.kubectl(['create', '--dry-run=server', '-o', 'json', '-f', '-'], {
      input: probe,
    });
    return result.code === 0 && result.stdout.includes('kruise.io/sidecarset-hash');
  }, 'the API server to call the SidecarSet webhooks');
}
