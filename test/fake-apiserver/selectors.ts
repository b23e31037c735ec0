import { badRequest } from './errors.js';
import { getPath } from './json.js';
import type { KubeObject } from './types.js';

export type ObjectPredicate = (obj: KubeObject) => boolean;

const KEY = String.raw`[A-Za-z0-9][-A-Za-z0-9_./]*`;
const VALUE = String.raw`[-A-Za-z0-9_.]*`;
const NOT_EXISTS = new RegExp(String.raw`^!\s*(${KEY})$`);
const EXISTS = new RegExp(String.raw`^(${KEY})$`);
const EQUALITY = new RegExp(String.raw`^(${KEY})\s*(==|=|!=)\s*(${VALUE})$`);
const SET = new RegExp(String.raw`^(${KEY})\s+(in|notin)\s+\(([^)]*)\)$`);

/** Splits on commas outside parentheses: `a in (x,y),b` → [`a in (x,y)`, `b`]. */
function splitRequirements(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current.trim());
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current.trim());
  return parts.filter((p) => p !== '');
}

type LabelPredicate = (labels: Readonly<Record<string, string>>) => boolean;

function parseRequirement(req: string): LabelPredicate {
  let m = NOT_EXISTS.exec(req);
  if (m?.[1] !== undefined) {
    const key = m[1];
    return (labels) => !(key in labels);
  }
  m = EXISTS.exec(req);
  if (m?.[1] !== undefined) {
    const key = m[1];
    return (labels) => key in labels;
  }
  m = EQUALITY.exec(req);
  if (m?.[1] !== undefined && m[3] !== undefined) {
    const [key, op, value] = [m[1], m[2], m[3]];
    return op === '!=' ? (labels) => labels[key] !== value : (labels) => labels[key] === value;
  }
  m = SET.exec(req);
  if (m?.[1] !== undefined && m[3] !== undefined) {
    const [key, op] = [m[1], m[2]];
    const values = new Set(m[3].split(',').map((v) => v.trim()));
    return op === 'in'
      ? (labels) => key in labels && values.has(labels[key] ?? '')
      : (labels) => !(key in labels) || !values.has(labels[key] ?? '');
  }
  throw badRequest(`unable to parse requirement: ${JSON.stringify(req)}`);
}

/** Parses a `labelSelector` query value (equality- and set-based). Empty selects everything. */
export function parseLabelSelector(selector: string | null | undefined): ObjectPredicate {
  const predicates = splitRequirements(selector ?? '').map(parseRequirement);
  return (obj) => {
    const labels = obj.metadata.labels ?? {};
    return predicates.every((p) => p(labels));
  };
}

const FIELD = /^([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*)$/;

function fieldValue(obj: KubeObject, path: string): string {
  const value = getPath(obj, path.split('.'));
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return '';
}

/** Parses a `fieldSelector` query value; only the given paths are selectable, as on the server. */
export function parseFieldSelector(
  selector: string | null | undefined,
  allowed: readonly string[],
): ObjectPredicate {
  const predicates = (selector ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part): ObjectPredicate => {
      const m = FIELD.exec(part);
      if (m?.[1] === undefined || m[3] === undefined) {
        throw badRequest(`invalid selector: '${part}'; can't understand '${part}'`);
      }
      const [path, op, value] = [m[1], m[2], m[3]];
      if (path !== 'metadata.name' && path !== 'metadata.namespace' && !allowed.includes(path)) {
        throw badRequest(`field label not supported: ${path}`);
      }
      return op === '!='
        ? (obj) => fieldValue(obj, path) !== value
        : (obj) => fieldValue(obj, path) === value;
    });
  return (obj) => predicates.every((p) => p(obj));
}
