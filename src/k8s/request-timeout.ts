/**
 * A deadline on every API request made through client-node's generated clients (lists, reads,
 * writes; watches take another path and stay open by design). client-node sets none, so a request
 * the API server accepts and never answers (a hung connection, an overloaded server) would hold a
 * round, and with it the Lease at shutdown, forever. A request given its own signal (the leader
 * election's, src/k8s/abortable.ts) keeps that one: middleware runs after this.
 */
import type { KubeConfig } from '@kubernetes/client-node';

/** Long enough for a fleet-wide pod list on a busy API server. */
const API_REQUEST_TIMEOUT_MS = 60_000;

export function withRequestTimeout(
  kubeConfig: KubeConfig,
  timeoutMs = API_REQUEST_TIMEOUT_MS,
): KubeConfig {
  const apply = kubeConfig.applySecurityAuthentication.bind(kubeConfig);
  kubeConfig.applySecurityAuthentication = async (context) => {
    await apply(context);
    context.setSignal(AbortSignal.timeout(timeoutMs));
  };
  return kubeConfig;
}
