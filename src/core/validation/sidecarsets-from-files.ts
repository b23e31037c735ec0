/**
 * SidecarSets read from files, checked as the SidecarSet admission webhooks would check them
 * (schema, rules, conflicts with each other) and given what they would add (defaults, hash
 * annotations), so that `sidecarset inject` and the webhook in files mode see exactly what a
 * cluster would store.
 */
import { withHashes } from '../api/hash.js';
import type { SidecarSet } from '../api/sidecarset-types.js';
import type { FieldError } from './field-error.js';
import { validateSidecarSet, validateSidecarSetSchema } from './sidecarset.js';

export interface SourcedObject {
  source: string;
  object: Readonly<Record<string, unknown>>;
}

interface SidecarSetProblem {
  source: string;
  name: string;
  errors: FieldError[];
}

export interface PreparedSidecarSets {
  sidecarSets: SidecarSet[];
  problems: SidecarSetProblem[];
}

/**
 * Defaults every SidecarSet and gives it hash annotations, keeping hashes it already carries (as
 * exported from a cluster, where the webhook computed them). Each one must pass the schema and
 * the validating webhook's rules, conflicts with the others included; those that do not are
 * reported and left out.
 */
export function prepareSidecarSets(docs: readonly SourcedObject[]): PreparedSidecarSets {
  const problems: SidecarSetProblem[] = [];
  const shaped: { source: string; sidecarSet: SidecarSet }[] = [];
  for (const { source, object } of docs) {
    const errors = validateSidecarSetSchema(object);
    const name = nameOf(object);
    if (errors.length > 0) {
      problems.push({ source, name, errors: [...errors, ...rulesBeyondSchema(object, errors)] });
      continue;
    }
    shaped.push({ source, sidecarSet: withHashes(object as unknown as SidecarSet) });
  }
  const sidecarSets: SidecarSet[] = [];
  const seen = new Map<string, string>();
  // The conflict check skips the SidecarSet with its own name, so one list serves every one.
  const others = shaped.map((s) => s.sidecarSet);
  for (const { source, sidecarSet } of shaped) {
    const name = sidecarSet.metadata.name ?? '';
    const first = seen.get(name);
    if (first !== undefined) {
      problems.push({ source, name, errors: [duplicateName(name, first)] });
      continue;
    }
    seen.set(name, source);
    // Files have no revision store: a SidecarSet pinned to a revision is refused here.
    const errors = validateSidecarSet(sidecarSet, { others, revisions: [] });
    if (errors.length > 0) problems.push({ source, name, errors });
    else sidecarSets.push(sidecarSet);
  }
  return { sidecarSets, problems };
}

/**
 * The webhook's rules on a SidecarSet that already fails the schema, so that one run shows
 * both kinds of problem (the API server would stop at the schema). The rules expect the schema's
 * shape: if the wrong shape makes them fail, the schema errors alone are the answer. Rule errors
 * on a field the schema already rejects are left out.
 */
function rulesBeyondSchema(
  object: Readonly<Record<string, unknown>>,
  schemaErrors: readonly FieldError[],
): FieldError[] {
  let errors: FieldError[];
  try {
    errors = validateSidecarSet(withHashes(object as unknown as SidecarSet), {
      others: [],
      revisions: [],
    });
  } catch {
    return [];
  }
  const within = (field: string, parent: string): boolean =>
    field === parent || field.startsWith(`${parent}.`) || field.startsWith(`${parent}[`);
  return errors.filter((e) => !schemaErrors.some((s) => within(e.field, s.field)));
}

function nameOf(object: Readonly<Record<string, unknown>>): string {
  const metadata = object['metadata'];
  if (typeof metadata !== 'object' || metadata === null) return '';
  const name = (metadata as Record<string, unknown>)['name'];
  return typeof name === 'string' ? name : '';
}

function duplicateName(name: string, first: string): FieldError {
  return {
    type: 'Duplicate',
    field: 'metadata.name',
    value: name,
    detail: `a SidecarSet with this name is already defined in ${first}`,
  };
}
