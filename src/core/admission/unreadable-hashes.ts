/**
 * A pod that arrives with a kruise.io/sidecarset-hash(-without-image) annotation we cannot read is
 * injected as if the annotation were absent, and the annotation is rewritten; OpenKruise refuses
 * such a pod instead (docs/adr/0008-unreadable-hash-annotation.md).
 */
import { SIDECARSET_HASH, SIDECARSET_HASH_WITHOUT_IMAGE } from '../api/annotations.js';
import { SidecarSetError } from '../errors.js';
import type { Pod } from '../api/k8s-types.js';
import { parsePodSidecarSetHashes } from '../pod-annotations/pod-hash-annotation.js';

export function isUnreadableHashError(err: unknown): err is SidecarSetError {
  return err instanceof SidecarSetError && err.code === 'SI_ERR_BAD_HASH_ANNOTATION';
}

/** The pod without those of its hash annotations that cannot be read, and why each could not. */
export function withoutUnreadableHashes(pod: Pod): { pod: Pod; dropped: string[] } {
  const annotations = { ...pod.metadata.annotations };
  const dropped: string[] = [];
  for (const key of [SIDECARSET_HASH, SIDECARSET_HASH_WITHOUT_IMAGE]) {
    try {
      parsePodSidecarSetHashes(annotations[key], key);
    } catch (err) {
      if (!isUnreadableHashError(err)) throw err;
      dropped.push(err.message);
      delete annotations[key];
    }
  }
  return { pod: { ...pod, metadata: { ...pod.metadata, annotations } }, dropped };
}
