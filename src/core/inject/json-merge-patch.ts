/**
 * RFC 7386 JSON merge patch written out byte for byte as OpenKruise's MergePatchJson writes it:
 * github.com/evanphx/json-patch v5.6.0 (merge.go), which OpenKruise's
 * pkg/control/sidecarcontrol/util.go calls. That library keeps every value it does not need to
 * look into as the raw text it read (number spelling, string escapes and the key order of nested
 * objects survive), and re-encodes only the objects it merges into or prunes nulls from, as Go
 * maps: keys sorted, HTML-safe escaping.
 */
import { compareStrings, goJsonString } from '../encoding/json.js';

/** A JSON value: kept as read, or opened into an object or array whose members are nodes. */
type Node =
  | { kind: 'raw'; text: string }
  | { kind: 'object'; members: Map<string, Node | null> }
  | { kind: 'array'; items: (Node | null)[] };

export class MergePatchError extends Error {}

/** Merges `patch` into `doc` (both JSON texts). Throws MergePatchError where the library fails. */
export function jsonMergePatch(doc: string, patch: string): string {
  const docValue = parseOrThrow(doc, "the pod's value");
  const patchValue = parseOrThrow(patch, 'the patchPodMetadata value');
  if (docValue === null) throw new MergePatchError("the pod's value is null");
  if (patchValue === null) throw new MergePatchError('the patchPodMetadata value is null');
  const patchNode = rawNode(patch);
  if (isObjectText(doc) && isObjectText(patch)) {
    const docNode = rawNode(doc);
    mergeMembers(openObject(docNode), openObject(patchNode));
    return encode(docNode);
  }
  // Not two objects: the result is the patch, nulls pruned; a scalar patch is an error.
  if (!isObjectText(patch) && !patch.trimStart().startsWith('[')) {
    throw new MergePatchError('the patchPodMetadata value is neither an object nor an array');
  }
  pruneNulls(patchNode);
  return encode(patchNode);
}

function parseOrThrow(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new MergePatchError(`${what} is not valid JSON`);
  }
}

function rawNode(text: string): Node {
  return { kind: 'raw', text: text.trim() };
}

function isObjectText(text: string): boolean {
  return text.trimStart().startsWith('{');
}

function isObjectNode(node: Node): boolean {
  return node.kind === 'object' || (node.kind === 'raw' && isObjectText(node.text));
}

function isArrayNode(node: Node): boolean {
  return node.kind === 'array' || (node.kind === 'raw' && node.text.startsWith('['));
}

/** Opens a raw object in place into its members (raw each; a repeated key keeps the last). */
function openObject(node: Node): Map<string, Node | null> {
  if (node.kind === 'object') return node.members;
  const members = new Map<string, Node | null>();
  if (node.kind === 'raw') {
    const parts = splitMembers(node.text, '{', '}');
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const key = JSON.parse(parts[i] ?? '""') as string;
      const value = parts[i + 1] ?? 'null';
      members.set(key, value === 'null' ? null : rawNode(value));
    }
  }
  Object.assign(node, { kind: 'object', members });
  return members;
}

function openArray(node: Node): (Node | null)[] {
  if (node.kind === 'array') return node.items;
  const items = splitMembers(node.kind === 'raw' ? node.text : '[]', '[', ']').map((t) =>
    t === 'null' ? null : rawNode(t),
  );
  Object.assign(node, { kind: 'array', items });
  return items;
}

function mergeMembers(doc: Map<string, Node | null>, patch: Map<string, Node | null>): void {
  for (const [key, value] of patch) {
    const current = doc.get(key);
    if (value === null) doc.delete(key);
    else if (current === undefined || current === null) {
      pruneNulls(value);
      doc.set(key, value);
    } else doc.set(key, merge(current, value));
  }
}

function merge(current: Node, patch: Node): Node {
  if (!isObjectNode(current)) {
    pruneNulls(patch);
    return patch;
  }
  if (!isObjectNode(patch)) return patch;
  mergeMembers(openObject(current), openObject(patch));
  return current;
}

/** Drops null members of objects, at every depth (array items stay, even null ones). */
function pruneNulls(node: Node): void {
  if (isObjectNode(node)) {
    const members = openObject(node);
    for (const [key, value] of members) {
      if (value === null) members.delete(key);
      else pruneNulls(value);
    }
  } else if (isArrayNode(node)) {
    for (const item of openArray(node)) if (item !== null) pruneNulls(item);
  }
}

function encode(node: Node | null): string {
  if (node === null) return 'null';
  switch (node.kind) {
    case 'raw':
      return compactHtmlSafe(node.text);
    case 'array':
      return `[${node.items.map(encode).join(',')}]`;
    case 'object': {
      const keys = [...node.members.keys()].sort(compareStrings);
      return `{${keys.map((k) => `${goJsonString(k)}:${encode(node.members.get(k) ?? null)}`).join(',')}}`;
    }
  }
}

/**
 * The texts of the members of a JSON object or array (given valid JSON): for an object, key and
 * value alternately. Whitespace around them is dropped; their own text is kept as written.
 */
function splitMembers(text: string, open: string, close: string): string[] {
  const body = text.trim();
  if (!body.startsWith(open) || !body.endsWith(close)) return [];
  const parts: string[] = [];
  let depth = 0;
  let start = 1;
  let inString = false;
  for (let i = 1; i < body.length - 1; i++) {
    const c = body[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (depth === 0 && (c === ',' || (c === ':' && open === '{'))) {
      parts.push(body.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = body.slice(start, body.length - 1).trim();
  if (last !== '' || parts.length > 0) parts.push(last);
  return parts;
}

/** Go's json.Compact with HTML escaping: whitespace outside strings dropped, <>& escaped. */
function compactHtmlSafe(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? '';
    if (inString) {
      if (c === '\\') {
        out += c + (text[i + 1] ?? '');
        i++;
        continue;
      }
      if (c === '"') inString = false;
      out += /[<>&\u2028\u2029]/.test(c)
        ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
        : c;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (!/\s/.test(c)) out += c;
  }
  return out;
}
