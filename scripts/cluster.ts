/**
 * `npm run cluster`: a real, whole Kubernetes cluster for trying the webhook and the controller by
 * hand: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and one node (kubelet,
 * kube-proxy, containerd, runc) in a network namespace of its own, with a pod network and Services,
 * built from Go modules by test/kube-fixture/build.sh and test/node-fixture/build.sh. Prints the
 * admin kubeconfig (https://127.0.0.1:PORT, forwarded into the namespace) and runs until Ctrl-C;
 * then it stops everything and removes its data.
 *
 *   npm run cluster                        # the cluster, the newest Kubernetes tested
 *   npm run cluster -- --kubernetes 1.33   # another version (a minor, or its pinned patch 1.33.13)
 *   npm run cluster -- --install           # and this project installed as users install it: the
 *                                          # image (`npm run image`) loaded, the chart installed
 *   npm run cluster -- load-image FILE.tar # loads an image archive onto the running cluster's node
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

import { CHART, helm } from '../test/e2e/helm.js';
import { buildImage } from '../test/e2e/image.js';
import { helmBinary } from '../test/helm-fixture/binary.js';
import {
  KUBERNETES_VERSIONS,
  NEWEST_KUBERNETES,
  controlPlaneBinaries,
  pinnedKubernetes,
} from '../test/kube-fixture/binaries.js';
import type { ControlPlane } from '../test/kube-fixture/control-plane.js';
import { alive, startControlPlane } from '../test/kube-fixture/control-plane.js';
import { nodeBinaries } from '../test/node-fixture/binaries.js';
import { TEST_IMAGES } from '../test/node-fixture/images.js';
import type { KubeNode, NodeRuntime } from '../test/node-fixture/node.js';
import { loadImageArchive, startNode } from '../test/node-fixture/node.js';

/** Where the running cluster says how to reach its node, for `load-image` from another terminal. */
const STATE_FILE = join(tmpdir(), 'sidecarset-cluster.json');

interface ClusterState {
  readonly pid: number;
  readonly kubeconfig: string;
  readonly node: NodeRuntime;
}

/**
 * This project as users install it: the image built (or rebuilt from the caches) and loaded onto
 * the node, the chart installed with its defaults but for the image, until its Deployment is Ready.
 */
async function install(plane: ControlPlane, node: KubeNode): Promise<string[]> {
  const helmFound = await helmBinary();
  if ('skip' in helmFound) fail(helmFound.skip);
  process.stdout.write('Building the image (npm run image)…\n');
  const image = await buildImage(resolve('build'));
  await node.loadImage(image.archive);
  const at = image.reference.lastIndexOf(':');
  const installed = await helm(
    plane,
    [
      'install',
      'sidecarset',
      CHART,
      '--set',
      `image.repository=${image.reference.slice(0, at)},image.tag=${image.reference.slice(at + 1)}`,
      '--wait',
      '--timeout',
      '5m',
    ],
    helmFound.helm,
  );
  if (installed.code !== 0) fail(`helm install: ${installed.stderr}`);
  return [
    `${image.reference} (${image.archive}) loaded onto the node; the chart installed as the release`,
    'sidecarset: two replicas in sidecarset-system, webhooks through the Service. Then:',
    '',
    '  npx sidecarset check',
    '  kubectl apply -f examples/local-cluster/',
    '  npx sidecarset rollout status local-logtail -w',
    '',
  ];
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

/** The minor of `--kubernetes 1.33` or `--kubernetes v1.33.13` (which must be the pinned patch). */
async function kubernetesMinor(asked: string | undefined): Promise<string> {
  if (asked === undefined) return NEWEST_KUBERNETES;
  const m = /^v?(1\.\d+)(\.\d+)?$/.exec(asked);
  const minor = m?.[1] ?? '';
  if (!KUBERNETES_VERSIONS.includes(minor)) {
    fail(`--kubernetes ${asked}: the versions built here are ${KUBERNETES_VERSIONS.join(', ')}`);
  }
  const pinned = await pinnedKubernetes(minor);
  if (m?.[2] !== undefined && `v${minor}${m[2]}` !== pinned) {
    fail(
      `--kubernetes ${asked}: ${minor} is tested at ${pinned} (test/kube-fixture/kubernetes/${minor})`,
    );
  }
  return minor;
}

async function start(options: { install: boolean; kubernetes?: string }): Promise<void> {
  const found = await controlPlaneBinaries(process.env, await kubernetesMinor(options.kubernetes));
  if ('skip' in found) fail(found.skip);
  const foundNode = await nodeBinaries();
  if ('skip' in foundNode) fail(foundNode.skip);
  const plane = await startControlPlane({
    binaries: found.binaries,
    controllers: true,
    network: true,
  });
  const node = await startNode({
    plane,
    binaries: foundNode.binaries,
    kubelet: found.binaries.kubelet,
    kubeProxy: found.binaries.kubeProxy,
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
    'Pods get addresses of their own (10.244.0.0/24) and Services work; nothing is pulled.',
    '',
  ];
  if (options.install) {
    lines.push(
      ...(await install(plane, node).catch(async (err: unknown) => {
        await stopAll();
        throw err;
      })),
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

const USAGE =
  'npm run cluster [-- --install] [--kubernetes 1.N] | npm run cluster -- load-image FILE.tar';
let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: { install: { type: 'boolean', default: false }, kubernetes: { type: 'string' } },
  });
} catch (err) {
  fail(`${err instanceof Error ? err.message : String(err)}\nusage: ${USAGE}`);
}
const [command, ...rest] = parsed.positionals;
if (command === 'load-image') await loadImage(rest);
else if (command === undefined) await start(parsed.values);
else fail(`unknown command ${command}: ${USAGE}`);
