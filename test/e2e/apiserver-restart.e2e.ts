/**
 * The webhook across a restart of the real kube-apiserver (issue 23): while the API server is
 * down and then warming up (403s from RBAC, /readyz failing), the webhook's /readyz answers 503
 * naming its stale caches and /healthz stays ok; once the API server is ready, the webhook's
 * watches come back within seconds (src/k8s/reflector.ts probes the API server's /readyz during
 * its backoff), so a SidecarSet change made then reaches the next new pod within seconds.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { stringify } from 'yaml';

import { eventually } from '../support/eventually.js';
import type { SidecarsetProcess } from './processes.js';
import { lastWords } from './processes.js';
import type { Installation } from './support.js';
import { install, scopeIncludes, useControlPlane } from './support.js';

/** The bound the issue asks for: within a few seconds of the API server being ready. */
const RECOVERY_BOUND_MS = 5_000;
/** --max-cache-staleness for this file: short, so that the restart exceeds it. */
const MAX_STALENESS_SECONDS = 2;
/** How long the API server stays down: longer than the staleness bound. */
const DOWN_MS = 4_000;

interface Probe {
  readonly at: number;
  readonly readyz: number;
  readonly message: string;
  readonly healthz: number;
}

function sidecarSet(image: string): string {
  return stringify({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'restart-agent' },
    spec: {
      namespace: 'restart',
      selector: { matchLabels: { app: 'web' } },
      containers: [{ name: 'agent', image }],
    },
  });
}

describe('the webhook across an API server restart, in a real cluster', () => {
  const cluster = useControlPlane();
  const plane = cluster.plane;
  let installation: Installation;
  let serve: SidecarsetProcess;
  let metricsUrl = '';
  let pods = 0;

  /** The agent image a new pod gets, from a server-side dry run (admission runs, nothing stored). */
  const agentImage = async (): Promise<string | undefined> => {
    pods++;
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `web-${pods}`, namespace: 'restart', labels: { app: 'web' } },
      spec: { containers: [{ name: 'main', image: 'main:1' }] },
    };
    const created = await plane().kubectl(['create', '--dry-run=server', '-o', 'json', '-f', '-'], {
      input: stringify(pod),
    });
    if (created.code !== 0) return undefined;
    const json = JSON.parse(created.stdout) as {
      spec: { containers: { name: string; image: string }[] };
    };
    return json.spec.containers.find((c) => c.name === 'agent')?.image;
  };

  const probe = async (): Promise<Probe> => {
    const at = Date.now();
    const readyz = await fetch(`${metricsUrl}/readyz`, { signal: AbortSignal.timeout(2000) });
    const text = await readyz.text();
    const healthz = await fetch(`${metricsUrl}/healthz`, { signal: AbortSignal.timeout(2000) });
    const message =
      readyz.status === 200 ? '' : ((JSON.parse(text) as { message?: string }).message ?? text);
    return { at, readyz: readyz.status, message, healthz: healthz.status };
  };

  before(async () => {
    installation = await install(plane());
    serve = await installation.serve(['--max-cache-staleness', String(MAX_STALENESS_SECONDS)]);
    cluster.defer(() => serve.stop());
    const listening = serve.logs.find((e) => e.msg === 'webhook listening');
    metricsUrl = String(listening?.['metricsUrl']);
    await plane().createNamespace('restart');
    const applied = await plane().kubectl(['apply', '-f', '-'], { input: sidecarSet('agent:1') });
    assert.equal(applied.code, 0, applied.stderr);
    await scopeIncludes(plane(), 'restart');
    await eventually(async () => (await agentImage()) === 'agent:1', 'agent:1 injected');
  });

  it('reports stale caches on /readyz meanwhile, then injects a change within seconds of ready', async () => {
    const healthy = await probe();
    assert.deepEqual([healthy.readyz, healthy.healthz], [200, 200], healthy.message);
    // The webhook's health, every 100 ms, until the change has reached a pod.
    const probes: Probe[] = [];
    let probing = true;
    const keepProbing = (): boolean => probing; // read through a call: set after the loop starts
    const prober = (async () => {
      while (keepProbing()) {
        probes.push(await probe());
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();

    let timeline: { stoppedAt: number; readyAt: number } | undefined;
    let changedAt = 0;
    let injectedAt = 0;
    try {
      timeline = await plane().restartApiServer({ downMs: DOWN_MS });
      // Its 403s while it warms up are expected (with a margin); later ones still fail the file.
      cluster.forgiveForbidden({ from: timeline.stoppedAt, to: timeline.readyAt + 5000 });
      // The admin is never refused (system:masters); retried in case the API server still
      // waits for its webhook configurations.
      let lastApply = '';
      await eventually(
        async () => {
          const applied = await plane().kubectl(['apply', '-f', '-'], {
            input: sidecarSet('agent:2'),
          });
          lastApply = applied.stderr;
          return applied.code === 0;
        },
        'the change applied',
        30_000,
        100,
      ).catch((err: unknown) => {
        throw new Error(`${String(err)}: ${lastApply}`);
      });
      changedAt = Date.now();
      await eventually(
        async () => (await agentImage()) === 'agent:2',
        'agent:2 injected after the restart',
        60_000,
        100,
      );
      injectedAt = Date.now();
      await eventually(
        () => probes.at(-1)?.readyz === 200,
        'the webhook ready again',
        RECOVERY_BOUND_MS,
      );
    } finally {
      probing = false;
      await prober;
    }

    const { stoppedAt, readyAt } = timeline;
    const context = `API server stopped at 0 ms, ready at ${readyAt - stoppedAt} ms, changed at ${
      changedAt - stoppedAt
    } ms, injected at ${injectedAt - stoppedAt} ms\n${lastWords(serve)}`;
    assert.ok(
      injectedAt - readyAt <= RECOVERY_BOUND_MS,
      `the change reached a new pod ${injectedAt - readyAt} ms after the API server was ready; ${context}`,
    );

    assert.deepEqual(
      probes.filter((p) => p.healthz !== 200),
      [],
      'liveness stayed ok throughout',
    );
    const stale = probes.filter((p) => p.readyz === 503);
    assert.ok(stale.length > 0, `/readyz never reported the stale caches; ${context}`);
    for (const p of stale) {
      assert.ok(
        p.message.startsWith(
          `the SidecarSet cache is stale, over --max-cache-staleness ${MAX_STALENESS_SECONDS} s: `,
        ),
        p.message,
      );
    }
    assert.ok(
      stale.some((p) => /SidecarSets: list\/watch failing for \d+ s/.test(p.message)),
      `no /readyz answer named the SidecarSets' cache; ${context}`,
    );
    const lastStale = stale.at(-1)?.at ?? 0;
    assert.ok(
      lastStale - readyAt <= RECOVERY_BOUND_MS,
      `/readyz still reported stale caches ${lastStale - readyAt} ms after ready; ${context}`,
    );
  });

  it('the webhook kept running and its reflectors never gave up', async () => {
    assert.equal((await probe()).readyz, 200, lastWords(serve));
    assert.deepEqual(
      serve.logs.filter((e) => e.msg === 'reflector loop failed'),
      [],
    );
  });
});
