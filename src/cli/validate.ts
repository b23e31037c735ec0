/** `sidecarset validate`: every problem of every SidecarSet, with file and field. */
import type { Io } from './io.js';
import { loadValidSidecarSets } from './sidecarset-input.js';

export async function runValidate(options: { sidecarsets: string }, io: Io): Promise<number> {
  const sidecarSets = await loadValidSidecarSets(options.sidecarsets, io);
  if (sidecarSets === undefined) return 1;
  const n = sidecarSets.length;
  io.stdout.write(`${n} SidecarSet${n === 1 ? '' : 's'} valid\n`);
  return 0;
}
