/**
 * A client-node informer that does not stay down. client-node's ListWatch relists by itself on
 * 410 Gone, but on any other error it calls its error handlers and stops; this restarts it with
 * exponential backoff, and says when it has completed a list.
 */
import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { ListWatch, Watch } from '@kubernetes/client-node';
import type { Logger } from 'pino';

export interface Backoff {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 500, maxMs: 30_000 };

export interface ResilientInformerOptions<T extends KubernetesObject> {
  kubeConfig: KubeConfig;
  /** The watch path, e.g. /api/v1/namespaces. */
  path: string;
  list: () => Promise<KubernetesListObject<T>>;
  logger: Logger;
  /** Called after every add, update or delete. */
  onChange: () => void;
  /** Called when a restart after an error has listed again. */
  onRelist?: () => void;
  backoff?: Backoff;
}

export interface ResilientInformer<T extends KubernetesObject> {
  /** Resolves after the first successful list; keeps retrying until then. */
  start(): Promise<void>;
  stop(): Promise<void>;
  synced(): boolean;
  list(): readonly T[];
}

export function resilientInformer<T extends KubernetesObject>(
  options: ResilientInformerOptions<T>,
): ResilientInformer<T> {
  const log = options.logger.child({ informer: options.path });
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const informer = new ListWatch<T>(
    options.path,
    new Watch(options.kubeConfig),
    options.list,
    false,
  );
  let hasListed = false;
  let stopped = false;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;
  let resolveFirstList: (() => void) | undefined;
  const firstList = new Promise<void>((resolve) => {
    resolveFirstList = resolve;
  });

  informer.on('change', options.onChange);
  informer.on('error', (err: unknown) => {
    if (stopped) return;
    failures += 1;
    const delay = Math.min(backoff.maxMs, backoff.initialMs * 2 ** (failures - 1));
    log.warn({ err: describe(err), retryInMs: delay }, 'informer failed; restarting');
    clearTimeout(timer);
    timer = setTimeout(() => void run(), delay);
  });

  async function run(): Promise<void> {
    if (stopped) return;
    await informer.start();
    // start() resolves after the list and the start of the watch, or after reporting an error.
    if (informer.latestResourceVersion() === '') return;
    if (failures > 0) options.onRelist?.();
    failures = 0;
    if (!hasListed) {
      hasListed = true;
      log.info({ objects: informer.list().length }, 'informer synced');
      options.onChange();
      resolveFirstList?.();
    }
  }

  return {
    async start() {
      stopped = false;
      await run();
      await firstList;
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      resolveFirstList?.();
      await informer.stop();
    },
    synced: () => hasListed,
    list: () => informer.list(),
  };
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'object' && err !== null) return JSON.stringify(err);
  return String(err);
}
