/** Reads a tar back, in order, with its headers and the bytes of each file. */
import { Readable } from 'node:stream';

import { extract } from 'tar-stream';
import type { Header } from 'tar-stream';

export interface TarEntry {
  readonly header: Header;
  readonly data: Buffer;
}

export async function readTar(tar: Buffer): Promise<TarEntry[]> {
  const entries: TarEntry[] = [];
  for await (const entry of Readable.from([tar]).pipe(extract())) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    entries.push({ header: entry.header, data: Buffer.concat(chunks) });
  }
  return entries;
}

/** The files of a tar by name (folders and links left out). */
export async function tarFiles(tar: Buffer): Promise<Map<string, Buffer>> {
  const entries = await readTar(tar);
  return new Map(
    entries.filter((e) => e.header.type === 'file').map((e) => [e.header.name, e.data]),
  );
}
