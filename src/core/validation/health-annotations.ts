/**
 * The health gate's tuning annotations refused when malformed (docs/adr/0014-health-gated-rollouts.md),
 * parsed by the same code the controller reads them with (src/core/api/health-gate-annotations.ts). Like
 * Kubernetes' ratcheting validation, an UPDATE that keeps an annotation's stored value is not
 * refused for it: SidecarSets stored before this check stay updatable.
 */
import type { TuningAnnotation } from '../api/health-gate-annotations.js';
import { HEALTH_ANNOTATIONS } from '../api/health-gate-annotations.js';
import type { FieldError } from './field-error.js';
import { invalid, notSupported } from './field-error.js';

/** `old`: the stored object's annotations on UPDATE, undefined on CREATE. */
export function validateHealthAnnotations(
  annotations: Readonly<Record<string, string>> | undefined,
  old: Readonly<Record<string, string>> | undefined,
): FieldError[] {
  return HEALTH_ANNOTATIONS.flatMap((annotation) => {
    const raw = annotations?.[annotation.key];
    if (raw === undefined || annotation.parse(raw) !== undefined) return [];
    if (old !== undefined && old[annotation.key] === raw) return [];
    return [annotationError(annotation, raw)];
  });
}

function annotationError(annotation: TuningAnnotation<unknown>, raw: string): FieldError {
  const field = `metadata.annotations[${annotation.key}]`;
  if (annotation.values !== undefined) return notSupported(field, raw, annotation.values);
  return invalid(field, raw, `must be ${annotation.accepts}`);
}
