import { readFileSync } from 'node:fs';

/**
 * The version in package.json, read once: it is one directory up from src/ (under tsx) and from
 * dist/ (built) alike. Shared by the CLI (--version) and the metrics (sidecarset_build_info).
 */
export const VERSION = readVersion();

function readVersion(): string {
  const pkg: unknown = JSON.parse(
    readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
  );
  const version =
    typeof pkg === 'object' && pkg !== null ? (pkg as { version?: unknown }).version : undefined;
  if (typeof version !== 'string') throw new Error('package.json has no version');
  return version;
}
