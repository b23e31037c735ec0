/**
 * helm (test/helm-fixture) and kubectl (test/kube-fixture) for the chart tests, run on the chart and
 * on manifests/, with their output parsed into objects. Without Go: a reason to skip (CI=true
 * fails instead, as for the e2e tests).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

import { parseAllDocuments, stringify } from 'yaml';

import { helmBinary } from '../helm-fixture/binary.js';
import { controlPlaneBinaries } from '../kube-fixture/binaries.js';

export const CHART = new URL('../../charts/sidecarset', import.meta.url).pathname;
export const MANIFESTS = new URL('../../manifests/', import.meta.url).pathname;

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

export interface Tools {
  helm: string;
  kubectl: string;
}

/** Both tools, or why the tests that need them skip. */
export async function chartTools(): Promise<Tools | { skip: string }> {
  const helm = await helmBinary();
  if ('skip' in helm) return helm;
  const kube = await controlPlaneBinaries();
  if ('skip' in kube) return kube;
  return { helm: helm.helm, kubectl: kube.binaries.kubectl };
}

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function run(command: string, args: readonly string[]): Run {
  const r = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function parseObjects(yaml: string): KubeObject[] {
  return parseAllDocuments(yaml)
    .map((doc) => doc.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
}

function succeeded(r: Run, what: string): string {
  if (r.status !== 0) throw new Error(`${what} failed (${String(r.status)}): ${r.stderr}`);
  return r.stdout;
}

/** `helm template sidecarset charts/sidecarset` with `--set` values. */
export function helmTemplate(tools: Tools, set: readonly string[] = []): KubeObject[] {
  const args = ['template', 'sidecarset', CHART, ...set.flatMap((s) => ['--set', s])];
  return parseObjects(succeeded(run(tools.helm, args), `helm ${args.join(' ')}`));
}

/** `kubectl kustomize` of an overlay of `resources` and `components` (paths under manifests/). */
export async function kustomize(
  tools: Tools,
  resources: readonly string[],
  components: readonly string[] = [],
): Promise<KubeObject[]> {
  const dir = await mkdtemp(join(tmpdir(), 'chart-kustomize-'));
  try {
    const rel = (p: string): string => relative(dir, join(MANIFESTS, p));
    await writeFile(
      join(dir, 'kustomization.yaml'),
      stringify({
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        resources: resources.map(rel),
        components: components.map(rel),
      }),
    );
    return parseObjects(succeeded(run(tools.kubectl, ['kustomize', dir]), 'kubectl kustomize'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const key = (o: KubeObject): string =>
  `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
