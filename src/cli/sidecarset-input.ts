/** --sidecarsets for every command: read, defaulted, hashed and checked as `validate` does. */
import type { SidecarSet } from '../core/api/sidecarset-types.js';
import { describeProblems, loadSidecarSets } from '../io/loaders.js';
import type { Io } from './io.js';

/**
 * The valid SidecarSets of `path` (`-`: stdin). When any is invalid, or there is none at all,
 * says so on stderr, one line per problem, and gives undefined: the command exits 1.
 */
export async function loadValidSidecarSets(
  path: string,
  io: Io,
): Promise<SidecarSet[] | undefined> {
  const prepared = await loadSidecarSets(path, io.stdin);
  const problems = describeProblems(prepared);
  if (problems.length > 0) {
    io.stderr.write(`${problems.join('\n')}\n`);
    return undefined;
  }
  if (prepared.sidecarSets.length === 0) {
    io.stderr.write(`${path === '-' ? '<stdin>' : path}: no SidecarSet found\n`);
    return undefined;
  }
  return prepared.sidecarSets;
}
