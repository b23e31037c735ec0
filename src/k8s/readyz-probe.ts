/**
 * GET /readyz of a server, as the reflector asks the API server and `sidecarset check` asks a
 * webhook served outside the cluster (a webhook URL). Never throws: a refused connection, a
 * certificate the trusted CAs do not verify, an abort or no answer within the timeout comes back
 * as `{ error }`.
 */
import { request as httpRequest } from 'node:http';
import type { RequestOptions } from 'node:https';
import { request as httpsRequest } from 'node:https';

import type { ReadyzAnswer, UrlServer } from '../core/diagnosis/installation-check.js';

/** GET `url` once, with `options` (TLS settings), without keeping the connection. */
export function getReadyz(
  url: URL,
  options: RequestOptions,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<ReadyzAnswer> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const settings = { ...options, method: 'GET', agent: false, timeout: timeoutMs };
    const req = send(url, signal === undefined ? settings : { ...settings, signal }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0 });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => {
      resolve({ error: err.message });
    });
    req.end();
  });
}

/**
 * The webhook server's /readyz at its URL's origin, trusting only the webhook's caBundle as the
 * API server does (the system's CAs when it is empty).
 */
export function probeWebhookReadyz(server: UrlServer, timeoutMs: number): Promise<ReadyzAnswer> {
  const url = new URL('/readyz', server.origin);
  if (url.protocol !== 'https:') {
    return Promise.resolve({
      error: `${url.protocol} is not https:, which the API server requires`,
    });
  }
  const ca = server.caBundle === undefined ? {} : { ca: fromBase64(server.caBundle) };
  return getReadyz(url, ca, timeoutMs);
}

function fromBase64(caBundle: string): string {
  return Buffer.from(caBundle, 'base64').toString('utf8');
}
