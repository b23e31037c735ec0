/** A tiny HTTPS client for tests: what curl would send, with the peer certificate exposed. */
import { request } from 'node:https';
import type { Agent } from 'node:https';
import { TLSSocket, connect } from 'node:tls';

export interface HttpsResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** SHA-256 fingerprint of the certificate the server presented. */
  fingerprint: string;
}

export interface HttpsRequest {
  method?: 'GET' | 'POST';
  body?: string | Buffer;
  contentType?: string;
  ca: string | string[];
  agent?: Agent;
}

export function httpsRequest(url: string, options: HttpsRequest): Promise<HttpsResult> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
        ca: options.ca,
        ...(options.agent ? { agent: options.agent } : { agent: false }),
        headers:
          options.body === undefined
            ? {}
            : { 'content-type': options.contentType ?? 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString(),
            fingerprint: peerFingerprint(res.socket),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export async function postJson(
  url: string,
  body: unknown,
  ca: string,
): Promise<{ status: number; json: unknown }> {
  const result = await httpsRequest(url, { body: JSON.stringify(body), ca });
  return { status: result.status, json: JSON.parse(result.text) as unknown };
}

/** SHA-256 fingerprint of the certificate a TLS peer presented ('' for a plain socket). */
export function peerFingerprint(socket: unknown): string {
  return socket instanceof TLSSocket ? socket.getPeerCertificate().fingerprint256 : '';
}

/** The certificate (DER) that the TLS server at `url` presents; it is not verified. */
export function servedCertificate(url: string): Promise<Buffer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: hostname, port: Number(port), rejectUnauthorized: false },
      () => {
        resolve(socket.getPeerCertificate().raw);
        socket.end();
      },
    );
    socket.on('error', reject);
  });
}
