/**
 * `sidecarset rollout status|history|undo|pause|resume NAME`: a SidecarSet's in-place rollout in
 * a cluster, as `kubectl rollout` does it for Deployments and DaemonSets. Thin: the decisions are
 * the core's (rollout-status.ts, revisions/rollback.ts); this fetches, writes and prints.
 */
import { RESUMED_AT } from '../core/api/health-gate-annotations.js';
import type { HistoryEntry } from '../core/revisions/rollback.js';
import { planRollback, revisionHistory } from '../core/revisions/rollback.js';
import { toSidecarSetRevision } from '../core/revisions/history.js';
import type { SidecarSet } from '../core/api/sidecarset-types.js';
import { podKey } from '../core/api/pod-ref.js';
import type { RolloutStatus } from '../core/rollout/rollout-status.js';
import { rolloutStatus } from '../core/rollout/rollout-status.js';
import type { CliClient, ClusterFlags } from '../k8s/cli-client.js';
import { cliKubeConfig, createCliClient } from '../k8s/cli-client.js';
import { ClusterError, ConflictError } from '../k8s/cluster-error.js';
import { DEFAULT_REVISION_NAMESPACE } from '../k8s/revisions.js';
import type { DataFormat } from './format.js';
import { renderData, some, table } from './format.js';
import type { Io } from './io.js';

const RESOURCE = 'sidecarset.apps.kruise.io';
/** Read-change-replace attempts when another writer changes the SidecarSet in between. */
const CONFLICT_RETRIES = 5;

interface RolloutFlags extends ClusterFlags {
  /** Where the controller keeps the ControllerRevisions (its --leader-election-namespace). */
  revisionNamespace?: string;
}

export interface StatusOptions extends ClusterFlags {
  watch: boolean;
  /** Seconds `-w` waits before giving up; 0 waits for ever. */
  timeout: number;
  output: 'table' | DataFormat;
}

export async function runRolloutStatus(
  name: string,
  options: StatusOptions,
  io: Io,
  now: () => Date,
): Promise<number> {
  const kubeConfig = cliKubeConfig(options);
  const client = createCliClient(kubeConfig);
  const snapshot = async (): Promise<RolloutStatus> => {
    const ss = await client.getSidecarSet(name);
    const [pods, namespaces] = await Promise.all([client.podsOf(ss), client.namespaces()]);
    return rolloutStatus(ss, pods, namespaces, now());
  };
  const first = await snapshot();
  const print = (status: RolloutStatus): string => renderStatus(status, options.output);
  if (!options.watch || first.done) {
    io.stdout.write(print(first));
    return 0;
  }
  const { followRollout } = await import('./rollout-watch.js');
  const version = await client.sidecarSetVersion();
  return followRollout(kubeConfig, name, first, { ...options, version, print, now }, io);
}

function renderStatus(status: RolloutStatus, output: StatusOptions['output']): string {
  if (output !== 'table') return renderData(statusData(status), output);
  return `${statusLines(status).join('\n')}\n`;
}

/** What programs read: the plan without its patches. */
function statusData(s: RolloutStatus): Record<string, unknown> {
  const { plan } = s;
  return {
    sidecarSet: s.sidecarSet,
    phase: s.phase,
    done: s.done,
    summary: s.summary,
    pause: s.pause,
    specNotObserved: s.specNotObserved,
    ...(s.updateFailure === undefined ? {} : { updateFailure: s.updateFailure }),
    ...(s.revisionFailure === undefined ? {} : { revisionFailure: s.revisionFailure }),
    status: plan.status,
    budget: plan.budget,
    upgrade: plan.upgrade.map((u) => podKey(u.pod)),
    recreate: plan.recreate.map((r) => ({
      pod: podKey(r.pod),
      controller: r.controller,
      ...(r.refused === undefined ? {} : { refused: r.refused }),
    })),
    flip: plan.flip.map((f) => podKey(f.pod)),
    held: s.held.map((h) => ({ reason: h.reason, message: h.message, pods: h.pods.map(podKey) })),
    notUpgradable: plan.notUpgradable.map((n) => ({ pod: podKey(n.pod), message: n.message })),
  };
}

