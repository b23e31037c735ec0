/**
 * The long-running commands (`serve`, `controller`) run with V8's young generation kept small, as
 * the image starts them (`--max-semi-space-size=4`, docs/adr/0027-young-generation-cap.md),
 * however node was started: docs/adr/0030-young-generation-capped-by-the-process.md. A user's
 * own young-generation flag is left alone.
 *
 * By default V8 doubles the young generation whenever as many bytes have survived its collections
 * as it holds, up to 16 MiB a semi-space on Node 20 and 64 MiB on Node 24 on a large machine, and
 * an idle process does not give it back: 20-70 MiB of resident set for a webhook whose requests
 * leave almost nothing behind, and more CPU per admission.
 */
import { setFlagsFromString } from 'node:v8';

/** The image's flag (the Dockerfile's ENTRYPOINT). */
export const YOUNG_GENERATION_FLAG = '--max-semi-space-size=4';

/** Node flags with which the young generation is sized. */
const SIZING_FLAGS = [
  '--max-semi-space-size',
  '--min-semi-space-size',
  '--semi-space-growth-factor',
];

/** Whether node's command line or NODE_OPTIONS already sizes the young generation. */
export function sizedByFlags(execArgv: readonly string[], nodeOptions = ''): boolean {
  const words = [...execArgv, ...nodeOptions.split(/\s+/)];
  return words.some((word) => {
    const normalized = word.replaceAll('_', '-');
    return SIZING_FLAGS.some((flag) => normalized === flag || normalized.startsWith(`${flag}=`));
  });
}

/** process.execve, new in Node 22.15 (experimental; not in Node 20's types). */
type Execve = (file: string, args: readonly string[], env: NodeJS.ProcessEnv) => never;

/** The commands that run until stopped; the others keep V8's defaults (`plan` needs them). */
const LONG_RUNNING = new Set(['serve', 'controller']);

/**
 * Called by bin/sidecarset.js with the command line, before anything else runs. For a long-running
 * command without a sizing flag: on Node 22.15 and later the process starts itself again, the same
 * process (execve), with the image's flag in front of its own. Node 20 cannot; there V8 is told
 * not to grow the young generation past the size it has by now (1 or 2 MiB a semi-space): the
 * growth factor is the one young-generation setting V8 reads each time it grows the space rather
 * than once at start.
 */
export function keepYoungGenerationSmall(args: readonly string[]): void {
  if (!LONG_RUNNING.has(args[0] ?? '')) return;
  if (sizedByFlags(process.execArgv, process.env['NODE_OPTIONS'])) return;
  const node = process as NodeJS.Process & { execve?: Execve };
  if (node.execve !== undefined) {
    const again = [YOUNG_GENERATION_FLAG, ...process.execArgv, ...process.argv.slice(1)];
    node.execve(process.execPath, [process.execPath, ...again], process.env);
  }
  setFlagsFromString('--semi-space-growth-factor=1');
}
