/**
 * The kruise.io/sidecarset-injected-list pod annotation: the names of the SidecarSets injected into
 * the pod, comma-separated and sorted (pkg/control/sidecarcontrol/util.go, SidecarSetListAnnotation).
 */
import { SIDECARSET_INJECTED_LIST } from '../api/annotations.js';
import { compareStrings } from '../encoding/json.js';
import type { Pod } from '../api/k8s-types.js';

/** The SidecarSets the pod records as injected; empty entries dropped. */
export function injectedNames(pod: Pick<Pod, 'metadata'>): string[] {
  const list = pod.metadata.annotations?.[SIDECARSET_INJECTED_LIST] ?? '';
  return list === '' ? [] : list.split(',').filter((n) => n !== '');
}

/** The annotation's value once `added` are injected too: no duplicates, sorted. */
export function injectedListWith(
  annotations: Readonly<Record<string, string>>,
  added: readonly string[],
): string {
  const names = new Set(injectedNames({ metadata: { annotations } }));
  for (const name of added) if (name !== '') names.add(name);
  return [...names].sort(compareStrings).join(',');
}
