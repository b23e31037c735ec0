/** Per-request options for client-node 1.x calls that a caller may need to abort. */
import { Observable } from '@kubernetes/client-node';
import type {
  ConfigurationOptions,
  RequestContext,
  ResponseContext,
} from '@kubernetes/client-node';

/** Request options that make client-node's fetch abortable with `signal`. */
export function withSignal(signal: AbortSignal): ConfigurationOptions {
  return {
    middleware: [
      {
        pre: (context: RequestContext) => {
          context.setSignal(signal);
          return new Observable(Promise.resolve(context));
        },
        post: (context: ResponseContext) => new Observable(Promise.resolve(context)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}