function statusLines(s: RolloutStatus): string[] {
  const { plan } = s;
  const lines = [s.summary];
  if (s.pause.paused && s.pause.message !== '') lines.push(`  paused: ${s.pause.message}`);
  if (s.specNotObserved) lines.push('  the controller has not yet seen the latest spec');
  if (s.updateFailure !== undefined) lines.push(`  pod updates fail: ${s.updateFailure}`);
  if (s.revisionFailure !== undefined) lines.push(`  revision history: ${s.revisionFailure}`);
  if (s.done) return lines;
  const b = plan.budget;
  lines.push(
    `  budget: maxUnavailable ${b.maxUnavailable}, unavailable now ${b.unavailable}, partition ${b.partition}`,
  );
  const rows: string[][] = [['  PODS', 'STATE', 'WHY', 'WHICH']];
  if (plan.upgrade.length > 0) {
    rows.push([
      `  ${plan.upgrade.length}`,
      'upgrading',
      'this round',
      some(plan.upgrade.map((u) => u.pod)),
    ]);
  }
  const deleting = plan.excluded.filter((e) => e.reason === 'Recreating');
  if (deleting.length > 0) {
    rows.push([
      `  ${deleting.length}`,
      'being recreated',
      deleting[0]?.message ?? '',
      some(deleting.map((e) => e.pod)),
    ]);
  }
  const [refused, evicting] = partition(plan.recreate, (r) => r.refused !== undefined);
  if (evicting.length > 0) {
    rows.push([
      `  ${evicting.length}`,
      'recreating',
      'evicted this round for their controllers to recreate',
      some(evicting.map((r) => r.pod)),
    ]);
  }
  if (refused.length > 0) {
    rows.push([
      `  ${refused.length}`,
      'eviction refused',
      refused[0]?.refused ?? '',
      some(refused.map((r) => r.pod)),
    ]);
  }
  if (plan.flip.length > 0) {
    rows.push([
      `  ${plan.flip.length}`,
      'flipping',
      'hot upgrade finished',
      some(plan.flip.map((f) => f.pod)),
    ]);
  }
  for (const h of s.held) {
    rows.push([`  ${h.pods.length}`, `held: ${h.reason}`, h.message, some(h.pods)]);
  }
  if (plan.notUpgradable.length > 0) {
    rows.push([
      `  ${plan.notUpgradable.length}`,
      'not upgradable',
      plan.notUpgradable[0]?.message ?? '',
      some(plan.notUpgradable.map((n) => n.pod)),
    ]);
  }
  return rows.length > 1 ? [...lines, ...table(rows)] : lines;
}

/** The items that pass, then the others. */
function partition<T>(items: readonly T[], test: (item: T) => boolean): [T[], T[]] {
  return [items.filter(test), items.filter((item) => !test(item))];
}

export interface HistoryOptions extends RolloutFlags {
  revision?: number;
  output: 'table' | DataFormat;
}

export async function runRolloutHistory(
  name: string,
  options: HistoryOptions,
  io: Io,
): Promise<number> {
  const client = createCliClient(cliKubeConfig(options));
  const ss = await client.getSidecarSet(name);
  const stored = await client.revisions(name, revisionNamespace(options));
  if (options.revision !== undefined) {
    const found = stored.find((r) => r.revision === options.revision);
    const revision = found === undefined ? undefined : toSidecarSetRevision(found);
    if (revision === undefined) {
      throw new ClusterError(`${RESOURCE} "${name}" has no revision ${options.revision}`);
    }
    const data = { name: revision.name, revision: revision.revision, spec: revision.spec };
    io.stdout.write(renderData(data, options.output === 'json' ? 'json' : 'yaml'));
    return 0;
  }
  const history = revisionHistory(ss, stored);
  if (options.output !== 'table') {
    io.stdout.write(renderData(history, options.output));
    return 0;
  }
  if (history.length === 0) {
    io.stdout.write(
      `${RESOURCE}/${name}: no ControllerRevisions in namespace ${revisionNamespace(options)}\n`,
    );
    return 0;
  }
  io.stdout.write(`${RESOURCE}/${name}\n${historyTable(history).join('\n')}\n`);
  return 0;
}

