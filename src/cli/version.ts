import { readFileSync } from 'node:fs';

/**
 * The version in package.json, read once: it is two directories up from src/cli/ (under tsx)
 * and from dist/cli/ (built) alike.
 */
export const VERSION = readVersion();

function readVersion(): string {
  const pkg: unknown = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  );
  const version =
    typeof pkg === 'object' && pkg !== null ? (pkg as { version?: unknown }).version : undefined;
  if (typeof version !== 'string') throw new Error('package.json has no version');
  return version;
}
