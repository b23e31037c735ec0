/** `sidecarset plan`: what the upgrade controller would do next, and optionally the whole rollout. */
import type { NamespaceLabels } from '../core/matching/match.js';
import { ANY_NAMESPACE } from '../core/matching/match.js';
import { withHashes } from '../core/api/hash.js';
import type { SidecarSet } from '../core/api/sidecarset-types.js';
import type { Pod } from '../core/api/k8s-types.js';
import { planUpgrade } from '../core/upgrade/plan.js';
import { resizableVersions } from '../core/revisions/history.js';
import { podKey } from '../core/api/pod-ref.js';
import { selectsForUpgrade } from '../core/matching/upgrade-selection.js';
import type { Simulation } from '../core/rollout/simulate.js';
import { simulateRollout } from '../core/rollout/simulate.js';
import type { UpgradePlan, UpgradeStatus } from '../core/upgrade/types.js';
import type { PodRef } from '../core/api/pod-ref.js';
import type { LoadedDocument } from '../io/documents.js';
import { checkOneStdin, inputError, readEachManifest } from '../io/documents.js';
import type { ClusterFlags } from '../k8s/cli-client.js';
import { slimPod } from '../k8s/slim-pod.js';
import { renderData, some, table } from './format.js';
import type { Io } from './io.js';
import { UsageError } from './io.js';
import { loadValidSidecarSets } from './sidecarset-input.js';

export interface PlanCommandOptions extends ClusterFlags {
  /** A SidecarSet in the cluster: plan it with the cluster's pods. */
  name?: string;
  sidecarsets?: string;
  pods?: string;
  output: 'json' | 'table' | 'yaml';
  simulate: boolean;
  /** With simulate: sidecar images that never become ready. */
  failImage?: readonly string[];
}

interface Result {
  plan: UpgradePlan;
  simulation?: Simulation;
}

export async function runPlan(options: PlanCommandOptions, io: Io, now: Date): Promise<number> {
  if ((options.failImage ?? []).length > 0 && !options.simulate) {
    throw new UsageError('--fail-image needs --simulate');
  }
  if (options.name !== undefined) {
    if (options.sidecarsets !== undefined || options.pods !== undefined) {
      throw new UsageError('plan NAME reads the cluster: leave out --sidecarsets and --pods');
    }
    return runLivePlan(options.name, options, io, now);
  }
  if (options.sidecarsets === undefined || options.pods === undefined) {
    throw new UsageError(
      'plan needs --sidecarsets and --pods, or the NAME of a SidecarSet in the cluster',
    );
  }
  checkOneStdin({ '--sidecarsets': options.sidecarsets, '--pods': options.pods });
  const sidecarSets = await loadValidSidecarSets(options.sidecarsets, io);
  if (sidecarSets === undefined) return 1;
  const slim = sidecarSets.every(plansOnSlimPods);
  const pods = await readEachManifest(options.pods, io.stdin, (doc) =>
    slim ? slimPod(asPod(doc)) : asPod(doc),
  );
  // Every namespace exists, with only its name label.
  const results = sidecarSets.map((ss) =>
    resultOf(ss, pods, { namespaces: ANY_NAMESPACE }, options, now),
  );
  io.stdout.write(render(results, options.output));
  return 0;
}

/** `plan NAME`: the SidecarSet and the pods it can match, read from the cluster now. */
async function runLivePlan(
  name: string,
  options: PlanCommandOptions,
  io: Io,
  now: Date,
): Promise<number> {
  const { cliKubeConfig, createCliClient } = await import('../k8s/cli-client.js');
  const { DEFAULT_REVISION_NAMESPACE } = await import('../k8s/revisions.js');
  const client = createCliClient(cliKubeConfig(options));
  // As the controller reads it: defaulted, with the hashes the webhook would have set.
  const ss = withHashes(await client.getSidecarSet(name));
  const [pods, namespaces, revisions, podResize] = await Promise.all([
    client.podsOf(ss),
    client.namespaces(),
    client.revisions(name, DEFAULT_REVISION_NAMESPACE),
    client.canResizePods(),
  ]);
  const versions = resizableVersions(revisions);
  const result = resultOf(ss, pods, { namespaces, versions, podResize }, options, now);
  io.stdout.write(render([result], options.output));
  return 0;
}

