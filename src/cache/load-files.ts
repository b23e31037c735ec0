/**
 * One complete read of files mode's inputs, as the reload worker runs it: SidecarSets defaulted,
 * hashed and validated as the admission webhooks would, and the Namespaces. Any problem fails
 * the whole read, so that a reload never half-applies.
 */
import { SidecarSetError } from '../core/errors.js';
import type { Labels } from '../core/matching/selector.js';
import type { SidecarSet } from '../core/api/sidecarset-types.js';
import { describeProblems, loadNamespaces, loadSidecarSets } from '../io/loaders.js';
import { declaresNoSidecarSets } from './explicitly-empty.js';

export interface FilesPaths {
  sidecarSets: string;
  namespaces?: string;
}

export interface LoadedFiles {
  sidecarSets: SidecarSet[];
  /** Absent without a namespaces file: every namespace exists. */
  namespaces?: Map<string, Labels>;
  /** No SidecarSet, and the files say so on purpose (an empty List). */
  declaredEmpty: boolean;
}

export async function loadFiles(paths: FilesPaths): Promise<LoadedFiles> {
  const prepared = await loadSidecarSets(paths.sidecarSets);
  if (prepared.problems.length > 0) {
    throw new SidecarSetError(
      'SI_ERR_INVALID_SIDECARSET',
      `invalid SidecarSets:\n${describeProblems(prepared).join('\n')}`,
      422,
    );
  }
  const declaredEmpty =
    prepared.sidecarSets.length === 0 && (await declaresNoSidecarSets(paths.sidecarSets));
  if (paths.namespaces === undefined) return { sidecarSets: prepared.sidecarSets, declaredEmpty };
  const namespaces = await loadNamespaces(paths.namespaces);
  return { sidecarSets: prepared.sidecarSets, namespaces, declaredEmpty };
}
