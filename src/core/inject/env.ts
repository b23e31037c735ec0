/** Env vars an injected container receives from the app containers (OpenKruise GetSidecarTransferEnvs, pkg/control/sidecarcontrol/util.go). */
import { IS_INJECTED_ENV } from '../api/annotations.js';
import { cloneJson, compareStrings } from '../encoding/json.js';
import type { Container, EnvVar, Pod } from '../api/k8s-types.js';
import type { TransferEnvVar } from '../api/sidecarset-types.js';

const IS_INJECTED_VAR: EnvVar = { name: IS_INJECTED_ENV, value: 'true' };

/**
 * True for containers a SidecarSet injected earlier; they are never a source of shared mounts. As
 * OpenKruise's IsInjectedSidecarContainerInPod reads it: the first IS_INJECTED entry says "true".
 */
function isInjectedContainer(container: Container): boolean {
  return (container.env ?? []).find((e) => e.name === IS_INJECTED_ENV)?.value === 'true';
}

/**
 * Whether a pod container is an app container, a source of shared mounts. Besides containers
 * injected earlier, a container that this injection is about to replace (same name as a sidecar)
 * is not one: otherwise injecting the injected pod again would give a different result.
 */
export function isAppContainer(container: Container, sidecarNames: ReadonlySet<string>): boolean {
  return !isInjectedContainer(container) && !sidecarNames.has(container.name);
}

/**
 * `container/env` → the env var; a container that repeats a name keeps the last one. Every pod
 * container is a source, injected ones too (OpenKruise GetSidecarTransferEnvs), except those this
 * injection replaces.
 */
export function indexAppEnv(
  pod: Readonly<Pod>,
  sidecarNames: ReadonlySet<string>,
): Map<string, EnvVar> {
  const index = new Map<string, EnvVar>();
  for (const c of pod.spec.containers) {
    if (sidecarNames.has(c.name)) continue;
    for (const e of c.env ?? []) index.set(`${c.name}/${e.name}`, e);
  }
  return index;
}

const FIELD_REF = /^metadata\.(labels|annotations)\['([^']*)'\]$/;

/** The source container named by a fieldRef to a pod label or annotation. */
export function sourceFromFieldRef(
  fieldPath: string,
  pod: Readonly<Pod>,
): { ok: true; name: string } | { ok: false; error: string } {
  const m = FIELD_REF.exec(fieldPath);
  const kind = m?.[1];
  const key = m?.[2];
  if (kind === undefined || key === undefined || key === '') {
    return { ok: false, error: `fieldPath ${fieldPath} is not supported` };
  }
  const values = kind === 'labels' ? pod.metadata.labels : pod.metadata.annotations;
  return { ok: true, name: values?.[key] ?? '' };
}

export interface TransferredEnv {
  env: EnvVar[];
  warnings: string[];
}

/** The env vars named by transferEnv, in entry order and, within an entry, in name order. */
export function transferEnv(
  entries: readonly TransferEnvVar[],
  pod: Readonly<Pod>,
  appEnv: ReadonlyMap<string, EnvVar>,
): TransferredEnv {
  const env: EnvVar[] = [];
  const warnings: string[] = [];
  for (const entry of entries) {
    let source = entry.sourceContainerName ?? '';
    const fieldRef = entry.sourceContainerNameFrom?.fieldRef;
    if (fieldRef !== undefined) {
      const found = sourceFromFieldRef(fieldRef.fieldPath, pod);
      if (!found.ok) {
        warnings.push(`transferEnv skipped: ${found.error}`);
        continue;
      }
      source = found.name;
    }
    const names = new Set(entry.envNames ?? []);
    if (entry.envName) names.add(entry.envName);
    for (const name of [...names].sort(compareStrings)) {
      const found = appEnv.get(`${source}/${name}`);
      if (found !== undefined) env.push(cloneJson(found));
    }
  }
  return { env, warnings };
}

/**
 * The injected container's final env: its own, then IS_INJECTED=true (always, even if declared:
 * OpenKruise's quirk), then each transferred var whose name is not present yet.
 */
export function assembleEnv(own: readonly EnvVar[], transferred: readonly EnvVar[]): EnvVar[] {
  const out = [...own, { ...IS_INJECTED_VAR }];
  const present = new Set(out.map((e) => e.name));
  for (const e of transferred) {
    if (present.has(e.name)) continue;
    present.add(e.name);
    out.push(e);
  }
  return out;
}
