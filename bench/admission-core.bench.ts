/**
 * The pure part of one pod admission, in process: parse the AdmissionReview, decide (match,
 * inject, diff, encode the patch) and serialize the answer, with 1, 100 and 1,000 SidecarSets
 * loaded, for the realistic ~5 KB pod and the article's small one. No HTTP, no TLS: it shows
 * what the core costs per request, next to what bench/admission.bench.ts measures for the whole server. A benchmark, not a test.
 *
 * BENCH_ITERATIONS=n (default 20,000) sets the measured decisions per size, after a warm-up.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { makeSnapshot } from '../src/cache/snapshot.js';
import { decidePod } from '../src/core/admission/pod-webhook.js';
import { parseAdmissionReview, reviewResponse } from '../src/core/admission/review.js';
import { ANY_NAMESPACE } from '../src/core/matching/match.js';
import { loadSidecarSets } from '../src/io/loaders.js';
import { EXAMPLES, REALISTIC_REVIEW, writeSidecarSets } from './admission-fixtures.js';

const SIZES = [1, 100, 1_000];
const ITERATIONS = Number(process.env['BENCH_ITERATIONS'] ?? 20_000);
const WARMUP = 2_000;
const BATCH = 100;

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'sidecarset-core-bench-'));
  try {
    const bodies = {
      realistic: await readFile(REALISTIC_REVIEW, 'utf8'),
      small: await readFile(new URL('admission-review.json', EXAMPLES), 'utf8'),
    };
    const now = new Date();
    console.log(`CPU per request (${ITERATIONS} iterations after ${WARMUP} warm-up)`);
    console.log(
      ['pod', 'SidecarSets', 'parse µs', 'decide µs', 'serialize µs']
        .map((c) => c.padEnd(14))
        .join(''),
    );
    for (const n of SIZES) {
      const prepared = await loadSidecarSets(await writeSidecarSets(root, n));
      const snapshot = makeSnapshot(prepared.sidecarSets, ANY_NAMESPACE, undefined);
      for (const [pod, body] of Object.entries(bodies)) {
        // CPU time (not wall time: the machine may be busy), over batches of each phase in turn.
        let parse = 0;
        let decide = 0;
        let serialize = 0;
        for (let done = -WARMUP; done < ITERATIONS; done += BATCH) {
          const t0 = cpuMicros();
          const requests = Array.from({ length: BATCH }, () => {
            const parsed = parseAdmissionReview(JSON.parse(body));
            if (!parsed.ok) throw new Error(parsed.message);
            return parsed;
          });
          const t1 = cpuMicros();
          const decisions = requests.map((parsed) => {
            const decision = decidePod(parsed.request, snapshot, { now, random: Math.random });
            if (decision.outcome !== 'injected') throw new Error(`outcome ${decision.outcome}`);
            return decision;
          });
          const t2 = cpuMicros();
          for (const [i, decision] of decisions.entries()) {
            const apiVersion = requests[i]?.apiVersion ?? 'admission.k8s.io/v1';
            JSON.stringify(reviewResponse(apiVersion, decision.response));
          }
          const t3 = cpuMicros();
          if (done < 0) continue;
          parse += t1 - t0;
          decide += t2 - t1;
          serialize += t3 - t2;
        }
        const us = [parse, decide, serialize].map((t) => (t / ITERATIONS).toFixed(1));
        console.log([pod, String(n), ...us].map((c) => c.padEnd(14)).join(''));
      }
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
