/**
 * Files mode: SidecarSets (and optionally Namespaces) from files, reloaded when they change.
 *
 * Reloads are read in a worker thread (src/cache/worker-loader.ts), so requests never wait for
 * one, and coalesced: events during a reload cause one more reload after it, not one each. A
 * reload that fails (unreadable file, invalid YAML, invalid SidecarSet) is reported and the last
 * good snapshot stays in place; so does one that would drop every SidecarSet unless the files
 * say so with an empty List (docs/adr/0009-files-mode-empty-reload.md). A failure is not reported
 * when the files changed again while they were read (a writer still at work): the next reload,
 * which follows at once, decides.
 */
import type { Logger } from 'pino';

import { ANY_NAMESPACE } from '../core/matching/match.js';
import type { LoadedFiles } from './load-files.js';
import type { Snapshot, SnapshotSource } from './snapshot.js';
import { makeSnapshot } from './snapshot.js';
import type { PathsWatch } from './watch-paths.js';
import { watchPaths } from './watch-paths.js';
import { createWorkerLoader } from './worker-loader.js';

export interface FilesSourceOptions {
  sidecarSets: string;
  namespaces?: string;
  logger: Logger;
  /** Called after every reload attempt. */
  onReload?: (ok: boolean) => void;
  /** Quiet period before a burst of file events triggers one reload. */
  debounceMs?: number;
  /** Interval of the check for changes that covers file systems without events. */
  pollMs?: number;
}

export function createFilesSource(options: FilesSourceOptions): SnapshotSource {
  const log = options.logger.child({ source: 'files' });
  const loader = createWorkerLoader({
    sidecarSets: options.sidecarSets,
    ...(options.namespaces === undefined ? {} : { namespaces: options.namespaces }),
  });
  let current: Snapshot | undefined;
  let watch: PathsWatch | undefined;
  let reloading: Promise<void> | undefined;
  /** Flags set from other callbacks while a reload runs. */
  const flags = { stopped: false, again: false };
  const wantedAgain = (): boolean => flags.again && !flags.stopped;

  /** A reload that keeps the last good SidecarSets: reported, unless another one follows. */
  function keepLastGood(fields: Record<string, unknown>, message: string): void {
    if (wantedAgain()) {
      log.debug(fields, `${message}; the files changed since, reading them again`);
      return;
    }
    log.error(fields, message);
    options.onReload?.(false);
  }

  async function reloadOnce(): Promise<void> {
    try {
      const files = await loader.load();
      if (flags.stopped) return;
      const before = current?.sidecarSets.all.length ?? 0;
      if (files.sidecarSets.length === 0 && before > 0 && !files.declaredEmpty) {
        keepLastGood(
          { path: options.sidecarSets, kept: before },
          'the files hold no SidecarSet; keeping the last good ones (to remove them all, write an empty List)',
        );
        return;
      }
      current = snapshotOf(files);
      log.info({ sidecarSets: files.sidecarSets.length }, 'reloaded SidecarSets from files');
      options.onReload?.(true);
    } catch (err) {
      if (flags.stopped) return; // the worker was stopped under it
      const message = err instanceof Error ? err.message : String(err);
      keepLastGood({ err: message }, 'reload failed; keeping the last good SidecarSets');
    }
  }

  function reload(): void {
    if (flags.stopped) return;
    if (reloading !== undefined) {
      flags.again = true;
      return;
    }
    reloading = (async () => {
      do {
        flags.again = false;
        await reloadOnce();
      } while (wantedAgain());
    })().finally(() => {
      reloading = undefined;
    });
  }

  return {
    read() {
      if (current === undefined) throw new Error('the files source has not been started');
      return current;
    },
    isSynced: () => current !== undefined,
    async start() {
      const files = await loader.load();
      current = snapshotOf(files);
      const count = files.sidecarSets.length;
      if (count === 0 && !files.declaredEmpty) {
        log.warn(
          { path: options.sidecarSets },
          'the files hold no SidecarSet; nothing is injected',
        );
      } else {
        log.info({ sidecarSets: count }, 'loaded SidecarSets from files');
      }
      const paths = [options.sidecarSets, ...(options.namespaces ? [options.namespaces] : [])];
      watch = watchPaths(paths, reload, {
        debounceMs: options.debounceMs ?? 100,
        ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
        onError: (err) => {
          log.warn({ err: err instanceof Error ? err.message : String(err) }, 'file watch error');
        },
      });
    },
    async stop() {
      flags.stopped = true;
      watch?.close();
      await loader.close(); // a reload under way is dropped, not awaited
      await reloading;
    },
  };
}

function snapshotOf(files: LoadedFiles): Snapshot {
  if (files.namespaces === undefined)
    return makeSnapshot(files.sidecarSets, ANY_NAMESPACE, undefined);
  return makeSnapshot(files.sidecarSets, files.namespaces, files.namespaces.size);
}
