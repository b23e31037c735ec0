/**
 * Runs loadFiles (src/cache/load-files.ts) in a worker thread and hands back its result; the
 * event loop only receives the finished SidecarSets. The worker is started on the first load and
 * again after it dies (its loads then fail with the reason).
 */
import { Worker } from 'node:worker_threads';

import type { ErrorCode } from '../core/errors.js';
import { SidecarSetError } from '../core/errors.js';
import type { FilesPaths, LoadedFiles } from './load-files.js';

/**
 * A load's result. A failure crosses the thread as its message, and as its code when it is a
 * SidecarSetError (a problem in the files, not a bug), so that it is rebuilt as one here.
 */
export type LoadReply =
  | { id: number; files: LoadedFiles }
  | { id: number; error: string; code?: ErrorCode; statusCode?: number };

export function failedLoad(id: number, err: unknown): LoadReply {
  if (err instanceof SidecarSetError) {
    return { id, error: err.message, code: err.code, statusCode: err.statusCode };
  }
  return { id, error: err instanceof Error ? err.message : String(err) };
}

function loadError(reply: { error: string; code?: ErrorCode; statusCode?: number }): Error {
  return reply.code === undefined
    ? new Error(reply.error)
    : new SidecarSetError(reply.code, reply.error, reply.statusCode);
}

export interface FilesLoader {
  load(): Promise<LoadedFiles>;
  close(): Promise<void>;
}

const FROM_SOURCE = import.meta.url.endsWith('.ts');

/** The worker's module beside this one: `.ts` when run from source (tsx), `.js` once built. */
const WORKER_URL = new URL(
  FROM_SOURCE ? './reload-worker.ts' : './reload-worker.js',
  import.meta.url,
);

/**
 * From source (tests, benchmarks), Node 20 does not apply the parent's `--import tsx` to a worker,
 * so the worker registers tsx itself before importing its `.ts` module; the parent's flags are
 * not passed on, so that tsx is not registered twice where Node does apply them.
 */
function newWorker(paths: FilesPaths): Worker {
  if (!FROM_SOURCE) return new Worker(WORKER_URL, { workerData: paths });
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData: paths, execArgv: [] });
}

interface Pending {
  resolve: (files: LoadedFiles) => void;
  reject: (err: Error) => void;
}

export function createWorkerLoader(paths: FilesPaths): FilesLoader {
  let worker: Worker | undefined;
  let nextId = 0;
  const pending = new Map<number, Pending>();

  const failAll = (err: Error): void => {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  const start = (): Worker => {
    const started = newWorker(paths);
    started.unref();
    started.on('message', (reply: LoadReply) => {
      const p = pending.get(reply.id);
      pending.delete(reply.id);
      if ('error' in reply) p?.reject(loadError(reply));
      else p?.resolve(reply.files);
    });
    started.on('error', (err) => {
      failAll(new Error(`the files reload worker failed: ${err.message}`));
    });
    started.on('exit', (code) => {
      if (worker === started) worker = undefined;
      failAll(new Error(`the files reload worker exited with code ${code}`));
    });
    return started;
  };

  return {
    load() {
      worker ??= start();
      const id = nextId++;
      const sent = worker;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        sent.postMessage(id);
      });
    },
    async close() {
      const stopping = worker;
      worker = undefined;
      await stopping?.terminate();
    },
  };
}
