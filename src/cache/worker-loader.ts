/**
 * Runs loadFiles (src/cache/load-files.ts) in a worker thread and hands back its result; the
 * event loop only receives the finished SidecarSets. The worker is started for a load and stopped
 * after IDLE_MS without one: reloads are rare, and an idle worker keeps its own heap (ajv,
 * kubernetes-models, the parsed files' garbage: 30 to 60 MiB of resident set) for nothing, while
 * starting one costs about half a second. If it dies, its loads fail with the reason.
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

/** Long enough to serve a burst of reloads (edits seconds apart) with the same worker. */
const IDLE_MS = 2000;

/** A started worker and the loads sent to it. */
interface Running {
  thread: Worker;
  pending: Map<number, Pending>;
}

export function createWorkerLoader(paths: FilesPaths, idleMs = IDLE_MS): FilesLoader {
  let current: Running | undefined;
  let idle: NodeJS.Timeout | undefined;
  let nextId = 0;

  const start = (): Running => {
    const running: Running = { thread: newWorker(paths), pending: new Map() };
    const { thread, pending } = running;
    const failAll = (err: Error): void => {
      for (const p of pending.values()) p.reject(err);
      pending.clear();
    };
    thread.unref();
    thread.on('message', (reply: LoadReply) => {
      const p = pending.get(reply.id);
      pending.delete(reply.id);
      if ('error' in reply) p?.reject(loadError(reply));
      else p?.resolve(reply.files);
      if (pending.size === 0 && current === running) {
        idle = setTimeout(() => void stop(), idleMs).unref();
      }
    });
    thread.on('error', (err) => {
      failAll(new Error(`the files reload worker failed: ${err.message}`));
    });
    thread.on('exit', (code) => {
      if (current === running) current = undefined;
      failAll(new Error(`the files reload worker exited with code ${code}`));
    });
    return running;
  };

  async function stop(): Promise<void> {
    clearTimeout(idle);
    const stopping = current;
    current = undefined;
    await stopping?.thread.terminate();
  }

  return {
    load() {
      clearTimeout(idle);
      const running = (current ??= start());
      const id = nextId++;
      return new Promise((resolve, reject) => {
        running.pending.set(id, { resolve, reject });
        running.thread.postMessage(id);
      });
    },
    close: stop,
  };
}
