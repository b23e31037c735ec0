/** Helpers shared by the fake API server's own tests. */
import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';
import { isJsonObject } from './json.js';
import type { JsonObject } from './json.js';
import { startFakeApiServer } from './server.js';
import type { FakeApiServer, FakeApiServerOptions } from './server.js';
import { Signal, waitUntil } from './wait.js';

/** Runs `body` against a fresh server and always closes it. */
export async function withServer(
  body: (server: FakeApiServer) => Promise<void>,
  options: FakeApiServerOptions = {},
): Promise<void> {
  const server = await startFakeApiServer(options);
  try {
    await body(server);
  } finally {
    await server.close();
  }
}

/** Awaits a client-node call expected to fail; returns the HTTP code and the parsed Status. */
export async function apiFailure(
  call: Promise<unknown>,
): Promise<{ code: number; status: JsonObject }> {
  try {
    await call;
  } catch (err: unknown) {
    assert.ok(err instanceof ApiException, `expected an ApiException, got ${String(err)}`);
    const body: unknown = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
    assert.ok(isJsonObject(body), 'the error body is a JSON object');
    return { code: err.code, status: body };
  }
  assert.fail('expected the call to fail');
}

/** Collects values pushed by callbacks and lets a test await a condition on them. */
export class Recorder<T> {
  readonly items: T[] = [];
  private readonly signal = new Signal<undefined>();

  push(item: T): void {
    this.items.push(item);
    this.signal.emit(undefined);
  }

  until(
    predicate: (items: readonly T[]) => boolean,
    what: string,
    timeoutMs = 5000,
  ): Promise<true> {
    return waitUntil(
      (wake) => this.signal.subscribe(wake),
      () => (predicate(this.items) ? true : undefined),
      {
        what,
        timeoutMs,
      },
    );
  }
}
