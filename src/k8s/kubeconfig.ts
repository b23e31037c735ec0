/**
 * The kubeconfig, chosen as kubectl chooses it: --kubeconfig, else $KUBECONFIG, else
 * ~/.kube/config, else the pod's service account. When none of them exists, client-node's
 * loadFromDefault falls back to http://localhost:8080, a server nobody runs: the commands then
 * failed with a misleading "cannot reach the cluster at http://localhost:8080", and `serve`
 * retried it forever. Here that case is an error naming what was looked for.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { KubeConfig, findHomeDir } from '@kubernetes/client-node';

import { ClusterError } from './cluster-error.js';

/** Where client-node finds the pod's service account (loadFromDefault's in-cluster test). */
const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** The kubeconfig of `file`, or the default one; a ClusterError when none can be loaded. */
export function loadKubeConfig(file: string | undefined): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (file === undefined && (process.env['KUBECONFIG'] ?? '') === '') {
    const home = findHomeDir();
    const userConfig = home === null ? undefined : join(home, '.kube', 'config');
    if (
      (userConfig === undefined || !existsSync(userConfig)) &&
      !existsSync(SERVICE_ACCOUNT_TOKEN)
    ) {
      throw new ClusterError(
        'no kubeconfig found: no --kubeconfig, KUBECONFIG is not set, ' +
          `${userConfig ?? '~/.kube/config (no home directory)'} does not exist, ` +
          `and not in a cluster (no ${SERVICE_ACCOUNT_TOKEN})`,
      );
    }
  }
  try {
    if (file !== undefined) kubeConfig.loadFromFile(file);
    else kubeConfig.loadFromDefault();
  } catch (err) {
    throw new ClusterError(
      `cannot load the kubeconfig: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  return kubeConfig;
}
