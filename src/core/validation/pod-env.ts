/** env and envFrom rules of Kubernetes container validation (strict env var names). */
import type { EnvVar } from '../api/k8s-types.js';
import type { JsonObject } from '../encoding/json.js';
import type { FieldError } from './field-error.js';
import { childPath, indexPath, invalid, notSupported, required } from './field-error.js';
import { isPlainObject } from '../encoding/json.js';
import { isQualifiedName, regexError } from './names-and-selectors.js';

const ENV_SOURCES = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef'];
const ENV_FIELD_PATHS = [
  'metadata.annotations',
  'metadata.labels',
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
];

/** validation.IsEnvVarName (without the relaxed-names feature, as OpenKruise validates). */
function isEnvVarName(value: string): string[] {
  const errs: string[] = [];
  if (!/^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(value)) {
    errs.push(
      regexError(
        "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit",
        '[-._a-zA-Z][-._a-zA-Z0-9]*',
        'my.env-name',
        'MY_ENV.NAME',
        'MyEnvName1',
      ),
    );
  }
  if (value === '.') errs.push("must not be '.'");
  else if (value === '..') errs.push("must not be '..'");
  else if (value.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

export function validateEnv(env: readonly Readonly<EnvVar>[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  env.forEach((ev, i) => {
    const p = indexPath(path, i);
    if (ev.name === '') errs.push(required(childPath(p, 'name'), ''));
    else
      for (const msg of isEnvVarName(ev.name))
        errs.push(invalid(childPath(p, 'name'), ev.name, msg));
    if (ev.valueFrom !== undefined) errs.push(...validateValueFrom(ev, childPath(p, 'valueFrom')));
  });
  return errs;
}

function validateValueFrom(ev: Readonly<EnvVar>, p: string): FieldError[] {
  const from: JsonObject = ev.valueFrom ?? {};
  const present = ENV_SOURCES.filter((k) => isPlainObject(from[k]));
  const errs: FieldError[] = [];
  if (present.length === 0) {
    errs.push(
      invalid(
        p,
        '',
        'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`',
      ),
    );
  } else if (present.length > 1) {
    errs.push(invalid(p, '', 'may not have more than one field specified at a time'));
  }
  if ((ev.value ?? '') !== '' && present.length > 0) {
    errs.push(invalid(p, '', 'may not be specified when `value` is not empty'));
  }
  const fieldRef = from['fieldRef'];
  if (isPlainObject(fieldRef))
    errs.push(...validateEnvFieldRef(fieldRef, childPath(p, 'fieldRef')));
  for (const k of ['configMapKeyRef', 'secretKeyRef']) {
    const ref = from[k];
    if (isPlainObject(ref) && (ref['key'] ?? '') === '') {
      errs.push(required(childPath(childPath(p, k), 'key'), ''));
    }
  }
  const res = from['resourceFieldRef'];
  if (isPlainObject(res) && (res['resource'] ?? '') === '') {
    errs.push(required(childPath(childPath(p, 'resourceFieldRef'), 'resource'), ''));
  }
  return errs;
}

function validateEnvFieldRef(ref: Record<string, unknown>, p: string): FieldError[] {
  const apiVersion = ref['apiVersion'];
  const fieldPath = typeof ref['fieldPath'] === 'string' ? ref['fieldPath'] : '';
  if (apiVersion === undefined || apiVersion === '')
    return [required(childPath(p, 'apiVersion'), '')];
  if (fieldPath === '') return [required(childPath(p, 'fieldPath'), '')];
  const sub = /^(metadata\.(?:labels|annotations))\['(.*)'\]$/.exec(fieldPath);
  if (sub !== null) {
    const key = sub[2] ?? '';
    const check = sub[1] === 'metadata.annotations' ? key.toLowerCase() : key;
    return isQualifiedName(check).map((msg) => invalid(p, key, msg));
  }
  if (
    fieldPath === 'metadata.labels' ||
    fieldPath === 'metadata.annotations' ||
    !ENV_FIELD_PATHS.includes(fieldPath)
  ) {
    return [
      notSupported(
        childPath(p, 'fieldPath'),
        fieldPath,
        ENV_FIELD_PATHS.filter((f) => f !== 'metadata.annotations' && f !== 'metadata.labels'),
      ),
    ];
  }
  return [];
}

export function validateEnvFrom(
  envFrom: readonly Readonly<JsonObject>[],
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  envFrom.forEach((ef, i) => {
    const p = indexPath(path, i);
    const prefix = ef['prefix'];
    if (typeof prefix === 'string' && prefix !== '') {
      for (const msg of isEnvVarName(prefix))
        errs.push(invalid(childPath(p, 'prefix'), prefix, msg));
    }
    const refs = ['configMapRef', 'secretRef'].filter((k) => isPlainObject(ef[k]));
    if (refs.length === 0) {
      errs.push(invalid(p, '', 'must specify one of: `configMapRef` or `secretRef`'));
    } else if (refs.length > 1) {
      errs.push(invalid(p, '', 'may not have more than one field specified at a time'));
    }
    for (const k of refs) {
      const ref = ef[k];
      if (isPlainObject(ref) && (ref['name'] ?? '') === '')
        errs.push(required(childPath(childPath(p, k), 'name'), ''));
    }
  });
  return errs;
}
