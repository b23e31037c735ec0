/** The pod mutating webhook: AdmissionRequest in, AdmissionResponse out (reference injection §3.1). */
import { SidecarSetError } from '../errors.js';
import { isPlainObject } from '../json.js';
import type { Pod } from '../k8s-types.js';
import type { InjectionSnapshot } from '../pod-mutation.js';
import { mutatePod } from '../pod-mutation.js';
import type { AdmissionRequest, AdmissionResponse } from './review.js';
import { allow, deny, encodePatch } from './review.js';

export type PodOutcome = 'injected' | 'unchanged' | 'skipped' | 'rejected' | 'error';

export interface PodDecision {
  response: AdmissionResponse;
  outcome: PodOutcome;
  /** SidecarSets injected (empty unless outcome is injected). */
  injected: string[];
  /** Why nothing was done, for the log. */
  reason?: string;
}

export interface DecisionEnv {
  now: Date;
  random: () => number;
}

export function decidePod(
  request: AdmissionRequest,
  snapshot: InjectionSnapshot,
  env: DecisionEnv,
): PodDecision {
  const { uid } = request;
  if (request.resource.group !== '' || request.resource.resource !== 'pods') {
    return skipped(uid, `resource ${request.resource.resource} is not pods`);
  }
  if (request.subResource !== undefined) return skipped(uid, `subresource ${request.subResource}`);
  if (request.operation !== 'CREATE') return skipped(uid, `operation ${request.operation}`);
  const pod = asPod(request.object);
  if (pod === undefined) {
    return {
      response: deny(
        uid,
        400,
        'request.object is not a Pod (it needs metadata and spec.containers)',
        'BadRequest',
      ),
      outcome: 'rejected',
      injected: [],
    };
  }
  try {
    const mutation = mutatePod(
      {
        operation: request.operation,
        pod,
        ...(request.namespace ? { namespace: request.namespace } : {}),
      },
      snapshot,
      env,
    );
    if (mutation.kind === 'skipped') return skipped(uid, mutation.reason);
    if (mutation.patch.length === 0) {
      return {
        response: allow(uid),
        outcome: 'unchanged',
        injected: [],
        reason: 'already injected',
      };
    }
    const response = allow(uid, {
      patch: encodePatch(mutation.patch),
      patchType: 'JSONPatch',
      auditAnnotations: { injected: mutation.injected.join(',') },
      ...(mutation.warnings.length > 0 ? { warnings: mutation.warnings } : {}),
    });
    return { response, outcome: 'injected', injected: mutation.injected };
  } catch (err) {
    if (err instanceof SidecarSetError) {
      return {
        response: deny(uid, err.statusCode, err.message, err.code),
        outcome: 'rejected',
        injected: [],
      };
    }
    const message = err instanceof Error ? err.message : String(err);
    return {
      response: deny(uid, 500, `sidecar injection failed: ${message}`, 'InternalError'),
      outcome: 'error',
      injected: [],
    };
  }
}

function skipped(uid: string, reason: string): PodDecision {
  return { response: allow(uid), outcome: 'skipped', injected: [], reason };
}

function asPod(object: unknown): Pod | undefined {
  if (!isPlainObject(object)) return undefined;
  const { metadata, spec } = object;
  if (metadata !== undefined && !isPlainObject(metadata)) return undefined;
  if (!isPlainObject(spec) || !Array.isArray(spec['containers'])) return undefined;
  return { ...object, metadata: metadata ?? {} } as unknown as Pod;
}
