/**
 * One keep-alive agent for every API request a KubeConfig makes. client-node 1.x builds a new
 * http(s).Agent for each request (KubeConfig.applySecurityAuthentication), so each request opens
 * a new connection and, against a real API server, pays a TLS handshake; a controller writing to
 * many pods then spends most of its CPU (and the API server's) on handshakes. Watches go through a
 * different path and keep their own long-lived connections.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';

import type { KubeConfig } from '@kubernetes/client-node';

/** The agent options that decide which server and credentials a connection is for. */
const IDENTITY = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'];

/** How long a replaced agent keeps its connections for requests still in flight. */
const RETIRE_MS = 60_000;

/**
 * Makes `kubeConfig` reuse one keep-alive agent while the credentials stay the same; when they
 * change (a rotated client certificate or CA), the next request gets a new agent and the old one
 * is closed a minute later. Agents for proxies are left as client-node makes them.
 */
export function shareKeepAliveAgent(kubeConfig: KubeConfig): KubeConfig {
  const apply = kubeConfig.applySecurityAuthentication.bind(kubeConfig);
  let shared: HttpAgent | undefined;
  kubeConfig.applySecurityAuthentication = async (context) => {
    await apply(context);
    const fresh = context.getAgent();
    if (fresh === undefined || !isPlainAgent(fresh)) return;
    if (
      shared === undefined ||
      !sameIdentity(shared, fresh) ||
      isHttps(shared) !== isHttps(fresh)
    ) {
      const retired = shared;
      if (retired !== undefined)
        setTimeout(() => {
          retired.destroy();
        }, RETIRE_MS).unref();
      const options = { ...agentOptions(fresh), keepAlive: true };
      shared = isHttps(fresh) ? new HttpsAgent(options) : new HttpAgent(options);
    }
    context.setAgent(shared);
  };
  return kubeConfig;
}

/** A plain http.Agent or https.Agent, not a proxy agent built on them. */
function isPlainAgent(agent: HttpAgent): boolean {
  const prototype: unknown = Object.getPrototypeOf(agent);
  return prototype === HttpAgent.prototype || prototype === HttpsAgent.prototype;
}

function isHttps(agent: HttpAgent): boolean {
  return agent instanceof HttpsAgent;
}

/** Node keeps the options an agent was made with; @types/node does not declare the field. */
function agentOptions(agent: HttpAgent): Record<string, unknown> {
  return (agent as HttpAgent & { options?: Record<string, unknown> }).options ?? {};
}

function sameIdentity(a: HttpAgent, b: HttpAgent): boolean {
  const x = agentOptions(a);
  const y = agentOptions(b);
  return IDENTITY.every((field) => sameValue(x[field], y[field]));
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => sameValue(item, b[i]));
  }
  return a === b;
}
