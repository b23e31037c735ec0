/**
 * A mounted ConfigMap or Secret, laid out and updated exactly as the kubelet does it
 * (kubernetes pkg/volume/util/atomic_writer.go): the files live in a `..<timestamp>` directory,
 * `..data` is a symlink to it, and each visible name is a symlink `name -> ..data/name`. An
 * update writes a new timestamped directory, points `..data_tmp` at it, renames `..data_tmp` over
 * `..data` (the atomic step) and removes the old directory.
 */
import { mkdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

let generation = 0;

function timestampedName(): string {
  generation += 1;
  const stamp = new Date().toISOString().replace(/[-:]/g, '_').replace('T', '_').slice(0, 19);
  return `..${stamp}.${process.pid}${String(generation).padStart(6, '0')}`;
}

/** Writes `files` into the volume directory `dir` (created if need be), as one atomic update. */
export async function writeAtomically(
  dir: string,
  files: Readonly<Record<string, string>>,
): Promise<void> {
  await mkdir(dir, { recursive: true });
  const previous = await readlink(join(dir, '..data')).catch(() => undefined);
  const next = timestampedName();
  await mkdir(join(dir, next));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, next, name), text);
  await symlink(next, join(dir, '..data_tmp'));
  await rename(join(dir, '..data_tmp'), join(dir, '..data'));
  for (const name of Object.keys(files)) {
    await symlink(join('..data', name), join(dir, name)).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    });
  }
  if (previous !== undefined) await rm(join(dir, previous), { recursive: true, force: true });
}
