/** `sidecarset validate`: every problem of every SidecarSet, with file and field. */
import type { Io } from './io.js';
import { describeProblems, loadSidecarSets } from '../io/loaders.js';

export async function runValidate(options: { sidecarsets: string }, io: Io): Promise<number> {
  const prepared = await loadSidecarSets(options.sidecarsets);
  const problems = describeProblems(prepared);
  if (problems.length > 0) {
    io.stderr.write(`${problems.join('\n')}\n`);
    return 1;
  }
  const n = prepared.sidecarSets.length;
  io.stdout.write(`${n} SidecarSet${n === 1 ? '' : 's'} valid\n`);
  return 0;
}
