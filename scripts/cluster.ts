/**
 * `npm run cluster`: a real, whole Kubernetes cluster on loopback for trying the webhook and the
 * controller by hand: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and one node
 * (kubelet, containerd, runc), built from Go modules by test/kube-fixture/build.sh and
 * test/node-fixture/build.sh. Prints the admin kubeconfig and runs until Ctrl-C; then it stops
 * everything and removes its data.
 *
 *   npm run cluster                        # the cluster
 *   npm run cluster -- --install           # and manifests/ applied, the webhooks pointed at
 *                                          # https://127.0.0.1:9443 (the certificate in certs/dev)
 *   npm run cluster -- load-image FILE.tar # loads an image archive onto the running cluster's node
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { ensureDevCertificates } from '../src/server/tls.js';
import { installManifests } from '../test/e2e/install.js';
import { controlPlaneBinaries } from '../test/kube-fixture/binaries.js';
import type { ControlPlane } from '../test/kube-fixture/control-plane.js';
import { alive, startControlPlane } from '../test/kube-fixture/control-plane.js';
import { nodeBinaries } from '../test/node-fixture/binaries.js';
import { TEST_IMAGES } from '../test/node-fixture/images.js';
import type { NodeRuntime } from '../test/node-fixture/node.js';
import { loadImageArchive, startNode } from '../test/node-fixture/node.js';

const WEBHOOK = 'https://127.0.0.1:9443';
const DEV_CERTS = 'certs/dev';
/** Where the running cluster says how to reach its node, for `load-image` from another terminal. */
const STATE_FILE = join(tmpdir(), 'sidecarset-cluster.json');

interface ClusterState {
  readonly pid: number;
  readonly kubeconfig: string;
  readonly node: NodeRuntime;
}

/** Applies manifests/ for a webhook on this machine; returns the ServiceAccount's kubeconfig. */
async function install(plane: ControlPlane): Promise<string> {
  const certs = await ensureDevCertificates(DEV_CERTS, new Date());
  await installManifests(plane, { url: WEBHOOK, caPem: await readFile(certs.caFile, 'utf8') });
  const token = await plane.serviceAccountToken('sidecarset-system', 'sidecarset');
  return plane.writeKubeconfig('sidecarset.kubeconfig', token);
}

function fail(message: string): never {
  process.stderr.write(`cluster: ${message}\n`);
  process.exit(1);
}

async function loadImage(archives: readonly string[]): Promise<void> {
  if (archives.length === 0) fail('usage: npm run cluster -- load-image FILE.tar...');
  const text = await readFile(STATE_FILE, 'utf8').catch(() => undefined);
  const state = text === undefined ? undefined : (JSON.parse(text) as ClusterState);
  if (state === undefined || !alive(state.pid)) {
    fail('no cluster is running here: start one with `npm run cluster` first');
  }
  for (const archive of archives) {
    await loadImageArchive(state.node, resolve(archive)).catch((err: unknown) => {
      fail(`${archive}: ${err instanceof Error ? err.message : String(err)}`);
    });
    process.stdout.write(`${archive} loaded onto the node\n`);
  }
}

async function start(): Promise<void> {
  const found = await controlPlaneBinaries();
  if ('skip' in found) fail(found.skip);
  const foundNode = await nodeBinaries();
  if ('skip' in foundNode) fail(foundNode.skip);
  const plane = await startControlPlane({ binaries: found.binaries, controllers: true });
  const node = await startNode({
    plane,
    binaries: foundNode.binaries,
    kubelet: found.binaries.kubelet,
  }).catch(async (err: unknown) => {
    await plane.stop();
    throw err;
  });
  const stopAll = async (): Promise<void> => {
    await node.stop();
    await plane.stop();
    await rm(STATE_FILE, { force: true });
  };
  const state: ClusterState = {
    pid: process.pid,
    kubeconfig: plane.adminKubeconfig,
    node: node.runtime,
  };
  await writeFile(STATE_FILE, JSON.stringify(state));
  const kubectl = found.binaries.kubectl;
  const lines = [
    `Kubernetes ${await plane.version()} at ${plane.url}, node ${node.name} Ready`,
    `admin kubeconfig: ${plane.adminKubeconfig}`,
    '',
    `  export KUBECONFIG=${plane.adminKubeconfig}`,
    `  ${kubectl} get nodes`,
    '',
    `Images on the node: ${Object.values(TEST_IMAGES)
      .filter((i) => i !== TEST_IMAGES.missing)
      .join(' ')}`,
    'Load more from another terminal: npm run cluster -- load-image FILE.tar',
    'Pods use the host network (hostNetwork: true) and images already on the node.',
    '',
  ];
  if (process.argv.includes('--install')) {
    const kubeconfig = await install(plane);
    lines.push(
      `manifests/ applied; the webhooks call ${WEBHOOK}. Start the webhook and the controller as`,
      "the manifests' ServiceAccount (the token is valid for an hour), then use the examples:",
      '',
      `  npx sidecarset serve --kubeconfig ${kubeconfig} --host 127.0.0.1 --dev-cert-dir ${DEV_CERTS} --leader-elect`,
      `  ${kubectl} apply -f examples/local-cluster/`,
      `  ${kubectl} get pods -w`,
      '',
    );
  }
  lines.push('Ctrl-C stops the cluster and deletes its data.', '');
  process.stdout.write(lines.join('\n'));

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${signal}: stopping the cluster\n`);
    void stopAll().then(() => process.exit(0));
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      stop(signal);
    });
  }
}

const [command, ...rest] = process.argv.slice(2).filter((a) => a !== '--install');
if (command === 'load-image') await loadImage(rest);
else if (command === undefined) await start();
else fail(`unknown command ${command}: npm run cluster [-- --install | load-image FILE.tar]`);
