/**
 * `npm run cluster`: a real, empty Kubernetes control plane (etcd + kube-apiserver, built from Go
 * modules by test/kube-fixture/build.sh) on loopback, for trying the webhook and the controller by
 * hand. Prints the admin kubeconfig and the server's version, and runs until Ctrl-C; then it stops
 * both processes and removes their data.
 *
 *   npm run cluster                # the empty cluster
 *   npm run cluster -- --install   # and manifests/ applied, the webhooks pointed at
 *                                  # https://127.0.0.1:9443 (the certificate in certs/dev)
 */
import { readFile } from 'node:fs/promises';

import { ensureDevCertificates } from '../src/server/tls.js';
import { installManifests } from '../test/e2e/install.js';
import { controlPlaneBinaries } from '../test/kube-fixture/binaries.js';
import type { ControlPlane } from '../test/kube-fixture/control-plane.js';
import { startControlPlane } from '../test/kube-fixture/control-plane.js';

const WEBHOOK = 'https://127.0.0.1:9443';
const DEV_CERTS = 'certs/dev';

/** Applies manifests/ for a webhook on this machine; returns the ServiceAccount's kubeconfig. */
async function install(plane: ControlPlane): Promise<string> {
  const certs = await ensureDevCertificates(DEV_CERTS, new Date());
  await installManifests(plane, { url: WEBHOOK, caPem: await readFile(certs.caFile, 'utf8') });
  const token = await plane.serviceAccountToken('sidecarset-system', 'sidecarset');
  return plane.writeKubeconfig('sidecarset.kubeconfig', token);
}

const found = await controlPlaneBinaries();
if ('skip' in found) {
  process.stderr.write(`cluster: ${found.skip}\n`);
  process.exit(1);
}
const plane = await startControlPlane({ binaries: found.binaries });
const kubectl = found.binaries.kubectl;
const lines = [
  `Kubernetes ${await plane.version()} at ${plane.url}`,
  `admin kubeconfig: ${plane.adminKubeconfig}`,
  '',
  `  export KUBECONFIG=${plane.adminKubeconfig}`,
  `  ${kubectl} get namespaces`,
  '',
];
if (process.argv.includes('--install')) {
  const kubeconfig = await install(plane);
  lines.push(
    `manifests/ applied; the webhooks call ${WEBHOOK}. Start the webhook and the controller as`,
    "the manifests' ServiceAccount (the token is valid for an hour), then use the examples:",
    '',
    `  npx sidecarset serve --kubeconfig ${kubeconfig} --host 127.0.0.1 --dev-cert-dir ${DEV_CERTS}`,
    `  ${kubectl} apply -f examples/logtail-sidecarset.yaml`,
    `  ${kubectl} apply -f examples/nginx-pod.yaml`,
    `  ${kubectl} get pod test-pod -o jsonpath='{.spec.containers[*].name}'`,
    '',
  );
}
lines.push(
  'No scheduler or kubelet runs: pods stay Pending. Ctrl-C stops the cluster and deletes its data.',
  '',
);
process.stdout.write(lines.join('\n'));

let stopping = false;
const stop = (signal: string): void => {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`${signal}: stopping the cluster\n`);
  void plane.stop().then(() => process.exit(0));
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    stop(signal);
  });
}
