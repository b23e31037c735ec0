/** The caches, among named reflectors, whose list or watch is failing now (for /readyz). */
import type { FailingCache } from '../cache/snapshot.js';
import type { Reflector } from './reflector.js';

export function failingCaches(
  caches: Readonly<Record<string, Reflector<unknown>>>,
): FailingCache[] {
  const out: FailingCache[] = [];
  for (const [name, reflector] of Object.entries(caches)) {
    const sinceMs = reflector.failingSince();
    if (sinceMs !== undefined) out.push({ name, sinceMs, reason: reflector.lastFailure() ?? '' });
  }
  return out;
}
