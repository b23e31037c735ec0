/**
 * One budget for the request bodies being received, all connections together: a request that
 * would take it over the limit is answered 503 at once instead of being buffered, so that many
 * large or stalled bodies cannot grow the process past its memory limit (docs/deploy.md, "Limits
 * and network policy").
 */
import { Transform } from 'node:stream';

import type { FastifyInstance } from 'fastify';

/** Answered 503 with Retry-After by the app's error handler. */
class BusyError extends Error {
  override name = 'BusyError';
  readonly statusCode = 503;
}

export interface BodyBudgetEvents {
  /** Bytes taken (positive) or given back (negative). */
  onChange: (delta: number) => void;
  /** A request refused for lack of budget. */
  onShed: () => void;
}

export function registerBodyBudget(
  app: FastifyInstance,
  limit: number,
  events: BodyBudgetEvents,
): void {
  let inFlight = 0;
  const busy = (): BusyError => {
    events.onShed();
    return new BusyError(
      `the webhook is receiving ${limit} bytes of request bodies already (--max-inflight-body-bytes); retry`,
    );
  };

  // Callback style: an async hook costs every request a promise and a later microtask before its
  // body is read, about 10 µs in process, more than the rest of the budget's work.
  app.addHook('preParsing', (request, reply, payload, done) => {
    let taken = 0;
    const take = (bytes: number): boolean => {
      if (inFlight + bytes > limit) return false;
      inFlight += bytes;
      taken += bytes;
      events.onChange(bytes);
      return true;
    };
    // Held until the answer is sent or the connection is gone: the parsed body lives that long.
    reply.raw.once('close', () => {
      inFlight -= taken;
      events.onChange(-taken);
      taken = 0;
    });
    const declared = Number(request.headers['content-length']);
    if (Number.isSafeInteger(declared) && declared >= 0) {
      // The HTTP parser never delivers more than Content-Length, so this is the request's share.
      if (take(declared)) done(null, payload);
      else done(busy());
      return;
    }
    // Chunked: counted as it arrives.
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        if (take(chunk.length)) callback(null, chunk);
        else {
          payload.unpipe(counted);
          callback(busy());
        }
      },
    });
    done(null, payload.pipe(counted));
  });
}
