/** What an API error says, from the Status in its body: client-node's own message is a dump. */
import { ApiException } from '@kubernetes/client-node';

import { isPlainObject } from '../core/encoding/json.js';

/** The message of the Status an API error carries, or the error's own. */
export function statusMessage(err: ApiException<unknown>): string {
  const status = statusOf(err);
  return status !== undefined && 'message' in status ? String(status['message']) : err.message;
}

/** The Status object an API error's body holds, if it holds one. */
export function statusOf(err: ApiException<unknown>): Record<string, unknown> | undefined {
  try {
    const status: unknown = JSON.parse(String(err.body));
    return isPlainObject(status) ? status : undefined;
  } catch {
    return undefined;
  }
}

/** An error for people: `<Status message> (HTTP <code>)` for an API error, else its message. */
export function readableApiError(err: unknown): Error {
  if (err instanceof ApiException) {
    return new Error(`${statusMessage(err)} (HTTP ${String(err.code)})`, { cause: err });
  }
  return err instanceof Error ? err : new Error(String(err));
}
