/**
 * Sidecars that stop with a Job: a SidecarSet container whose env says
 * KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true, injected into a pod that runs to completion, goes
 * into the pod's init containers as a native sidecar (restartPolicy Always), which Kubernetes
 * stops once the main containers are done. OpenKruise gets there with a node daemon that kills
 * the container instead (pkg/controller/sidecarterminator/). docs/adr/0021-job-sidecars.md.
 */
import type { Container, Pod } from '../api/k8s-types.js';

/** `native`: convert (the default); `container`: inject into spec.containers, as OpenKruise. */
export type JobSidecarMode = 'native' | 'container';

export const JOB_SIDECAR_MODES: readonly JobSidecarMode[] = ['native', 'container'];

const TERMINATE_WITH_JOB_ENV = 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT';

/** What decides whether one sidecar is converted. */
export interface JobSidecarContext {
  mode: JobSidecarMode;
  pod: Readonly<Pod>;
}

/**
 * Never and OnFailure pods end when their containers succeed; Always (also the default, which
 * the API server has set before any webhook runs) restarts them forever.
 */
function runsToCompletion(pod: Readonly<Pod>): boolean {
  const policy = pod.spec.restartPolicy;
  return policy === 'Never' || policy === 'OnFailure';
}

/**
 * As OpenKruise's isNormalSidecar (pkg/controller/sidecarterminator/utils.go): any env entry of
 * that name whose literal value is `true` in any case; valueFrom is never read.
 */
function terminatesWithJob(container: Readonly<Container>): boolean {
  return (container.env ?? []).some(
    (e) => e.name === TERMINATE_WITH_JOB_ENV && e.value?.toLowerCase() === 'true',
  );
}

/**
 * Whether the built sidecar becomes a native sidecar of this pod. Hot-upgrade pairs and names
 * that the pod already uses for a main container stay in spec.containers, with a warning: the
 * first rely on swapping two running containers, the second would give the pod the name twice.
 */
export function becomesNativeSidecar(
  built: Readonly<Container>,
  hot: boolean,
  context: JobSidecarContext,
  warnings: string[],
): boolean {
  if (context.mode !== 'native' || !runsToCompletion(context.pod) || !terminatesWithJob(built)) {
    return false;
  }
  const ignored = (why: string): false => {
    warnings.push(
      `container ${built.name}: ${TERMINATE_WITH_JOB_ENV}=true is ignored (${why}): it stays in spec.containers and keeps the pod from completing`,
    );
    return false;
  };
  if (hot) return ignored('a HotUpgrade sidecar');
  if (context.pod.spec.containers.some((c) => c.name === built.name)) {
    return ignored('the pod already has a container of that name');
  }
  return true;
}
