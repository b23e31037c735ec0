/** Loading SidecarSets and Namespaces from files, for the CLI and the files-mode cache. */
import { NAMESPACE_NAME_LABEL } from '../core/api/annotations.js';
import { SidecarSetError } from '../core/errors.js';
import { isPlainObject } from '../core/encoding/json.js';
import type { Labels } from '../core/matching/selector.js';
import type { PreparedSidecarSets } from '../core/validation/sidecarsets-from-files.js';
import { prepareSidecarSets } from '../core/validation/sidecarsets-from-files.js';
import { formatFieldError } from '../core/validation/field-error.js';
import type { LoadedDocument } from './documents.js';
import { inputError, readManifests } from './documents.js';

/** Reads SidecarSets, defaulted, hashed and validated as the admission webhooks would. */
export async function loadSidecarSets(
  path: string,
  stdin?: NodeJS.ReadableStream,
): Promise<PreparedSidecarSets> {
  const docs = await readManifests(path, stdin);
  for (const doc of docs) requireKind(doc, 'SidecarSet');
  return prepareSidecarSets(docs);
}

/** One line per problem: `file: SidecarSet "name": field: message`. */
export function describeProblems(prepared: PreparedSidecarSets): string[] {
  return prepared.problems.flatMap((p) =>
    p.errors.map((e) => `${p.source}: SidecarSet "${p.name}": ${formatFieldError(e)}`),
  );
}

/** Namespace name → labels, each with the name label the API server always sets. */
export async function loadNamespaces(
  path: string,
  stdin?: NodeJS.ReadableStream,
): Promise<Map<string, Labels>> {
  const namespaces = new Map<string, Labels>();
  for (const doc of await readManifests(path, stdin)) {
    requireKind(doc, 'Namespace');
    const metadata = isPlainObject(doc.object['metadata']) ? doc.object['metadata'] : {};
    const name = metadata['name'];
    if (typeof name !== 'string' || name === '')
      throw inputError(doc.source, 'the Namespace has no name');
    const labels = isPlainObject(metadata['labels'])
      ? stringMap(metadata['labels'], doc.source)
      : {};
    namespaces.set(name, { ...labels, [NAMESPACE_NAME_LABEL]: name });
  }
  return namespaces;
}

function requireKind(doc: LoadedDocument, kind: string): void {
  const actual = doc.object['kind'];
  if (actual !== kind) {
    throw inputError(
      doc.source,
      `expected a ${kind}, found ${typeof actual === 'string' ? `kind ${actual}` : 'no kind'}`,
    );
  }
}

function stringMap(value: Record<string, unknown>, source: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') {
      throw new SidecarSetError('SI_ERR_BAD_INPUT', `${source}: label ${k} is not a string`, 400);
    }
    out[k] = v;
  }
  return out;
}
