/**
 * `npm run cluster`: a real, empty Kubernetes control plane (etcd + kube-apiserver, built from Go
 * modules by test/kube-fixture/build.sh) on loopback, for trying the webhook and the controller by
 * hand. Prints the admin kubeconfig and the server's version, and runs until Ctrl-C; then it stops
 * both processes and removes their data.
 */
import { controlPlaneBinaries } from '../test/kube-fixture/binaries.js';
import { startControlPlane } from '../test/kube-fixture/control-plane.js';

const found = await controlPlaneBinaries();
if ('skip' in found) {
  process.stderr.write(`cluster: ${found.skip}\n`);
  process.exit(1);
}
const plane = await startControlPlane({ binaries: found.binaries });
const { binaries } = plane;
process.stdout.write(
  [
    `Kubernetes ${await plane.version()} at ${plane.url}`,
    `admin kubeconfig: ${plane.adminKubeconfig}`,
    '',
    `  export KUBECONFIG=${plane.adminKubeconfig}`,
    `  ${binaries.kubectl} get namespaces`,
    '',
    'No scheduler or kubelet runs: pods stay Pending. Ctrl-C stops the cluster and deletes its data.',
    '',
  ].join('\n'),
);

let stopping = false;
const stop = (signal: string): void => {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`${signal}: stopping the cluster\n`);
  void plane.stop().then(() => process.exit(0));
};
process.on('SIGINT', () => {
  stop('SIGINT');
});
process.on('SIGTERM', () => {
  stop('SIGTERM');
});
process.on('SIGHUP', () => {
  stop('SIGHUP');
});
