/**
 * The SidecarSet webhooks: mutating (defaults and hash annotations, recomputed on every CREATE and
 * UPDATE as OpenKruise does) and validating (the rules, conflicts with the cached SidecarSets).
 * Both take a SidecarSet in the version the request was made in, v1alpha1 or v1beta1, and answer
 * in it (the patch, the field paths of errors).
 */
import { dropStaleNamespaceAnnotation } from '../conversion/sidecarset-conversion.js';
import { applySidecarSetAdmission } from '../api/hash.js';
import type { RevisionLookup } from '../inject/revision.js';
import { isPlainObject } from '../encoding/json.js';
import { diffAsJsonPatch } from '../mutation/patch.js';
import type { SidecarSet } from '../api/sidecarset-types.js';
import { SIDECARSET_API_VERSIONS, SIDECARSET_GROUP } from '../api/sidecarset-types.js';
import { formatFieldErrors } from '../validation/field-error.js';
import { validateSidecarSet, validateSidecarSetSchema } from '../validation/sidecarset.js';
import type { PatchMetadataAllowList } from '../validation/patch-metadata-allowlist.js';
import { disallowedPatchKeys } from '../validation/patch-metadata-allowlist.js';
import type { AdmissionRequest, AdmissionResponse } from './review.js';
import { allow, deny, encodePatch } from './review.js';

type SidecarSetOutcome = 'mutated' | 'unchanged' | 'allowed' | 'skipped' | 'rejected';

export interface SidecarSetDecision {
  response: AdmissionResponse;
  outcome: SidecarSetOutcome;
}

const WRITES = new Set(['CREATE', 'UPDATE']);

/** A request this webhook does not act on, or the SidecarSet it carries (schema-checked). */
function sidecarSetOf(request: AdmissionRequest): SidecarSetDecision | SidecarSet {
  const { uid } = request;
  if (request.resource.group !== 'apps.kruise.io' || request.resource.resource !== 'sidecarsets') {
    return { response: allow(uid), outcome: 'skipped' };
  }
  if (request.subResource !== undefined || !WRITES.has(request.operation)) {
    return { response: allow(uid), outcome: 'skipped' };
  }
  const version = `${SIDECARSET_GROUP}/${request.kind.version}`;
  if (!(SIDECARSET_API_VERSIONS as readonly string[]).includes(version)) {
    return {
      response: deny(
        uid,
        400,
        `SidecarSet ${version} is not served; use ${SIDECARSET_API_VERSIONS.join(' or ')}`,
        'BadRequest',
      ),
      outcome: 'rejected',
    };
  }
  const errors = validateSidecarSetSchema(request.object);
  if (errors.length > 0) {
    return { response: deny(uid, 422, formatFieldErrors(errors), 'Invalid'), outcome: 'rejected' };
  }
  return request.object as SidecarSet;
}

export function decideSidecarSetMutation(request: AdmissionRequest): SidecarSetDecision {
  const target = sidecarSetOf(request);
  if ('response' in target) return target;
  const patch = diffAsJsonPatch(
    target,
    dropStaleNamespaceAnnotation(applySidecarSetAdmission(target)),
  );
  if (patch.length === 0) return { response: allow(request.uid), outcome: 'unchanged' };
  return {
    response: allow(request.uid, { patch: encodePatch(patch), patchType: 'JSONPatch' }),
    outcome: 'mutated',
  };
}

/**
 * `revisions`: the stored ControllerRevisions (cluster mode); none, a pinned SidecarSet is refused.
 * `allowList`: what patchPodMetadata may write (validation/patch-metadata-allowlist.ts); none
 * configured, nothing.
 */
export function decideSidecarSetValidation(
  request: AdmissionRequest,
  others: readonly SidecarSet[],
  revisions: RevisionLookup = () => [],
  allowList?: PatchMetadataAllowList,
): SidecarSetDecision {
  const target = sidecarSetOf(request);
  if ('response' in target) return target;
  let old: SidecarSet | undefined;
  if (request.operation === 'UPDATE') {
    const stored = storedSidecarSet(request.oldObject);
    if (typeof stored === 'string') {
      return {
        response: deny(
          request.uid,
          400,
          `request.oldObject is not a SidecarSet: ${stored}`,
          'BadRequest',
        ),
        outcome: 'rejected',
      };
    }
    old = stored;
  }
  const errors = validateSidecarSet(target, {
    others,
    revisions: revisions(target.metadata.name ?? ''),
    ...(old ? { old } : {}),
  });
  errors.push(...disallowedPatchKeys(target, allowList));
  if (errors.length > 0) {
    return {
      response: deny(request.uid, 422, formatFieldErrors(errors), 'Invalid'),
      outcome: 'rejected',
    };
  }
  return { response: allow(request.uid), outcome: 'allowed' };
}

/**
 * The stored SidecarSet of an UPDATE, or why `oldObject` is not one. The API server always sends
 * the stored object, so a missing or malformed one is a bad request: denied with 400, as
 * OpenKruise's handler answers when it cannot decode oldObject (admission.Errored(400)). Treating
 * it as absent instead would skip the rules that compare with the stored object (containers cannot
 * be added, upgradeType and the canary base are immutable) and let through an UPDATE they refuse.
 * Only the shape those rules read is checked, not the whole schema: a stored object that an older
 * schema (or OpenKruise's) admitted must stay updatable, or it could never be fixed.
 */
function storedSidecarSet(oldObject: unknown): SidecarSet | string {
  if (oldObject === undefined) return 'missing';
  if (!isPlainObject(oldObject)) return 'not an object';
  const { metadata, spec } = oldObject;
  if (!isPlainObject(metadata)) return 'metadata is not an object';
  const annotations = metadata['annotations'] ?? {};
  if (!isPlainObject(annotations) || !Object.values(annotations).every(isString)) {
    return 'metadata.annotations is not a map of strings';
  }
  if (!isPlainObject(spec)) return 'spec is not an object';
  const containers = spec['containers'] ?? [];
  const isContainer = (c: unknown): boolean =>
    isPlainObject(c) && isString(c['name']) && isPlainObject(c['upgradeStrategy'] ?? {});
  if (!Array.isArray(containers) || !containers.every(isContainer)) {
    return 'spec.containers is not a list of containers';
  }
  return oldObject as unknown as SidecarSet;
}

const isString = (value: unknown): boolean => typeof value === 'string';
