/**
 * Every metric that the alerts and the dashboard name is exposed by a running process: `serve` in
 * files mode (the webhook's metrics), `serve` with the controller against the fake API server (as
 * test/controller/cluster.ts runs it), and `sidecarset controller` on its own. Also the naming
 * conventions the pack relies on: process and Node.js metrics under their usual names, and
 * sidecarset_build_info with the package's version.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';

import { startServe } from '../../src/cli/serve.js';
import { startTestCluster } from '../controller/cluster.js';
import { startFakeApiServer } from '../fake-apiserver/index.js';
import { freePorts } from '../kube-fixture/control-plane.js';
import { eventually } from '../support/eventually.js';
import { alerts, dashboardExpressions, ruleGroups } from './pack.js';

const root = new URL('../../', import.meta.url).pathname;

/** Names a scrape exposes: every `# TYPE` line, with a histogram's series names. */
function exposedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name = '', type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
  }
  return names;
}

/** The metric names in PromQL expressions (ours and the standard process ones). */
const namedIn = (exprs: readonly string[]): string[] =>
  exprs.flatMap((e) =>
    [...e.matchAll(/\b(?:sidecarset|process|nodejs|workqueue|rest_client)_[a-z0-9_]+/g)].map(
      (m) => m[0],
    ),
  );

async function scrape(metricsUrl: string | undefined): Promise<string> {
  assert.ok(metricsUrl);
  return (await fetch(`${metricsUrl}/metrics`)).text();
}

const version = (
  JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string }
).version;

describe('the metrics the monitoring pack uses', () => {
  const scrapes: string[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  before(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'monitoring-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));

    const files = await startServe(
      {
        sidecarsets: join(root, 'examples/logtail-sidecarset.yaml'),
        port: 0,
        metricsPort: 0,
        host: '127.0.0.1',
        logLevel: 'silent',
        devCertDir: dir,
      },
      { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() },
    );
    cleanups.push(() => files.close());
    scrapes.push(await scrape(files.metricsUrl));

    const cluster = await startTestCluster();
    cleanups.push(() => cluster.close());
    scrapes.push(await scrape(cluster.served.metricsUrl));

    // `sidecarset controller` from the sources (tsx), against a fake API server of its own.
    const api = await startFakeApiServer({ namespaces: ['default', 'sidecarset-system'] });
    cleanups.push(() => api.close());
    const kubeconfig = join(dir, 'controller.kubeconfig');
    await writeFile(kubeconfig, api.kubeConfig().exportConfig());
    const [port] = (await freePorts(1)) as [number];
    const main = join(root, 'src/cli/main.ts');
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `const { main } = await import(${JSON.stringify(main)});
         process.exitCode = await main(process.argv.slice(1), process);`,
        'controller',
        '--kubeconfig',
        kubeconfig,
        '--metrics-port',
        String(port),
        '--host',
        '127.0.0.1',
        '--log-level',
        'fatal',
      ],
      { stdio: ['ignore', 'ignore', 'inherit'], cwd: root },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    cleanups.push(() => {
      child.kill('SIGKILL');
      return exited;
    });
    const url = `http://127.0.0.1:${String(port)}`;
    await eventually(async () => {
      try {
        return (await fetch(`${url}/readyz`)).status === 200;
      } catch {
        return false;
      }
    }, 'sidecarset controller ready');
    scrapes.push(await scrape(url));
  });

  it('exposes every metric the alerts and the dashboard name', async () => {
    const exposed = new Set(scrapes.flatMap((s) => [...exposedNames(s)]));
    const named = namedIn([
      ...alerts(await ruleGroups()).map((r) => r.expr),
      ...(await dashboardExpressions()),
    ]);
    assert.ok(named.length > 10, 'the expressions were read');
    assert.deepEqual(
      [...new Set(named)].filter((n) => !exposed.has(n)).sort(),
      [],
      'named but not exposed',
    );
  });

  it('with a cluster: the work queue and API client metrics under client-go names', () => {
    // scrapes[1]: serve with the controller; scrapes[2]: sidecarset controller.
    for (const text of scrapes.slice(1)) {
      const names = exposedNames(text);
      for (const name of [
        'workqueue_depth',
        'workqueue_adds_total',
        'workqueue_retries_total',
        'workqueue_work_duration_seconds',
        'rest_client_requests_total',
        'rest_client_request_duration_seconds',
      ])
        assert.ok(names.has(name), name);
      assert.match(text, /^rest_client_requests_total\{method="GET",code="200"\} [1-9]/m);
    }
  });

  it('every process: standard process metrics, and build info with the version', () => {
    for (const text of scrapes) {
      const names = exposedNames(text);
      for (const name of [
        'process_cpu_seconds_total',
        'process_resident_memory_bytes',
        'nodejs_eventloop_lag_p99_seconds',
        'sidecarset_build_info',
      ])
        assert.ok(names.has(name), name);
      assert.ok(![...names].some((n) => n.startsWith('sidecarset_process_')));
      assert.match(text, new RegExp(`^sidecarset_build_info\\{version="${version}"\\} 1$`, 'm'));
    }
  });
});
