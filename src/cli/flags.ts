/**
 * The command line's flag values that outlive parsing (the controller's flags, shared by `serve`
 * and `controller`) and the parsers of flag values. Kept apart from the commands so that the CLI
 * loads a command's code (fastify, the Kubernetes client) only when that command runs.
 */
import { isIP } from 'node:net';

import { InvalidArgumentError } from 'commander';

import { INSTALLATION } from '../core/api/installation-names.js';
import { parseWebhookConfigurationRef } from '../k8s/webhook-configuration-ref.js';
import type { PatchMetadataAllowList } from '../core/validation/patch-metadata-allowlist.js';
import { parseAllowList } from '../core/validation/patch-metadata-allowlist.js';
import type { WebhookConfigurationRef } from '../k8s/webhook-configuration-ref.js';
import { BODY_LIMIT } from '../server/http-server.js';

/** Flags of the upgrade controller, shared by `serve` and `controller`. */
export interface ControllerFlags {
  leaderElect: boolean;
  leaderElectionNamespace: string;
  leaseName: string;
  workers: number;
  qps: number;
  burst: number;
  dryRun: boolean;
  /** Per-pod events (SidecarUpgradeStarted, SidecarUpgraded, ResetContainerSucceed). */
  podEvents: boolean;
  /** Keep the pod webhook's matchConditions and selectors in step with the SidecarSets. */
  scopePodWebhook: boolean;
  /** The MutatingWebhookConfiguration holding the pod webhook. */
  podWebhookConfiguration: string;
}

export const DEFAULT_CONTROLLER_FLAGS: ControllerFlags = {
  leaderElect: false,
  leaderElectionNamespace: INSTALLATION.namespace,
  leaseName: INSTALLATION.lease,
  workers: 3,
  qps: 20,
  burst: 30,
  dryRun: false,
  // Per-pod events make a rollout's Events grow with its pods (docs/adr/0014-health-gated-rollouts.md).
  podEvents: false,
  scopePodWebhook: true,
  podWebhookConfiguration: INSTALLATION.mutatingWebhookConfiguration,
};

/**
 * --max-inflight-body-bytes: bytes, or a Kubernetes-style binary size (`32Mi`). At least one
 * AdmissionReview of the largest size must fit, or large pods would never be admitted.
 */
export function parseByteSize(value: string): number {
  const match = /^(\d+)(Ki|Mi|Gi)?$/.exec(value.trim());
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 }[match?.[2] ?? ''] ?? 1;
  const bytes = Number(match?.[1] ?? NaN) * unit;
  if (!Number.isSafeInteger(bytes) || bytes < BODY_LIMIT) {
    throw new InvalidArgumentError(
      `expected a size of at least ${BODY_LIMIT} bytes (7Mi, the largest AdmissionReview), such as 33554432 or 32Mi`,
    );
  }
  return bytes;
}

/** --webhook-configurations: `mutating/NAME,validating/NAME,crd/NAME`, comma-separated. */
export function parseWebhookConfigurations(value: string): WebhookConfigurationRef[] {
  try {
    return parseList(value).map(parseWebhookConfigurationRef);
  } catch (err) {
    throw new InvalidArgumentError(err instanceof Error ? err.message : String(err));
  }
}

/** --cert-ip-addresses: IPv4 or IPv6 addresses, comma-separated. */
export function parseIpAddresses(value: string): string[] {
  const ips = parseList(value);
  const bad = ips.filter((ip) => isIP(ip) === 0);
  if (bad.length > 0) throw new InvalidArgumentError(`not an IP address: ${bad.join(', ')}`);
  return ips;
}

/** --patch-pod-metadata-allowlist: OpenKruise's SidecarSet_PatchPodMetadata_WhiteList JSON. */
export function parseAllowListFlag(value: string): PatchMetadataAllowList {
  try {
    return parseAllowList(value);
  } catch (err) {
    throw new InvalidArgumentError(err instanceof Error ? err.message : String(err));
  }
}

/** A comma-separated list, blanks dropped. */
export function parseList(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

export function parseBool(value: string): boolean {
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new InvalidArgumentError('expected true or false');
}

export function parsePositive(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

export function parseNonNegative(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected an integer ≥ 0');
  return n;
}

export function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidArgumentError('a port is an integer from 0 to 65535');
  }
  return port;
}