/** What the cluster tells the plan beyond pods. */
interface ClusterView {
  namespaces: NamespaceLabels;
  /** From the SidecarSet's ControllerRevisions: which pods may be resized in place. */
  versions?: ReadonlyMap<string, string>;
  /** Whether the API server has pods/resize; the controller asks it too. */
  podResize?: boolean;
}

function resultOf(
  ss: SidecarSet,
  pods: readonly Pod[],
  cluster: ClusterView,
  options: PlanCommandOptions,
  now: Date,
): Result {
  const { namespaces, versions, podResize } = cluster;
  const matched = pods.filter((pod) => selectsForUpgrade(ss, pod, namespaces));
  const plan = planUpgrade(ss, matched, {
    now,
    ...(versions === undefined ? {} : { versions }),
    ...(podResize === undefined ? {} : { podResize }),
  });
  if (!options.simulate) return { plan };
  const failImages = options.failImage ?? [];
  return { plan, simulation: simulateRollout(ss, matched, { now, failImages }) };
}

/**
 * Whether the plan of `ss` is the same on pods reduced by slimPod, which keeps what the planner
 * reads (src/k8s/slim-pod.ts): not with patchPodMetadata, which merges into annotations the slim
 * pod drops, nor with hot upgrades, whose slots the plan rewrites whole.
 */
function plansOnSlimPods(ss: SidecarSet): boolean {
  const hot = (ss.spec.containers ?? []).some(
    (c) => c.upgradeStrategy?.upgradeType === 'HotUpgrade',
  );
  return !hot && (ss.spec.patchPodMetadata ?? []).length === 0;
}

function render(results: readonly Result[], output: PlanCommandOptions['output']): string {
  if (output === 'table') return renderTable(results);
  const values = results.map(jsonOf);
  return renderData(values.length === 1 ? values[0] : values, output);
}

function asPod(doc: LoadedDocument): Pod {
  const kind = doc.object['kind'];
  if (kind !== 'Pod') {
    const found = typeof kind === 'string' ? `kind ${kind}` : 'no kind';
    throw inputError(doc.source, `expected a Pod, found ${found}`);
  }
  const metadata = doc.object['metadata'];
  if (typeof metadata !== 'object' || metadata === null) {
    throw inputError(doc.source, 'the Pod has no metadata');
  }
  const spec = doc.object['spec'];
  if (
    typeof spec !== 'object' ||
    spec === null ||
    !Array.isArray((spec as Pod['spec']).containers)
  ) {
    throw inputError(doc.source, 'the Pod has no spec.containers');
  }
  return doc.object as unknown as Pod;
}

function jsonOf(result: Result): Record<string, unknown> {
  const { plan, simulation } = result;
  const out: Record<string, unknown> = {
    sidecarSet: plan.sidecarSet,
    status: plan.status,
    upgrade: plan.upgrade.map((u) => podKey(u.pod)),
    notUpgradable: plan.notUpgradable.map((n) => podKey(n.pod)),
    held: plan.held.map((h) => ({ pod: podKey(h.pod), reason: h.reason })),
  };
  if (plan.flip.length > 0) out['flip'] = plan.flip.map((f) => podKey(f.pod));
  if (plan.recreate.length > 0) out['recreate'] = plan.recreate.map((r) => podKey(r.pod));
  if (simulation !== undefined) {
    out['simulation'] = {
      maxUnavailable: simulation.maxUnavailable,
      partition: simulation.partition,
      waves: simulation.waves.map((w) => ({
        pods: w.pods.map(podKey),
        unavailable: w.unavailable,
      })),
      end: simulation.end,
      message: simulation.message,
      touched: simulation.touched,
      final: simulation.final,
    };
  }
  return out;
}

function statusLine(s: UpgradeStatus): string {
  return `matched ${s.matchedPods}, updated ${s.updatedPods}, ready ${s.readyPods}, updatedReady ${s.updatedReadyPods}`;
}

