/**
 * The share of pod creations the API server no longer sends to the pod webhook once it is scoped
 * (docs/adr/0012-scoped-pod-webhook.md), in a generated cluster where the SidecarSets match about
 * 10% of the pods. The baseline, measured in the same run, is the unscoped webhook: every pod
 * outside the installer's excluded namespaces is sent. Each level of the scope is evaluated with
 * the API server's CEL semantics (an independent CEL implementation, @bufbuild/cel) on the pods'
 * labels and namespace. A benchmark, not a test.
 *
 * The cluster: 150 namespaces of 4 teams, each running 12 workloads of 10-30 pods with the labels
 * real charts set (app.kubernetes.io/name, app, tier, team, version, pod-template-hash). The
 * SidecarSets: a log agent for one team's frontends, a proxy for one namespace's every pod, a
 * debug sidecar by an opt-in label, and 20 per-application agents in their namespaces. The log
 * agent's namespaceSelector (a team label) is what CEL cannot see: its frontends are sent from
 * every namespace, the gap between the written scope and the ideal.
 */
import { run } from '@bufbuild/cel';

import { matchSidecarSet, minimalNamespaceLabels } from '../src/core/matching/match.js';
import { scopeMatchConditions, webhookScopes } from '../src/core/scope/cel.js';
import type { WebhookScope } from '../src/core/scope/webhook-scope.js';
import {
  clauseAdmits,
  podInWebhookScope,
  webhookScopeLevels,
} from '../src/core/scope/webhook-scope.js';
import type { Labels } from '../src/core/matching/selector.js';
import type { SidecarSet, SidecarSetSpec } from '../src/core/api/sidecarset-types.js';

interface GeneratedPod {
  namespace: string;
  labels: Labels;
}

/** mulberry32: the same cluster every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TEAMS = ['payments', 'search', 'checkout', 'platform'];
const TIERS = ['frontend', 'backend', 'worker', 'cache'];

function generateCluster(): { pods: GeneratedPod[]; namespaces: Map<string, Labels> } {
  const rnd = random(11);
  const pods: GeneratedPod[] = [];
  const namespaces = new Map<string, Labels>();
  for (let n = 0; n < 150; n++) {
    const team = TEAMS[n % TEAMS.length] ?? 'platform';
    const namespace = `${team}-${String(n)}`;
    namespaces.set(namespace, { ...minimalNamespaceLabels(namespace), team });
    for (let w = 0; w < 12; w++) {
      const app = `${team}-app-${String(w)}`;
      const tier = TIERS[w % TIERS.length] ?? 'worker';
      const replicas = 10 + Math.floor(rnd() * 21);
      const optIn = rnd() < 0.02;
      for (let r = 0; r < replicas; r++) {
        pods.push({
          namespace,
          labels: {
            'app.kubernetes.io/name': app,
            app,
            tier,
            team,
            version: `v${String(1 + Math.floor(rnd() * 3))}`,
            'pod-template-hash': Math.floor(rnd() * 1e9).toString(36),
            ...(optIn ? { 'debug.example.com/inject': 'true' } : {}),
          },
        });
      }
    }
  }
  return { pods, namespaces };
}

function sidecarSet(name: string, spec: Partial<SidecarSetSpec>): SidecarSet {
  return {
    metadata: { name },
    spec: { containers: [{ name: `${name}-c`, image: `${name}:1` }], ...spec },
  };
}

function sidecarSets(): SidecarSet[] {
  // One application in every seventh namespace.
  const perApp = Array.from({ length: 20 }, (_, i) => {
    const n = i * 7;
    const team = TEAMS[n % TEAMS.length] ?? 'platform';
    return sidecarSet(`agent-${String(i)}`, {
      namespace: `${team}-${String(n)}`,
      selector: { matchLabels: { app: `${team}-app-${String(i % 12)}` } },
    });
  });
  return [
    sidecarSet('log-agent', {
      namespaceSelector: {
        matchExpressions: [{ key: 'team', operator: 'In', values: ['payments'] }],
      },
      selector: { matchLabels: { tier: 'frontend' } },
    }),
    sidecarSet('proxy', { namespace: 'search-1', selector: { matchLabels: { team: 'search' } } }),
    sidecarSet('debug', {
      selector: { matchExpressions: [{ key: 'debug.example.com/inject', operator: 'Exists' }] },
    }),
    ...perApp,
  ];
}

/**
 * Pods the API server sends under this scope: the selectors and the clauses in process, and for
 * every 20th pod the rendered CEL condition too, which must agree (the property tests in
 * test/core/scope prove it; this checks it on the generated population).
 */
function sent(scope: WebhookScope, pods: readonly GeneratedPod[], ns: Map<string, Labels>): number {
  const [condition] = scopeMatchConditions(scope);
  let count = 0;
  pods.forEach((pod, i) => {
    const inScope = podInWebhookScope(
      scope,
      pod.labels,
      pod.namespace,
      ns.get(pod.namespace) ?? {},
    );
    if (i % 20 === 0 && condition !== undefined) {
      const clauses =
        scope.clauses?.some((c) => clauseAdmits(c, pod.labels, pod.namespace)) ?? true;
      const cel = run(condition.expression, {
        object: { metadata: { labels: { ...pod.labels } } },
        request: { namespace: pod.namespace },
      });
      if (cel !== clauses)
        throw new Error(`CEL and the clauses disagree on ${JSON.stringify(pod)}`);
    }
    if (inScope) count++;
  });
  return count;
}

function percent(part: number, whole: number): string {
  return `${((100 * part) / whole).toFixed(1)}%`;
}

function main(): void {
  const { pods, namespaces } = generateCluster();
  const sets = sidecarSets();
  const matched = pods.filter((pod) =>
    sets.some(
      (ss) =>
        matchSidecarSet(ss, { metadata: { labels: { ...pod.labels } } }, pod.namespace, {
          get: (name) => namespaces.get(name),
        }).matched,
    ),
  ).length;
  console.log(
    `${String(pods.length)} pods in ${String(namespaces.size)} namespaces, ${String(sets.length)} SidecarSets matching ${percent(matched, pods.length)} of them`,
  );
  const baseline = pods.length;
  const written = webhookScopes(sets)[0]?.precision;
  console.log(['scope', 'sent', 'not sent', 'sent / baseline'].map((c) => c.padEnd(22)).join(''));
  console.log(
    ['unscoped (baseline)', String(baseline), '0', '1.000'].map((c) => c.padEnd(22)).join(''),
  );
  const ideal = [
    'matched only (ideal)',
    String(matched),
    percent(baseline - matched, baseline),
    (matched / baseline).toFixed(3),
  ];
  console.log(ideal.map((c) => c.padEnd(22)).join(''));
  for (const scope of webhookScopeLevels(sets)) {
    const n = sent(scope, pods, namespaces);
    const label = `${scope.precision}${scope.precision === written ? ' (written)' : ''}`;
    console.log(
      [label, String(n), percent(baseline - n, baseline), (n / baseline).toFixed(3)]
        .map((c) => c.padEnd(22))
        .join(''),
    );
  }
}

main();
