/**
 * Reading Kubernetes manifests from files, directories or stdin: YAML (several documents per
 * file), JSON, and `v1 List` objects, flattened into one document per object.
 */
import { readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

import { Composer, LineCounter, Parser } from 'yaml';

import { SidecarSetError } from '../core/errors.js';
import { isPlainObject } from '../core/encoding/json.js';
import type { MoreBytes } from './json-list.js';
import { scanJsonObject } from './json-list.js';

export interface LoadedDocument {
  /** Where it came from: `file`, `file#2` for the second document, `file#2.items[0]` in a List. */
  source: string;
  object: Record<string, unknown>;
}

const MANIFEST_FILE = /\.(ya?ml|json)$/i;
const STDIN = '-';
/** How much of a file is read at a time. */
const CHUNK_BYTES = 4 * 1024 * 1024;
const NO_MORE: MoreBytes = () => undefined;

/** Reads one file, every manifest file of a directory (sorted, not recursive), or `-` (stdin). */
export function readManifests(
  path: string,
  stdin?: NodeJS.ReadableStream,
): Promise<LoadedDocument[]> {
  return readEachManifest(path, stdin, same);
}

/**
 * readManifests, with `each` applied to every document as it is read: the items of a JSON List
 * are parsed one at a time (json-list.ts), so that when `each` keeps less than the document, a
 * large List is never held whole.
 */
export async function readEachManifest<T>(
  path: string,
  stdin: NodeJS.ReadableStream | undefined,
  each: (doc: LoadedDocument) => T,
): Promise<T[]> {
  if (path === STDIN) {
    if (stdin === undefined) throw inputError(STDIN, 'no standard input');
    const bytes = await readStream(stdin);
    return (
      scanEachManifest(bytes, NO_MORE, '<stdin>', each) ??
      parseManifests(bytes.toString('utf8'), '<stdin>').map(each)
    );
  }
  const files = await manifestFiles(path);
  const out: T[] = [];
  for (const file of files) {
    const values =
      (await scanFile(file, each)) ?? parseManifests(await readText(file), file).map(each);
    // A loop, not push(...out): a spread of some 100,000 documents overflows the stack.
    for (const value of values) out.push(value);
  }
  return out;
}

/** scanEachManifest on a file read a chunk at a time, so that it is never held whole. */
async function scanFile<T>(
  file: string,
  each: (doc: LoadedDocument) => T,
): Promise<T[] | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file);
  } catch (err) {
    throw inputError(file, `cannot be read (${describe(err)})`);
  }
  try {
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    const more = (): Uint8Array | undefined => {
      let read: number;
      try {
        read = readSync(handle.fd, chunk, 0, chunk.length, null);
      } catch (err) {
        throw inputError(file, `cannot be read (${describe(err)})`);
      }
      return read === 0 ? undefined : chunk.subarray(0, read);
    };
    return scanEachManifest(Buffer.alloc(0), more, file, each);
  } finally {
    await handle.close();
  }
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw inputError(file, `cannot be read (${describe(err)})`);
  }
}

/**
 * The documents of one JSON object (a List's items, or the object), `each` applied, read by
 * json-list.ts; undefined when the input is not one JSON object (YAML, a JSON stream, an error to
 * report) or (rare) has items but turns out not to be a List once its kind comes.
 */
function scanEachManifest<T>(
  bytes: Buffer,
  more: MoreBytes,
  source: string,
  each: (doc: LoadedDocument) => T,
): T[] | undefined {
  const out: T[] = [];
  const scanned = scanJsonObject(
    bytes,
    (item, i) => {
      addDocument(out, item, `${source}.items[${i}]`, each);
    },
    more,
  );
  if (scanned === undefined || (scanned.listed && !isList(scanned.fields))) return undefined;
  if (!scanned.listed) addDocument(out, scanned.fields, source, each);
  return out;
}

