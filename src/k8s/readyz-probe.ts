/**
 * GET <origin>/readyz of a webhook served outside the cluster (a webhook URL), trusting only the
 * webhook's caBundle as the API server does (the system's CAs when it is empty), for `sidecarset
 * check`. Never throws: a refused connection, a certificate the caBundle does not verify or no
 * answer within the timeout comes back as `{ error }`.
 */
import { request } from 'node:https';

import type { ReadyzAnswer, UrlServer } from '../core/diagnosis/installation-check.js';

export function probeReadyz(server: UrlServer, timeoutMs: number): Promise<ReadyzAnswer> {
  return new Promise((resolve) => {
    const url = new URL('/readyz', server.origin);
    if (url.protocol !== 'https:') {
      resolve({ error: `${url.protocol} is not https:, which the API server requires` });
      return;
    }
    const ca = server.caBundle === undefined ? {} : { ca: fromBase64(server.caBundle) };
    const req = request(url, { method: 'GET', agent: false, timeout: timeoutMs, ...ca }, (res) => {
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

function fromBase64(caBundle: string): string {
  return Buffer.from(caBundle, 'base64').toString('utf8');
}
