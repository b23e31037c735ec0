/**
 * The pod mutating webhook: AdmissionRequest in, AdmissionResponse out. OpenKruise's counterpart
 * is pkg/webhook/pod/mutating/sidecarset.go.
 */
import { SidecarSetError } from '../errors.js';
import { injectPod } from '../inject/inject.js';
import type { JobSidecarMode } from '../inject/job-sidecars.js';
import type { Pod } from '../api/k8s-types.js';
import { podNamespace } from '../api/pod-ref.js';
import { diffAsJsonPatch } from '../mutation/patch.js';
import type { InjectionSnapshot } from '../mutation/pod-mutation.js';
import { mutatePod } from '../mutation/pod-mutation.js';
import { matchingSidecarSets } from '../matching/sidecarset-index.js';
import type { SidecarSet } from '../api/sidecarset-types.js';
import type { FieldError } from '../validation/field-error.js';
import { formatFieldErrors } from '../validation/field-error.js';
import { validateSidecarSetSchema } from '../validation/schema-check.js';
import type { AdmissionRequest, AdmissionResponse } from './review.js';
import { allow, deny, encodePatch } from './review.js';
import { checkPodShape } from './pod-shape.js';
import { isUnreadableHashError, withoutUnreadableHashes } from './unreadable-hashes.js';

type PodOutcome = 'injected' | 'unchanged' | 'skipped' | 'rejected' | 'error';

export interface PodDecision {
  response: AdmissionResponse;
  outcome: PodOutcome;
  /** SidecarSets injected (empty unless outcome is injected). */
  injected: string[];
  /** Why nothing was done, for the log. */
  reason?: string;
  /** Something an operator should see: the level to log it at, and the error behind it. */
  problem?: { level: 'warn' | 'error'; message: string; err?: unknown };
}

export interface DecisionEnv {
  now: Date;
  random: () => number;
  /** --job-sidecars; default native. */
  jobSidecars?: JobSidecarMode;
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
  const shape = checkPodShape(request.object);
  if ('problem' in shape) {
    const message = `request.object is not a valid Pod: ${shape.problem}`;
    return {
      response: deny(uid, 400, message, 'BadRequest'),
      outcome: 'rejected',
      injected: [],
      problem: { level: 'warn', message },
    };
  }
  const { pod } = shape;
  const ctx: Context = { uid, namespace: podNamespace(pod, request.namespace), snapshot, env };
  const inject = (input: Pod): PodDecision => injection(ctx, pod, input);
  try {
    return inject(pod);
  } catch (err) {
    if (!isUnreadableHashError(err)) return failure(ctx, pod, err);
    // An unreadable bookkeeping annotation must not block the pod: injected as if it were absent.
    const readable = withoutUnreadableHashes(pod);
    try {
      const decision = inject(readable.pod);
      const note = `${readable.dropped.join('; ')}: ignored and rewritten`;
      return {
        ...decision,
        response: {
          ...decision.response,
          warnings: [...(decision.response.warnings ?? []), note],
        },
        problem: { level: 'warn', message: note },
      };
    } catch (again) {
      return failure(ctx, readable.pod, again);
    }
  }
}

interface Context {
  uid: string;
  namespace: string;
  snapshot: InjectionSnapshot;
  env: DecisionEnv;
}

/** Injects into `input`; the patch goes from `original` (what the API server has) to the result. */
function injection(ctx: Context, original: Pod, input: Pod): PodDecision {
  const { uid } = ctx;
  const mutation = mutatePod(
    { operation: 'CREATE', pod: input, namespace: ctx.namespace },
    ctx.snapshot,
    ctx.env,
  );
  if (mutation.kind === 'skipped') return skipped(uid, mutation.reason);
  const patch = input === original ? mutation.patch : diffAsJsonPatch(original, mutation.pod);
  if (patch.length === 0) {
    return { response: allow(uid), outcome: 'unchanged', injected: [], reason: 'already injected' };
  }
  const response = allow(uid, {
    patch: encodePatch(patch),
    patchType: 'JSONPatch',
    auditAnnotations: { injected: mutation.injected.join(',') },
    ...(mutation.warnings.length > 0 ? { warnings: mutation.warnings } : {}),
  });
  return { response, outcome: 'injected', injected: mutation.injected };
}

/**
 * A denial that names the pod and the SidecarSets that could not be injected, and says what is
 * wrong. Which SidecarSets: each matching one is tried alone, and those that fail are named (all
 * of them when none fails alone); a failing SidecarSet that breaks the schema is reported with
 * its field errors. This runs only on failure. JavaScript internals go to the log, not the answer.
 */
function failure(ctx: Context, pod: Pod, err: unknown): PodDecision {
  const name = pod.metadata.name ?? pod.metadata.generateName ?? '(unnamed)';
  const { which, invalid } = culprits(ctx, pod);
  let code = 500;
  let reason: string = 'InternalError';
  let what: string;
  if (err instanceof SidecarSetError) {
    ({ statusCode: code, code: reason, message: what } = err);
  } else if (invalid.length > 0) {
    reason = 'SI_ERR_INVALID_SIDECARSET';
    what = invalid.join('; ');
  } else {
    what = 'the webhook failed unexpectedly; this is a bug, and the webhook log has the error';
  }
  const message = `cannot inject ${which} into pod ${ctx.namespace}/${name}: ${what}`;
  return {
    response: deny(ctx.uid, code, message, reason),
    outcome: err instanceof SidecarSetError ? 'rejected' : 'error',
    injected: [],
    problem: { level: 'error', message, err },
  };
}

/**
 * `SidecarSet "a"`, `SidecarSets "a", "b"`, or `sidecars` when matching itself fails; and for
 * each failing SidecarSet that breaks the schema, what is wrong with it.
 */
function culprits(ctx: Context, pod: Pod): { which: string; invalid: string[] } {
  const { snapshot, env } = ctx;
  const fails = (ss: SidecarSet): boolean => {
    try {
      injectPod(pod, [ss], { ...env, revisions: snapshot.revisions });
      return false;
    } catch {
      return true;
    }
  };
  let matched: SidecarSet[];
  try {
    matched = matchingSidecarSets(snapshot.sidecarSets, pod, ctx.namespace, snapshot.namespaces);
  } catch {
    return { which: 'sidecars', invalid: [] };
  }
  const failing = matched.filter(fails);
  const named = failing.length > 0 ? failing : matched;
  const names = named.map((ss) => `"${ss.metadata.name ?? ''}"`);
  const invalid = failing.flatMap((ss) => {
    let errors: FieldError[];
    try {
      errors = validateSidecarSetSchema(ss);
    } catch {
      return [];
    }
    return errors.length === 0
      ? []
      : [`SidecarSet "${ss.metadata.name ?? ''}" is invalid: ${formatFieldErrors(errors)}`];
  });
  if (names.length === 0) return { which: 'sidecars', invalid };
  return { which: `SidecarSet${names.length === 1 ? '' : 's'} ${names.join(', ')}`, invalid };
}

function skipped(uid: string, reason: string): PodDecision {
  return { response: allow(uid), outcome: 'skipped', injected: [], reason };
}
