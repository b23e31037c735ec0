/**
 * Files mode: SidecarSets (and optionally Namespaces) from files, reloaded when they change. A
 * reload that fails (unreadable file, invalid YAML, invalid SidecarSet) is reported and the last
 * good snapshot stays in place.
 */
import type { FSWatcher } from 'chokidar';
import { watch } from 'chokidar';
import type { Logger } from 'pino';

import { loadNamespaces, loadSidecarSets, describeProblems } from '../io/loaders.js';
import { SidecarSetError } from '../core/errors.js';
import { ANY_NAMESPACE } from '../core/match.js';
import type { Snapshot, SnapshotSource } from './snapshot.js';
import { makeSnapshot } from './snapshot.js';

export interface FilesSourceOptions {
  sidecarSets: string;
  namespaces?: string;
  logger: Logger;
  /** Called after every reload attempt. */
  onReload?: (ok: boolean) => void;
  /** Quiet period before a burst of file events triggers one reload. */
  debounceMs?: number;
}

export function createFilesSource(options: FilesSourceOptions): SnapshotSource {
  const log = options.logger.child({ source: 'files' });
  let current: Snapshot | undefined;
  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  let reloading: Promise<void> = Promise.resolve();

  async function load(): Promise<Snapshot> {
    const prepared = await loadSidecarSets(options.sidecarSets);
    if (prepared.problems.length > 0) {
      throw new SidecarSetError(
        'SI_ERR_INVALID_SIDECARSET',
        `invalid SidecarSets:\n${describeProblems(prepared).join('\n')}`,
        422,
      );
    }
    if (options.namespaces === undefined) {
      return makeSnapshot(prepared.sidecarSets, ANY_NAMESPACE, undefined);
    }
    const namespaces = await loadNamespaces(options.namespaces);
    return makeSnapshot(prepared.sidecarSets, namespaces, namespaces.size);
  }

  async function reload(): Promise<void> {
    try {
      current = await load();
      log.info({ sidecarSets: current.sidecarSets.all.length }, 'reloaded SidecarSets from files');
      options.onReload?.(true);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log.error({ err: message }, 'reload failed; keeping the last good SidecarSets');
      options.onReload?.(false);
    }
  }

  function schedule(): void {
    clearTimeout(timer);
    timer = setTimeout(() => {
      reloading = reloading.then(reload);
    }, options.debounceMs ?? 100);
  }

  return {
    read() {
      if (current === undefined) throw new Error('the files source has not been started');
      return current;
    },
    isSynced: () => current !== undefined,
    async start() {
      current = await load();
      log.info({ sidecarSets: current.sidecarSets.all.length }, 'loaded SidecarSets from files');
      const paths = [options.sidecarSets, ...(options.namespaces ? [options.namespaces] : [])];
      watcher = watch(paths, { ignoreInitial: true, awaitWriteFinish: false });
      watcher.on('all', schedule);
      watcher.on('error', (err) => {
        log.error({ err: err instanceof Error ? err.message : String(err) }, 'file watch error');
      });
      await new Promise<void>((resolve) =>
        watcher?.once('ready', () => {
          resolve();
        }),
      );
    },
    async stop() {
      clearTimeout(timer);
      await watcher?.close();
      await reloading;
    },
  };
}