function planLines(plan: UpgradePlan, perPod: boolean): string[] {
  const b = plan.budget;
  const lines = [
    `SidecarSet ${plan.sidecarSet}`,
    `  status:  ${statusLine(plan.status)}`,
    `  budget:  partition ${b.partition}, maxUnavailable ${b.maxUnavailable}, unavailable now ${b.unavailable}` +
      `, candidates ${b.candidates}, eligible ${b.eligible}`,
  ];
  if (plan.stopped !== undefined) lines.push(`  stopped: ${plan.stopped}`);
  const rows: string[][] = [['  #', 'POD', 'ACTION', 'DETAIL']];
  if (!perPod && plan.upgrade.length > 0) {
    rows.push([
      '  -',
      `${plan.upgrade.length} pods`,
      'upgrade',
      `this round: ${some(plan.upgrade.map((u) => u.pod))}`,
    ]);
  }
  (perPod ? plan.upgrade : []).forEach((u, i) => {
    const images = [
      ...u.images.map((c) => `${c.container}: ${c.from} → ${c.to}`),
      ...u.resources.map((r) => `${r.container}: resources → ${JSON.stringify(r.to)}`),
    ].join('; ');
    rows.push([
      `  ${i + 1}`,
      podKey(u.pod),
      'upgrade',
      images === '' ? 'annotations only' : images,
    ]);
  });
  if (!perPod && plan.recreate.length > 0) {
    rows.push([
      '  -',
      `${plan.recreate.length} pods`,
      'recreate',
      `evicted this round: ${some(plan.recreate.map((r) => r.pod))}`,
    ]);
  }
  (perPod ? plan.recreate : []).forEach((r, i) => {
    const refused = r.refused === undefined ? '' : `; last eviction refused: ${r.refused}`;
    rows.push([
      `  ${plan.upgrade.length + i + 1}`,
      podKey(r.pod),
      'recreate',
      `evict, ${r.controller} recreates it (${r.message})${refused}`,
    ]);
  });
  const groups = new Map<string, PodRef[]>();
  for (const f of plan.flip)
    push(groups, 'flip: the old hot-upgrade slot back to the empty image', f.pod);
  for (const n of plan.notUpgradable) push(groups, `not upgradable: ${n.message}`, n.pod);
  for (const h of plan.held) push(groups, `held: ${h.reason}`, h.pod);
  for (const [label, refs] of groups) {
    rows.push([
      '  -',
      `${refs.length} pods`,
      label.slice(0, label.indexOf(': ')),
      `${label.slice(label.indexOf(': ') + 2)}: ${some(refs)}`,
    ]);
  }
  return rows.length > 1 ? [...lines, ...table(rows)] : lines;
}

function push(groups: Map<string, PodRef[]>, label: string, ref: PodRef): void {
  const list = groups.get(label) ?? [];
  list.push(ref);
  groups.set(label, list);
}

function simulationLines(sim: Simulation): string[] {
  const lines = [
    `  rollout: ${sim.initial.matchedPods} matched, maxUnavailable ${sim.maxUnavailable}, partition ${sim.partition}`,
  ];
  const rows: string[][] = [['  WAVE', 'PODS', 'UNAVAILABLE', 'WHICH']];
  for (const w of sim.waves) {
    rows.push([`  ${w.index}`, String(w.pods.length), String(w.unavailable), some(w.pods, 3)]);
  }
  // One row per wave, so no push(...rows): 100,000 waves would overflow the stack.
  return [
    ...lines,
    ...(sim.waves.length > 0 ? table(rows) : []),
    `  stops:   ${sim.end}: ${sim.message}`,
    `  touched: ${sim.touched} pods upgraded`,
    `  final:   ${statusLine(sim.final)}`,
  ];
}

function renderTable(results: readonly Result[]): string {
  const blocks = results.map(({ plan, simulation }) =>
    [
      ...planLines(plan, simulation === undefined),
      ...(simulation === undefined ? [] : simulationLines(simulation)),
    ].join('\n'),
  );
  return `${blocks.join('\n\n')}\n`;
}
