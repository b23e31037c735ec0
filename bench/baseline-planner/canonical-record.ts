/**
 * Recognizes, without parsing, the value Go writes for a pod that records one SidecarSet:
 * `{"NAME":{"updateTimestamp":T,"hash":"HASH","sidecarSetName":"NAME","sidecarList":L}}`, with an
 * optional `,"controllerRevision":"R"` before the last two braces (T a plain string or null, L null
 * or an array of plain strings; plain: no escape, no control character). Such a value is valid JSON
 * whose entry for NAME has the hash HASH, so the answer is known without JSON.parse, which is most
 * of the cost of reading a large fleet whose pods each carry their own timestamp. One anchored
 * regular expression does it (compiled to native code, it is several times faster than a scan
 * written in JavaScript).
 */
import { quotedGoJson } from '../../src/core/pod-hash-annotation.js';

/** A JSON string without escapes or control characters. */
const PLAIN = '"[^"\\\\\\u0000-\\u001f]*"';

/**
 * A test that says true only for such a value naming `sidecarSetName` and `hash` (any plain hash
 * when `hash` is omitted); false means "not recognized": the caller parses. undefined when the name
 * or hash would need escaping in JSON.
 */
export function canonicalRecordTest(
  sidecarSetName: string,
  hash?: string,
): ((value: string) => boolean) | undefined {
  const name = quotedGoJson(sidecarSetName);
  const quotedHash = hash === undefined ? undefined : quotedGoJson(hash);
  if (name !== `"${sidecarSetName}"` || (quotedHash !== undefined && quotedHash !== `"${hash}"`)) {
    return undefined;
  }
  const hashPattern = quotedHash === undefined ? PLAIN : literal(quotedHash);
  const pattern = new RegExp(
    `^\\{${literal(name)}:\\{"updateTimestamp":(?:null|${PLAIN}),"hash":${hashPattern},` +
      `"sidecarSetName":${literal(name)},"sidecarList":(?:null|\\[(?:${PLAIN}(?:,${PLAIN})*)?\\])` +
      `(?:,"controllerRevision":${PLAIN})?\\}\\}$`,
  );
  return (value) => pattern.test(value);
}

function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
