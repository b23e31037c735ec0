/**
 * Whether SidecarSet files that hold no SidecarSet say so on purpose: they hold at least one YAML
 * document, which can then only be an empty `List`. Empty files, files of comments and an empty
 * directory do not count: they are what a file being rewritten, or a mistake, looks like
 * (docs/adr/0009-files-mode-empty-reload.md).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

import { parseAllDocuments } from 'yaml';

/** The files src/io/documents.ts reads under a path: the file, or a directory's manifest files. */
const MANIFEST_FILE = /\.(ya?ml|json)$/i;

export async function declaresNoSidecarSets(path: string): Promise<boolean> {
  for (const file of await manifestFiles(path)) {
    const text = await readFile(file, 'utf8');
    if (parseAllDocuments(text).some((doc) => doc.toJS() != null)) return true;
  }
  return false;
}

async function manifestFiles(path: string): Promise<string[]> {
  if (!(await stat(path)).isDirectory()) return [path];
  const entries = await readdir(path, { withFileTypes: true });
  return entries
    .filter((e) => !e.isDirectory() && MANIFEST_FILE.test(e.name))
    .map((e) => join(path, e.name));
}