function historyTable(history: readonly HistoryEntry[]): string[] {
  return table([
    ['REVISION', 'CURRENT', 'NAME', 'IMAGES', 'CHANGE-CAUSE'],
    ...history.map((h) => [
      String(h.revision),
      h.current ? '*' : '',
      h.name,
      h.images.join(',') || '<none>',
      h.changeCause ?? '<none>',
    ]),
  ]);
}

export interface UndoOptions extends RolloutFlags {
  toRevision?: number;
  dryRun: boolean;
}

export async function runRolloutUndo(name: string, options: UndoOptions, io: Io): Promise<number> {
  const client = createCliClient(cliKubeConfig(options));
  const stored = await client.revisions(name, revisionNamespace(options));
  const result = await withRetry(client, name, (ss) => {
    const plan = planRollback(ss, stored, options.toRevision);
    if (plan.kind === 'error') throw new ClusterError(plan.message);
    if (plan.kind === 'unchanged' || options.dryRun) return { plan };
    return { plan, write: plan.sidecarSet };
  });
  const { plan } = result;
  if (plan.kind === 'unchanged') {
    io.stdout.write(
      `${RESOURCE}/${name} skipped rollback (the spec already matches revision ${plan.revision})\n`,
    );
  } else {
    const dry = options.dryRun ? ' (dry run)' : '';
    io.stdout.write(`${RESOURCE}/${name} rolled back to revision ${plan.revision}${dry}\n`);
  }
  return 0;
}

export async function runRolloutPause(
  name: string,
  options: ClusterFlags,
  io: Io,
): Promise<number> {
  const client = createCliClient(cliKubeConfig(options));
  const ss = await client.getSidecarSet(name);
  if (ss.spec.updateStrategy?.paused === true) {
    io.stdout.write(`${RESOURCE}/${name} already paused\n`);
    return 0;
  }
  await client.patchSidecarSet(name, { spec: { updateStrategy: { paused: true } } });
  io.stdout.write(`${RESOURCE}/${name} paused\n`);
  return 0;
}

/**
 * Clears spec.updateStrategy.paused and stamps sidecarset.dev/resumed-at, which tells the
 * controller to lift a pause of its own (the RolloutPaused condition) as well.
 */
export async function runRolloutResume(
  name: string,
  options: ClusterFlags,
  io: Io,
  now: () => Date,
): Promise<number> {
  const client = createCliClient(cliKubeConfig(options));
  await client.getSidecarSet(name);
  await client.patchSidecarSet(name, {
    metadata: { annotations: { [RESUMED_AT]: rfc3339(now()) } },
    spec: { updateStrategy: { paused: false } },
  });
  io.stdout.write(`${RESOURCE}/${name} resumed\n`);
  return 0;
}

/** RFC 3339 in seconds, as the API server writes times. */
function rfc3339(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

function revisionNamespace(options: RolloutFlags): string {
  return options.revisionNamespace ?? DEFAULT_REVISION_NAMESPACE;
}

/**
 * Reads the SidecarSet, lets `change` decide, and replaces it when asked, guarded by the version
 * read; a conflicting write in between is read again and decided again.
 */
async function withRetry<T>(
  client: CliClient,
  name: string,
  change: (ss: SidecarSet) => T & { write?: SidecarSet },
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const decided = change(await client.getSidecarSet(name));
    if (decided.write === undefined) return decided;
    try {
      await client.replaceSidecarSet(decided.write);
      return decided;
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= CONFLICT_RETRIES) throw err;
    }
  }
}
