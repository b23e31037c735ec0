/**
 * The server side of bench/admission.bench.ts, run in a child process so that its CPU time is
 * measured apart from the load generator's. It serves either
 *   - `webhook <sidecarsets dir> <dev cert dir> <log level>`: the real webhook through
 *     `startServe` (files mode, development certificate), logging to this process's stdout as in
 *     production (a pipe the parent reads), or
 *   - `baseline <dev cert dir>`: a bare fastify HTTPS server (same certificate, same TLS policy,
 *     same body limit, no logger) doing a naive one-sidecar injection answered with a
 *     fast-json-patch `compare` patch,
 * on 127.0.0.1 with a free port, then answers IPC messages: `cpu` (its process.cpuUsage()) and
 * `stop`.
 */
import { Readable } from 'node:stream';

import jsonPatch from 'fast-json-patch';
import { fastify } from 'fastify';

import { startServe } from '../src/cli/serve.js';
import { sizeHeapForServing } from '../src/cli/serving-heap.js';
import { isPlainObject } from '../src/core/encoding/json.js';
import type { Container, Pod, Volume } from '../src/core/api/k8s-types.js';
import { BODY_LIMIT, secureContextOptions } from '../src/server/http-server.js';
import { ensureDevCertificates, readTlsPair } from '../src/server/tls.js';

export type ParentMessage = { type: 'cpu' } | { type: 'stop' };
export type ChildMessage =
  | { type: 'ready'; url: string }
  | { type: 'cpu'; micros: number }
  | { type: 'failed'; message: string };

interface Running {
  url: string;
  close(): Promise<void>;
}

/** The sidecar the baseline injects: the article's logtail container, and one volume. */
const SIDECAR: Container = {
  name: 'logtail',
  image: 'log-service/logtail:0.16.16',
  command: ['sh', '-c', '/usr/local/ilogtail/run_logtail.sh 10'],
  resources: { limits: { memory: '512Mi' }, requests: { cpu: '10m', memory: '30Mi' } },
  volumeMounts: [{ name: 'nginx-log', mountPath: '/var/log/nginx' }],
};
const SIDECAR_VOLUME: Volume = { name: 'logtail-state', emptyDir: {} };

function startWebhook(sidecarSets: string, devCertDir: string, logLevel: string): Promise<Running> {
  return startServe(
    { sidecarsets: sidecarSets, port: 0, host: '127.0.0.1', logLevel, devCertDir },
    { stdin: Readable.from([]), stdout: process.stdout, stderr: process.stderr },
  );
}

/** The pod and uid of an AdmissionReview, or undefined when it does not carry a pod. */
function parseReview(body: unknown): { apiVersion: string; uid: string; pod: Pod } | undefined {
  if (!isPlainObject(body) || !isPlainObject(body['request'])) return undefined;
  const { uid, object } = body['request'];
  const apiVersion = body['apiVersion'];
  if (typeof uid !== 'string' || typeof apiVersion !== 'string') return undefined;
  if (!isPlainObject(object) || !isPlainObject(object['spec'])) return undefined;
  if (!Array.isArray(object['spec']['containers'])) return undefined;
  return { apiVersion, uid, pod: object as unknown as Pod };
}

async function startBaseline(devCertDir: string): Promise<Running> {
  const dev = await ensureDevCertificates(devCertDir, new Date());
  const tls = await readTlsPair(dev.certFile, dev.keyFile);
  const app = fastify({
    bodyLimit: BODY_LIMIT,
    https: secureContextOptions(tls),
  });
  app.post('/mutate-pods', async (request, reply) => {
    const review = parseReview(request.body);
    if (review === undefined) return reply.code(400).send({ message: 'not a pod review' });
    const mutated = structuredClone(review.pod);
    mutated.spec.containers.unshift(structuredClone(SIDECAR));
    mutated.spec.volumes = [...(mutated.spec.volumes ?? []), structuredClone(SIDECAR_VOLUME)];
    const patch = jsonPatch.compare(review.pod, mutated);
    return {
      apiVersion: review.apiVersion,
      kind: 'AdmissionReview',
      response: {
        uid: review.uid,
        allowed: true,
        patchType: 'JSONPatch',
        patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
      },
    };
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: () => app.close() };
}

function send(message: ChildMessage): void {
  process.send?.(message);
}

async function main(): Promise<void> {
  const [mode, first = '', second = '', third = 'info'] = process.argv.slice(2);
  // As bin/sidecarset.js sizes the heap of `serve` (started with the image's flags: no restart).
  if (mode === 'webhook') sizeHeapForServing(['serve']);
  const running =
    mode === 'webhook' ? await startWebhook(first, second, third) : await startBaseline(first);
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      send({ type: 'cpu', micros: user + system });
    } else {
      void running.close().finally(() => process.exit(0));
    }
  });
  // Without a parent there is nobody to stop us.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready', url: running.url });
}

main().catch((err: unknown) => {
  send({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
  process.exit(1);
});
