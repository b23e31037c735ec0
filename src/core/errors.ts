/**
 * One error base for everything the core rejects. `code` is stable (documented in docs/errors.md),
 * `statusCode` is what an admission response or HTTP answer carries.
 */
export const ERROR_CODES = {
  SI_ERR_INVALID_SELECTOR: 'a label selector has an unknown operator or invalid values',
  SI_ERR_BAD_HASH_ANNOTATION: "a pod's existing sidecarset hash annotation is not valid JSON",
  SI_ERR_BAD_MERGE_PATCH:
    'a patchPodMetadata MergePatchJson value or pod annotation cannot be merged',
  SI_ERR_REVISION_NOT_FOUND: 'injectionStrategy.revision names a revision that does not exist',
  SI_ERR_BAD_PERCENT: 'an int-or-percent value is not a valid percentage',
  SI_ERR_INVALID_SIDECARSET: 'a SidecarSet failed validation',
  SI_ERR_BAD_INPUT: 'an input document is malformed or of an unsupported kind',
  SI_ERR_RESOURCES_POLICY:
    "a sidecar's resourcesPolicy cannot be applied: no target container, a bad regex or expression",
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class SidecarSetError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;

  constructor(code: ErrorCode, message: string, statusCode = 500) {
    super(message);
    this.name = 'SidecarSetError';
    this.code = code;
    this.statusCode = statusCode;
  }
}
