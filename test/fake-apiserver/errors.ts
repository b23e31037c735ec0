import type { JsonObject } from './json.js';
import type { ResourceRef } from './types.js';

/** A Kubernetes `Status` failure; the server writes it as the response body with its code. */
export class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: JsonObject | undefined;

  constructor(code: number, reason: string, message: string, details?: JsonObject) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  toStatus(): JsonObject {
    const status: JsonObject = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details !== undefined) status['details'] = this.details;
    return status;
  }
}

/** `pods` or `sidecarsets.apps.kruise.io`, as the API server names a resource in messages. */
export function qualifiedResource(ref: ResourceRef): string {
  return ref.group === '' ? ref.resource : `${ref.resource}.${ref.group}`;
}

function objectDetails(ref: ResourceRef, name: string): JsonObject {
  const details: JsonObject = { name, kind: ref.resource };
  if (ref.group !== '') details['group'] = ref.group;
  return details;
}

export function notFound(ref: ResourceRef, name: string): ApiError {
  return new ApiError(
    404,
    'NotFound',
    `${qualifiedResource(ref)} "${name}" not found`,
    objectDetails(ref, name),
  );
}

export function alreadyExists(ref: ResourceRef, name: string): ApiError {
  return new ApiError(
    409,
    'AlreadyExists',
    `${qualifiedResource(ref)} "${name}" already exists`,
    objectDetails(ref, name),
  );
}

export function conflict(ref: ResourceRef, name: string, why?: string): ApiError {
  const reason =
    why ??
    'the object has been modified; please apply your changes to the latest version and try again';
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(ref)} "${name}": ${reason}`,
    objectDetails(ref, name),
  );
}

/**
 * Validation names the kind, not the resource: `Pod "p" is invalid`, `SidecarSet.apps.kruise.io
 * "s" is invalid` (apimachinery's NewInvalid takes a GroupKind).
 */
export function invalid(
  ref: ResourceRef & { readonly kind: string },
  name: string,
  message: string,
): ApiError {
  const qualifiedKind = ref.group === '' ? ref.kind : `${ref.kind}.${ref.group}`;
  const details: JsonObject = { name, kind: ref.kind };
  if (ref.group !== '') details['group'] = ref.group;
  return new ApiError(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${message}`, details);
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function expired(requested: number, oldest: number): ApiError {
  return new ApiError(410, 'Expired', `too old resource version: ${requested} (${oldest})`);
}

export function unknownPath(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource');
}

export function methodNotAllowed(method: string): ApiError {
  return new ApiError(405, 'MethodNotAllowed', `the server does not allow this method (${method})`);
}

export function unsupportedMediaType(contentType: string): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json (got ${contentType})`,
  );
}

/** What a test's injected fault answers with; reason follows the code as the API server would. */
export function injectedFault(code: number, message?: string): ApiError {
  const reasons: Record<number, string> = {
    400: 'BadRequest',
    403: 'Forbidden',
    404: 'NotFound',
    409: 'Conflict',
    410: 'Expired',
    422: 'Invalid',
    429: 'TooManyRequests',
    500: 'InternalError',
    503: 'ServiceUnavailable',
    504: 'Timeout',
  };
  return new ApiError(code, reasons[code] ?? 'Unknown', message ?? `injected fault (${code})`);
}
