/** `sidecarset inject`: the objects as the pod webhook would leave them (like istioctl kube-inject). */
import { stringify } from 'yaml';

import type { JobSidecarMode } from '../core/inject/job-sidecars.js';
import { ANY_NAMESPACE } from '../core/matching/match.js';
import { podNamespace } from '../core/api/pod-ref.js';
import type { InjectionSnapshot } from '../core/mutation/pod-mutation.js';
import { mutatePod } from '../core/mutation/pod-mutation.js';
import { buildSidecarSetIndex, explainMatches } from '../core/matching/sidecarset-index.js';
import { podViewOf } from '../core/mutation/workload.js';
import { checkOneStdin, inputError, readManifests } from '../io/documents.js';
import type { Io } from './io.js';
import { loadNamespaces } from '../io/loaders.js';
import { loadValidSidecarSets } from './sidecarset-input.js';

export interface InjectOptions {
  sidecarsets: string;
  namespaces?: string;
  filename: string;
  output: 'yaml' | 'json';
  explain: boolean;
  /** Default native, as `serve`. */
  jobSidecars?: JobSidecarMode;
}

export async function runInject(options: InjectOptions, io: Io, now: Date): Promise<number> {
  checkOneStdin({
    '--sidecarsets': options.sidecarsets,
    '--namespaces': options.namespaces,
    '-f': options.filename,
  });
  const sidecarSets = await loadValidSidecarSets(options.sidecarsets, io);
  if (sidecarSets === undefined) return 1;
  const given =
    options.namespaces === undefined
      ? undefined
      : await loadNamespaces(options.namespaces, io.stdin);
  const docs = await readManifests(options.filename, io.stdin);
  // Without --namespaces every namespace exists with the labels the API server always sets.
  const snapshot: InjectionSnapshot = {
    sidecarSets: buildSidecarSetIndex(sidecarSets),
    namespaces: given ?? ANY_NAMESPACE,
    revisions: () => [],
  };
  const results: Record<string, unknown>[] = [];
  for (const doc of docs) {
    const view = podViewOf(doc.object);
    if (typeof view === 'string') throw inputError(doc.source, view);
    const namespace = podNamespace(view.pod);
    if (options.explain) {
      for (const { name, result } of explainMatches(
        snapshot.sidecarSets,
        view.pod,
        namespace,
        snapshot.namespaces,
      )) {
        io.stderr.write(
          `${doc.source}: SidecarSet ${name}: ${result.matched ? 'matched' : `not matched: ${result.reason}`}\n`,
        );
      }
    }
    const mutation = mutatePod({ operation: 'CREATE', pod: view.pod }, snapshot, {
      now,
      random: Math.random,
      ...(options.jobSidecars === undefined ? {} : { jobSidecars: options.jobSidecars }),
    });
    if (mutation.kind === 'mutated') {
      for (const w of mutation.warnings) io.stderr.write(`${doc.source}: warning: ${w}\n`);
      results.push(view.withPod(mutation.pod));
    } else {
      results.push(doc.object);
    }
  }
  io.stdout.write(render(results, options.output));
  return 0;
}

function render(objects: Record<string, unknown>[], output: 'yaml' | 'json'): string {
  if (output === 'json') {
    const value =
      objects.length === 1 ? objects[0] : { apiVersion: 'v1', kind: 'List', items: objects };
    return `${JSON.stringify(value, null, 2)}\n`;
  }
  return objects.map((o) => stringify(o, { lineWidth: 0 })).join('---\n');
}
