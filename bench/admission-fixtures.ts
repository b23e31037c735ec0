/**
 * The SidecarSets of the admission benchmarks (bench/admission.bench.ts over HTTPS,
 * bench/admission-core.bench.ts in process, bench/cluster-snapshot.bench.ts from an API server):
 * the article's logtail, which matches both example pods, and n - 1 others that select other apps.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { stringify } from 'yaml';

export const EXAMPLES = new URL('../examples/', import.meta.url);

/** A production pod of ~5 KB at CREATE, which the article's logtail matches. */
export const REALISTIC_REVIEW = new URL(
  '../test/fixtures/admission-review-realistic.json',
  import.meta.url,
);

/** A SidecarSet for `app-<i>` pods: its own container and volume, so none conflicts. */
export function otherSidecarSet(i: number): Record<string, unknown> {
  const name = `agent-${String(i).padStart(4, '0')}`;
  // Most select one app; every tenth an app and its canary; a few select by a label that exists.
  const selector =
    i % 50 === 0
      ? { matchExpressions: [{ key: `example.com/${name}`, operator: 'Exists' }] }
      : i % 10 === 0
        ? { matchExpressions: [{ key: 'app', operator: 'In', values: [`app-${i}`, `app-${i}-c`] }] }
        : { matchLabels: { app: `app-${i}`, tier: i % 2 === 0 ? 'web' : 'worker' } };
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name, labels: { team: `team-${i % 20}` } },
    spec: {
      selector,
      ...(i % 4 === 0 ? { namespace: `team-${i % 20}` } : {}),
      updateStrategy: { type: 'RollingUpdate', maxUnavailable: '10%' },
      containers: [
        {
          name,
          image: `registry.example.com/agents/${name}:1.${i % 10}.0`,
          args: ['--config=/etc/agent/agent.yaml', `--instance=${name}`],
          env: [{ name: 'AGENT_MODE', value: 'sidecar' }],
          resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '128Mi' } },
          volumeMounts: [{ name: `${name}-state`, mountPath: '/var/lib/agent' }],
        },
      ],
      volumes: [{ name: `${name}-state`, emptyDir: {} }],
    },
  };
}

/** n SidecarSets in a directory: the article's logtail (the only match) and n - 1 others. */
export async function writeSidecarSets(root: string, n: number): Promise<string> {
  const dir = join(root, `sidecarsets-${n}`);
  await mkdir(dir);
  await writeFile(
    join(dir, 'logtail.yaml'),
    await readFile(new URL('logtail-sidecarset.yaml', EXAMPLES)),
  );
  const others = Array.from({ length: n - 1 }, (_, i) => stringify(otherSidecarSet(i + 1)));
  if (others.length > 0) await writeFile(join(dir, 'agents.yaml'), others.join('---\n'));
  return dir;
}
