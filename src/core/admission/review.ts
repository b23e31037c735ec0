/**
 * AdmissionReview (admission.k8s.io v1 and v1beta1) as the API server sends and expects it:
 * parsing an untrusted body into a request, and building the response envelope.
 */
import { isPlainObject } from '../encoding/json.js';

const ADMISSION_VERSIONS = ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'] as const;
export type AdmissionApiVersion = (typeof ADMISSION_VERSIONS)[number];

interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: string;
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
}

interface AdmissionStatus {
  code: number;
  message: string;
  reason?: string;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

export interface AdmissionReview {
  apiVersion: AdmissionApiVersion;
  kind: 'AdmissionReview';
  response: AdmissionResponse;
}

export type ParsedReview =
  | { ok: true; apiVersion: AdmissionApiVersion; request: AdmissionRequest }
  | { ok: false; message: string };

/** Checks the envelope and the request fields the webhooks read. */
export function parseAdmissionReview(body: unknown): ParsedReview {
  if (!isPlainObject(body)) return fail('the body is not a JSON object');
  const { apiVersion, kind, request } = body;
  if (kind !== 'AdmissionReview') return fail(`kind must be AdmissionReview, not ${show(kind)}`);
  if (!ADMISSION_VERSIONS.includes(apiVersion as AdmissionApiVersion)) {
    return fail(
      `apiVersion ${show(apiVersion)} is not supported (use ${ADMISSION_VERSIONS.join(' or ')})`,
    );
  }
  if (!isPlainObject(request)) return fail('the AdmissionReview has no request');
  const uid = request['uid'];
  if (typeof uid !== 'string' || uid === '') return fail('request.uid is missing');
  const operation = request['operation'];
  if (typeof operation !== 'string') return fail('request.operation is missing');
  const gvk = readTriple(request['kind'], 'kind');
  const gvr = readTriple(request['resource'], 'resource');
  if (gvk === undefined) return fail('request.kind must have group, version and kind');
  if (gvr === undefined) return fail('request.resource must have group, version and resource');
  const parsed: AdmissionRequest = {
    uid,
    operation,
    kind: { group: gvk[0], version: gvk[1], kind: gvk[2] },
    resource: { group: gvr[0], version: gvr[1], resource: gvr[2] },
    object: request['object'] ?? undefined,
    oldObject: request['oldObject'] ?? undefined,
    dryRun: request['dryRun'] === true,
  };
  for (const key of ['subResource', 'name', 'namespace'] as const) {
    const value = request[key];
    if (typeof value === 'string' && value !== '') parsed[key] = value;
  }
  return { ok: true, apiVersion: apiVersion as AdmissionApiVersion, request: parsed };
}

function readTriple(
  value: unknown,
  last: 'kind' | 'resource',
): [string, string, string] | undefined {
  if (!isPlainObject(value)) return undefined;
  const group = value['group'] ?? '';
  const version = value['version'];
  const name = value[last];
  if (typeof group !== 'string' || typeof version !== 'string' || typeof name !== 'string') {
    return undefined;
  }
  return [group, version, name];
}

const fail = (message: string): ParsedReview => ({ ok: false, message });

function show(value: unknown): string {
  return value === undefined ? 'missing' : JSON.stringify(value);
}

/** The response envelope, in the version the request came in. */
export function reviewResponse(
  apiVersion: AdmissionApiVersion,
  response: AdmissionResponse,
): AdmissionReview {
  return { apiVersion, kind: 'AdmissionReview', response };
}

export function allow(uid: string, extra: Partial<AdmissionResponse> = {}): AdmissionResponse {
  return { uid, allowed: true, ...extra };
}

export function deny(
  uid: string,
  code: number,
  message: string,
  reason?: string,
): AdmissionResponse {
  return { uid, allowed: false, status: { code, message, ...(reason ? { reason } : {}) } };
}

/** base64 of the UTF-8 JSON, without node:buffer so that the core stays portable. */
export function encodePatch(patch: unknown): string {
  return base64Utf8(JSON.stringify(patch));
}

/** Any character outside ASCII, whose UTF-8 encoding is not the character itself. */
const NON_ASCII = /[\u0080-\uffff]/;
/** Bytes per String.fromCharCode call: well below the engines' limit on arguments. */
const CHUNK = 0x2000;

/**
 * base64 of a string's UTF-8 bytes. btoa encodes a "binary string" (one byte per character), so
 * an ASCII string, which is its own UTF-8, goes to btoa as it is; any other is first encoded and
 * turned into a binary string chunk by chunk (String.fromCharCode.apply takes a typed array, and
 * is much faster than spreading it into arguments).
 */
export function base64Utf8(text: string): string {
  if (!NON_ASCII.test(text)) return btoa(text);
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (let i = 0; i < bytes.length; i += CHUNK) {
    // apply takes any array-like at run time; its type only admits arrays.
    const chunk = bytes.subarray(i, i + CHUNK) as unknown as number[];
    binary += String.fromCharCode.apply(null, chunk);
  }
  return btoa(binary);
}