/** Refuses command lines that read standard input for more than one flag: it can be read once. */
export function checkOneStdin(paths: Readonly<Record<string, string | undefined>>): void {
  const flags = Object.keys(paths).filter((flag) => paths[flag] === STDIN);
  if (flags.length > 1) {
    throw new SidecarSetError(
      'SI_ERR_BAD_INPUT',
      `only one of ${flags.join(', ')} can read standard input (-)`,
      400,
    );
  }
}

async function manifestFiles(path: string): Promise<string[]> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(path)).isDirectory();
  } catch (err) {
    throw inputError(path, `cannot be read (${describe(err)})`);
  }
  if (!isDirectory) return [path];
  const entries = await readdir(path, { withFileTypes: true });
  return entries
    .filter((e) => !e.isDirectory() && MANIFEST_FILE.test(e.name))
    .map((e) => e.name)
    .sort()
    .map((n) => join(path, n));
}

/** Parses text holding one or more YAML or JSON documents. */
export function parseManifests(text: string, file: string): LoadedDocument[] {
  const docs: LoadedDocument[] = [];
  const json = parseJson(text);
  if (json !== undefined) {
    addDocument(docs, json.value, file, same);
    return docs;
  }
  const values = parseYamlDocuments(text, file);
  values.forEach((value, i) => {
    if (value === null || value === undefined) return;
    addDocument(docs, value, values.length > 1 ? `${file}#${i + 1}` : file, same);
  });
  return docs;
}

/**
 * JSON is YAML, but the YAML parser takes some 40 times the time and memory of `JSON.parse` on
 * a large `kubectl get pods -o json`. Text that is not one JSON value (a JSON stream, a syntax
 * error) goes to the YAML parser, which also says where the error is.
 */
function parseJson(text: string): { value: unknown } | undefined {
  if (!/^\s*[[{]/.test(text)) return undefined;
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/**
 * Every document's value, composed one at a time so that only one document's syntax tree is
 * held at once (parseAllDocuments keeps them all until the end).
 */
function parseYamlDocuments(text: string, file: string): unknown[] {
  const lines = new LineCounter();
  const composer = new Composer({ uniqueKeys: false });
  const values: unknown[] = [];
  let firstError: { index: number; message: string } | undefined;
  for (const doc of composer.compose(new Parser(lines.addNewLine).parse(text))) {
    const index = values.length;
    values.push(undefined);
    if (firstError !== undefined) continue;
    const error = doc.errors[0];
    if (error !== undefined) {
      const { line, col } = lines.linePos(error.pos[0]);
      const message = `is not valid YAML or JSON at line ${line}, column ${col}: ${firstLine(error.message)}`;
      firstError = { index, message };
      continue;
    }
    try {
      values[index] = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      // toJS refuses alias bombs (over 100 alias expansions) by throwing.
      firstError = { index, message: `is not valid YAML: ${describe(err)}` };
    }
  }
  if (firstError !== undefined) {
    const source = values.length > 1 ? `${file}#${firstError.index + 1}` : file;
    throw inputError(source, firstError.message);
  }
  return values;
}

function addDocument<T>(
  out: T[],
  value: unknown,
  source: string,
  each: (doc: LoadedDocument) => T,
): void {
  if (!isPlainObject(value)) throw inputError(source, 'is not an object');
  const items = value['items'];
  if (!isList(value) || !Array.isArray(items)) {
    out.push(each({ source, object: value }));
    return;
  }
  items.forEach((item: unknown, i) => {
    addDocument(out, item, `${source}.items[${i}]`, each);
  });
}

function same(doc: LoadedDocument): LoadedDocument {
  return doc;
}

function isList(object: Record<string, unknown>): boolean {
  const kind = object['kind'];
  return typeof kind === 'string' && kind.endsWith('List');
}

async function readStream(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  }
  return Buffer.concat(chunks);
}

export function inputError(source: string, problem: string): SidecarSetError {
  return new SidecarSetError('SI_ERR_BAD_INPUT', `${source}: ${problem}`, 400);
}

function describe(err: unknown): string {
  if (isPlainObject(err) && typeof err['code'] === 'string') return err['code'];
  return err instanceof Error ? err.message : String(err);
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}
