/**
 * A SidecarSet's custom version, whichever version it is written in: v1beta1 spec.customVersion,
 * else the v1alpha1 label (OpenKruise's NewRevision copies the labels, then sets the label from
 * spec.customVersion; pkg/control/sidecarcontrol/history_control.go). '' when it has none.
 */
import { SIDECARSET_CUSTOM_VERSION_LABEL } from './annotations.js';
import type { SidecarSet } from './sidecarset-types.js';

export function customVersionOf(ss: Readonly<SidecarSet>): string {
  const version = ss.spec.customVersion ?? '';
  if (version !== '') return version;
  return ss.metadata.labels?.[SIDECARSET_CUSTOM_VERSION_LABEL] ?? '';
}
