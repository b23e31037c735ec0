/**
 * Noticing that files changed, including Kubernetes' atomic update of a mounted ConfigMap or
 * Secret: the kubelet writes a new `..<timestamp>` directory, re-points the `..data` symlink to
 * it with a rename, and every file is a symlink `name -> ..data/name` that itself never changes
 * (kubernetes pkg/volume/util/atomic_writer.go). A watch on the file alone misses that; a watch
 * on its directory sees the rename.
 *
 * So the directory of each path is watched (and a directory path itself, and the directory the
 * path resolves to), and what the paths resolve to is compared before and after: `onChange`
 * runs only when some file's identity, size or modification time differs, once per burst of
 * events (`sed -i` makes several). A periodic comparison covers file systems without events.
 */
import type { FSWatcher, Stats } from 'node:fs';
import { watch } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export interface PathsWatch {
  close(): void;
}

export interface WatchPathsOptions {
  /** Quiet period after an event before the paths are compared. */
  debounceMs?: number;
  /** Interval of the comparison that runs without events. */
  pollMs?: number;
  /** A directory could not be watched; the periodic comparison still runs. */
  onError?: (err: unknown) => void;
}

export function watchPaths(
  paths: readonly string[],
  onChange: () => void,
  options: WatchPathsOptions = {},
): PathsWatch {
  const watchers = new Map<string, FSWatcher>();
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let last: string | undefined;
  let comparing: Promise<void> | undefined;
  let again = false;

  const compare = async (): Promise<void> => {
    const [state, dirs] = await Promise.all([signature(paths), directoriesOf(paths)]);
    if (closed) return;
    rearm(dirs);
    if (last !== undefined && state !== last) onChange();
    last = state;
  };
  const run = (): void => {
    if (comparing !== undefined) {
      again = true;
      return;
    }
    comparing = compare().finally(() => {
      comparing = undefined;
      if (again && !closed) {
        again = false;
        run();
      }
    });
  };
  const schedule = (): void => {
    clearTimeout(timer);
    timer = setTimeout(run, options.debounceMs ?? 50);
  };
  function rearm(dirs: ReadonlySet<string>): void {
    for (const [dir, watcher] of watchers) {
      if (dirs.has(dir)) continue;
      watcher.close();
      watchers.delete(dir);
    }
    for (const dir of dirs) {
      if (watchers.has(dir)) continue;
      try {
        const watcher = watch(dir, { persistent: false }, schedule);
        watcher.on('error', (err) => {
          // The directory went away (an old `..<timestamp>` one): the next comparison re-arms.
          watcher.close();
          watchers.delete(dir);
          options.onError?.(err);
          schedule();
        });
        watchers.set(dir, watcher);
      } catch (err) {
        options.onError?.(err);
      }
    }
  }

  run();
  const poll = setInterval(run, options.pollMs ?? 10_000);
  poll.unref();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      clearInterval(poll);
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}

/** The directories to watch: each path's, a directory path itself, and where a path leads. */
async function directoriesOf(paths: readonly string[]): Promise<Set<string>> {
  const dirs = new Set<string>();
  for (const path of paths) {
    dirs.add(dirname(path));
    const info = await stat(path).catch(() => undefined);
    if (info?.isDirectory() === true) dirs.add(path);
    const real = await realpath(path).catch(() => undefined);
    if (real !== undefined) dirs.add(info?.isDirectory() === true ? real : dirname(real));
  }
  return dirs;
}

/** What the paths (and the entries of a directory path) resolve to, as one comparable string. */
async function signature(paths: readonly string[]): Promise<string> {
  const parts: string[] = [];
  for (const path of paths) {
    const info = await stat(path).catch(() => undefined);
    parts.push(`${path}=${describe(info)}`);
    if (info?.isDirectory() !== true) continue;
    const names = await readdir(path).catch(() => []);
    for (const name of names.sort()) {
      const entry = join(path, name);
      parts.push(`${entry}=${describe(await stat(entry).catch(() => undefined))}`);
    }
  }
  return parts.join('\n');
}

function describe(info: Stats | undefined): string {
  if (info === undefined) return 'missing';
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}:${info.isDirectory() ? 'dir' : ''}`;
}
