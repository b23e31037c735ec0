/** Kubernetes' validateVolumes for the fake pod: names, exactly one source, cheap source checks. */
import type { Volume } from '../api/k8s-types.js';
import type { FieldError } from './field-error.js';
import { childPath, duplicate, forbidden, indexPath, invalid, required } from './field-error.js';
import { isPlainObject } from '../encoding/json.js';
import { isDNS1123Label } from './names-and-selectors.js';

const FILE_MODE_ERROR = 'must be a number between 0 and 0777 (octal), both inclusive';

export interface VolumesResult {
  errors: FieldError[];
  /** Volume name → its source field (`emptyDir`, `persistentVolumeClaim`, …); valid names only. */
  volumeSources: Map<string, string>;
}

export function validateVolumes(volumes: readonly Readonly<Volume>[], path: string): VolumesResult {
  const errors: FieldError[] = [];
  const volumeSources = new Map<string, string>();
  volumes.forEach((vol, i) => {
    const p = indexPath(path, i);
    const name = vol.name;
    const before = errors.length;
    if (name === '') errors.push(required(childPath(p, 'name'), ''));
    else
      for (const msg of isDNS1123Label(name)) errors.push(invalid(childPath(p, 'name'), name, msg));
    if (volumeSources.has(name)) errors.push(duplicate(childPath(p, 'name'), name));
    const sources = Object.keys(vol).filter(
      (k) => k !== 'name' && vol[k] !== undefined && vol[k] !== null,
    );
    const [first, ...extra] = sources;
    if (first === undefined) {
      errors.push(required(p, 'must specify a volume type'));
    } else {
      for (const k of extra)
        errors.push(forbidden(childPath(p, k), 'may not specify more than 1 volume type'));
      errors.push(...validateSource(first, vol[first], childPath(p, first)));
    }
    if (errors.length === before && first !== undefined) volumeSources.set(name, first);
  });
  return { errors, volumeSources };
}

function validateSource(kind: string, source: unknown, p: string): FieldError[] {
  const src = isPlainObject(source) ? source : {};
  const errs: FieldError[] = [];
  const need = (field: string): void => {
    const v = src[field];
    if (v === undefined || v === '') errs.push(required(childPath(p, field), ''));
  };
  switch (kind) {
    // Enums (hostPath.type and the like) are checked by the core/v1 schema beforehand.
    case 'hostPath':
      need('path');
      break;
    case 'secret':
      need('secretName');
      break;
    case 'configMap':
      need('name');
      break;
    case 'persistentVolumeClaim':
      need('claimName');
      break;
    case 'projected':
      errs.push(...validateProjected(src, p));
      break;
    default:
      break;
  }
  const mode = src['defaultMode'];
  if (typeof mode === 'number' && (mode < 0 || mode > 0o777)) {
    errs.push(invalid(childPath(p, 'defaultMode'), mode, FILE_MODE_ERROR));
  }
  return errs;
}

function validateProjected(src: Record<string, unknown>, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const sources = Array.isArray(src['sources']) ? src['sources'] : [];
  sources.forEach((s: unknown, i) => {
    const sp = indexPath(childPath(p, 'sources'), i);
    const entry = isPlainObject(s) ? s : {};
    const kinds = Object.keys(entry).filter((k) => entry[k] !== undefined && entry[k] !== null);
    if (kinds.length === 0) errs.push(required(sp, 'must specify exactly 1 volume type'));
    for (const k of kinds.slice(1)) {
      errs.push(forbidden(childPath(sp, k), 'may not specify more than 1 volume type'));
    }
    const token = entry['serviceAccountToken'];
    if (isPlainObject(token)) {
      const tp = childPath(sp, 'serviceAccountToken');
      if (token['path'] === undefined || token['path'] === '')
        errs.push(required(childPath(tp, 'path'), ''));
      const exp = token['expirationSeconds'];
      if (typeof exp === 'number' && exp < 600) {
        errs.push(
          invalid(
            childPath(tp, 'expirationSeconds'),
            exp,
            'may not specify a duration less than 10 minutes',
          ),
        );
      } else if (typeof exp === 'number' && exp > 2 ** 32) {
        errs.push(
          invalid(
            childPath(tp, 'expirationSeconds'),
            exp,
            'may not specify a duration larger than 2^32 seconds',
          ),
        );
      }
    }
  });
  return errs;
}
