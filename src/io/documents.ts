/**
 * Reading Kubernetes manifests from files, directories or stdin: YAML (several documents per
 * file), JSON, and `v1 List` objects, flattened into one document per object.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

import { parseAllDocuments } from 'yaml';

import { SidecarSetError } from '../core/errors.js';
import { isPlainObject } from '../core/json.js';

export interface LoadedDocument {
  /** Where it came from: `file`, `file#2` for the second document, `file#2.items[0]` in a List. */
  source: string;
  object: Record<string, unknown>;
}

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

/** Reads one file, every manifest file of a directory (sorted, not recursive), or `-` (stdin). */
export async function readManifests(
  path: string,
  stdin?: NodeJS.ReadableStream,
): Promise<LoadedDocument[]> {
  if (path === '-') {
    if (stdin === undefined) throw inputError('-', 'no standard input');
    return parseManifests(await readStream(stdin), '<stdin>');
  }
  const files = await manifestFiles(path);
  const docs: LoadedDocument[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw inputError(file, `cannot be read (${describe(err)})`);
    }
    docs.push(...parseManifests(text, file));
  }
  return docs;
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
  parseAllDocuments(text, { uniqueKeys: false }).forEach((doc, i, all) => {
    const source = all.length > 1 ? `${file}#${i + 1}` : file;
    const error = doc.errors[0];
    if (error !== undefined) {
      const where = error.linePos?.[0];
      const line = where === undefined ? '' : ` at line ${where.line}, column ${where.col}`;
      throw inputError(source, `is not valid YAML or JSON${line}: ${firstLine(error.message)}`);
    }
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (value === null || value === undefined) return;
    if (!isPlainObject(value)) throw inputError(source, 'is not an object');
    docs.push(...flattenList(value, source));
  });
  return docs;
}

function flattenList(value: Record<string, unknown>, source: string): LoadedDocument[] {
  const kind = value['kind'];
  if (typeof kind !== 'string' || !kind.endsWith('List') || !Array.isArray(value['items'])) {
    return [{ source, object: value }];
  }
  return value['items'].flatMap((item: unknown, i) => {
    const itemSource = `${source}.items[${i}]`;
    if (!isPlainObject(item)) throw inputError(itemSource, 'is not an object');
    return flattenList(item, itemSource);
  });
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
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
