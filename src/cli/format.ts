/** Output shared by the CLI's commands: aligned tables, short pod lists, JSON and YAML. */
import { stringify } from 'yaml';

import { podKey } from '../core/api/pod-ref.js';
import type { PodRef } from '../core/api/pod-ref.js';

export type DataFormat = 'json' | 'yaml';

/** A few names, then how many more. */
export function some(refs: readonly PodRef[], max = 4): string {
  const shown = refs.slice(0, max).map(podKey).join(', ');
  return refs.length > max ? `${shown}, … (+${refs.length - max} more)` : shown;
}

/** Rows as lines with aligned columns, two spaces apart; the last column is not padded. */
export function table(rows: readonly (readonly string[])[]): string[] {
  const widths = rows.reduce<number[]>(
    (w, row) => row.map((cell, i) => Math.max(w[i] ?? 0, cell.length)),
    [],
  );
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** A value for programs: indented JSON, or YAML written out in full (no anchors). */
export function renderData(value: unknown, format: DataFormat): string {
  if (format === 'json') return `${JSON.stringify(value, null, 2)}\n`;
  return stringify(value, { aliasDuplicateObjects: false, lineWidth: 0 });
}
