/**
 * The cross-SidecarSet conflict check when many SidecarSets share a volume name (issue 23:
 * 280,000 did not finish in 14 minutes): its cost per SidecarSet at two sizes, which stays about
 * the same when the check is near-linear, and the compare-with-every-other baseline
 * (test/support/simple-conflicts.ts) on a sample. Not a test: it only prints.
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';

import type { SidecarSet } from '../src/core/api/sidecarset-types.js';
import { validateCrossSidecarSetConflicts } from '../src/core/validation/sidecarset-conflicts.js';
import { makeSidecarSet, sidecar } from '../test/support/factories.js';
import { simpleCrossSidecarSetConflicts } from '../test/support/simple-conflicts.js';

const SIZES = [10_000, 40_000];
const SAMPLE_EVERY = 100;

/** One app each and a volume "logs" each: its own directory, or one for all. */
const SHAPES: [string, (i: number) => string][] = [
  ['a directory each', (i) => `/var/log/${i}`],
  ['one directory', () => '/var/log/agents'],
];

function sets(n: number, path: (i: number) => string): SidecarSet[] {
  return Array.from({ length: n }, (_, i) =>
    makeSidecarSet(`agent-${i}`, {
      selector: { matchLabels: { app: `app-${i}` } },
      containers: [sidecar(`agent-${i}`)],
      volumes: [{ name: 'logs', hostPath: { path: path(i) } }],
    }),
  );
}

function perSetMicros(check: (ss: SidecarSet) => unknown, checked: SidecarSet[]): number {
  const start = performance.now();
  for (const ss of checked) check(ss);
  return ((performance.now() - start) * 1000) / checked.length;
}

console.log(
  `node ${process.version}, ${cpus().length} CPUs, load ${loadavg()[0]?.toFixed(1) ?? '?'}; ` +
    'SidecarSets sharing the volume name "logs", one app each',
);
for (const [shape, path] of SHAPES) {
  const costs = SIZES.map((n) => {
    const all = sets(n, path);
    return perSetMicros((ss) => validateCrossSidecarSetConflicts(ss, all), all);
  });
  const small = sets(SIZES[0] ?? 0, path);
  const sample = small.filter((_, i) => i % SAMPLE_EVERY === 0);
  const simple = perSetMicros((ss) => simpleCrossSidecarSetConflicts(ss, small), sample);
  const [first = 0, last = 0] = costs;
  console.log(
    `${shape}: ${SIZES.map((n, i) => `${n}: ${(costs[i] ?? 0).toFixed(1)} µs`).join(', ')} per SidecarSet ` +
      `(${(last / first).toFixed(2)}× at ${(SIZES[1] ?? 0) / (SIZES[0] ?? 1)}× the SidecarSets); ` +
      `all pairs at ${SIZES[0]}: ${simple.toFixed(0)} µs (indexed ${(first / simple).toFixed(3)}×)`,
  );
}
