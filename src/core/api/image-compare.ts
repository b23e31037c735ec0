/**
 * The image comparisons of the state-consistency check (IsPodStateConsistent): distribution's
 * reference.Parse, without normalisation (so "busybox" and "docker.io/library/busybox" differ, as
 * they do in OpenKruise).
 */
import { NAME_TOTAL_LENGTH_MAX, REFERENCE, validDigest } from './image-ref.js';

export interface ParsedImage {
  repository: string;
  tag: string;
  digest: string;
}

/** reference.Parse: a name no longer than 255 characters, a digest go-digest accepts. */
export function parseImage(image: string): ParsedImage | undefined {
  const match = REFERENCE.exec(image);
  if (match === null) return undefined;
  const repository = match[1] ?? '';
  const digest = match[3] ?? '';
  if (repository.length > NAME_TOTAL_LENGTH_MAX || (digest !== '' && !validDigest(digest)))
    return undefined;
  return { repository, tag: match[2] ?? '', digest };
}

export function isDigestImage(image: string): boolean {
  // Most images are tags: skip the regular expression for them.
  if (!image.includes('@')) return false;
  return (parseImage(image)?.digest ?? '') !== '';
}

/** Digest with digest compares repository and digest; anything else repository and tag. */
export function imagesEqual(a: string, b: string): boolean {
  const pa = parseImage(a);
  const pb = parseImage(b);
  if (pa === undefined || pb === undefined) return false;
  if (pa.digest !== '' && pb.digest !== '') {
    return pa.repository === pb.repository && pa.digest === pb.digest;
  }
  return pa.repository === pb.repository && pa.tag === pb.tag;
}

/** A status imageID with its transport prefix (docker-pullable://, ...) removed. */
export function stripImageIdScheme(imageID: string): string {
  const parts = imageID.split('://');
  return parts.length > 1 ? (parts[1] ?? '') : imageID;
}
