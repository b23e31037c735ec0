/**
 * The long-running commands (`serve`, `controller`) size V8's heap for a server that keeps a cache
 * and answers small requests, however node was started
 * (docs/adr/0030-heap-sized-by-the-process.md). A flag of the user's own for a setting wins.
 *
 * - The young generation stays small: as the image starts them, `--max-semi-space-size=4`
 *   (docs/adr/0027-young-generation-cap.md). By default V8 doubles it whenever as many bytes have
 *   survived its collections as it holds, up to 16 MiB a semi-space on Node 20 and 64 MiB on
 *   Node 24, and an idle process does not give it back.
 * - The old generation grows by 10 % between full collections (`--heap-growing-percent=10`).
 *   By default V8 lets it grow by up to four times what survived, tuned for throughput: the
 *   garbage of the start-up lists (every pod, every SidecarSet) then sets the resident set for
 *   the life of the process.
 */
import { setFlagsFromString } from 'node:v8';

/** The image's flag (its entrypoint: scripts/image/definition.ts). */
export const YOUNG_GENERATION_FLAG = '--max-semi-space-size=4';
const OLD_GENERATION_FLAG = '--heap-growing-percent=10';

/** Node flags with which the young generation is sized. */
const YOUNG_GENERATION_FLAGS = [
  '--max-semi-space-size',
  '--min-semi-space-size',
  '--semi-space-growth-factor',
];

/** Whether node's command line or NODE_OPTIONS has one of `flags` (either spelling). */
export function hasNodeFlag(
  flags: readonly string[],
  execArgv: readonly string[],
  nodeOptions = '',
): boolean {
  const words = [...execArgv, ...nodeOptions.split(/\s+/)];
  return words.some((word) => {
    const normalized = word.replaceAll('_', '-');
    return flags.some((flag) => normalized === flag || normalized.startsWith(`${flag}=`));
  });
}

/** The commands that run until stopped; the others keep V8's defaults (`plan` needs them). */
const LONG_RUNNING = new Set(['serve', 'controller']);

/** process.execve, new in Node 22.15 (experimental; not in Node 20's types). */
type Execve = (file: string, args: readonly string[], env: NodeJS.ProcessEnv) => never;

/**
 * Called by bin/sidecarset.js with the command line, before anything else runs. For a
 * long-running command:
 * - without a young-generation flag, on Node 22.15 and later, the process starts itself again,
 *   the same process (execve), with the image's flag in front of its own. Node 20 cannot; there
 *   V8 is told not to grow the young generation past the size it has by now (1 or 2 MiB a
 *   semi-space). Both growth settings are read by V8 each time it grows a space rather than once
 *   at start, so unlike the semi-space size they can be set here.
 * - without `--heap-growing-percent`, it is set to 10.
 */
export function sizeHeapForServing(args: readonly string[]): void {
  if (!LONG_RUNNING.has(args[0] ?? '')) return;
  const { execArgv } = process;
  const nodeOptions = process.env['NODE_OPTIONS'];
  if (!hasNodeFlag(YOUNG_GENERATION_FLAGS, execArgv, nodeOptions)) {
    const node = process as NodeJS.Process & { execve?: Execve };
    if (node.execve !== undefined) {
      const again = [YOUNG_GENERATION_FLAG, ...execArgv, ...process.argv.slice(1)];
      node.execve(process.execPath, [process.execPath, ...again], process.env);
    }
    setFlagsFromString('--semi-space-growth-factor=1');
  }
  if (!hasNodeFlag(['--heap-growing-percent'], execArgv, nodeOptions)) {
    setFlagsFromString(OLD_GENERATION_FLAG);
  }
}
