/** SidecarSet-only container rules: inject/share policies, transferEnv fieldRef, resourcesPolicy. */
import type { SidecarContainer, TransferEnvVar } from '../api/sidecarset-types.js';
import type { ObjectFieldSelector } from '../api/k8s-types.js';
import type { FieldError } from './field-error.js';
import { childPath, indexPath, invalid, required } from './field-error.js';
import { POD_INJECT_POLICIES, SHARE_VOLUME_POLICIES } from '../api/sidecarset-types.js';
import { isQualifiedName } from './names-and-selectors.js';
import { checkResourceExpression } from '../inject/resource-expression.js';
import { compileGoRegexp } from '../encoding/go-regexp.js';

const TRANSFER_FIELD_PATHS = ['metadata.annotations', 'metadata.labels', 'metadata.name'];

export function validateInitSidecar(c: Readonly<SidecarContainer>, p: string): FieldError[] {
  if (c.resourcesPolicy === undefined) return [];
  const errs: FieldError[] = [];
  const rp = childPath(p, 'resourcesPolicy');
  if (c.restartPolicy !== 'Always') {
    errs.push(
      invalid(
        rp,
        c.resourcesPolicy,
        'resourcesPolicy is only supported for containers with RestartPolicy Always',
      ),
    );
  }
  errs.push(...validateResourcesPolicy(c, rp));
  return errs;
}

export function validateSidecar(c: Readonly<SidecarContainer>, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!(POD_INJECT_POLICIES as readonly unknown[]).includes(c.podInjectPolicy)) {
    errs.push(
      invalid(
        childPath(p, 'podInjectPolicy'),
        c.podInjectPolicy ?? '',
        'unsupported pod inject policy',
      ),
    );
  }
  if (!(SHARE_VOLUME_POLICIES as readonly unknown[]).includes(c.shareVolumePolicy?.type)) {
    errs.push(
      invalid(
        childPath(p, 'shareVolumePolicy'),
        c.shareVolumePolicy ?? {},
        'unsupported share volume policy',
      ),
    );
  }
  // No default and no upstream check; an unknown value would silently mean "disabled".
  const devicePolicy = c.shareVolumeDevicePolicy;
  if (
    devicePolicy !== undefined &&
    !(SHARE_VOLUME_POLICIES as readonly unknown[]).includes(devicePolicy.type)
  ) {
    errs.push(
      invalid(
        childPath(p, 'shareVolumeDevicePolicy'),
        devicePolicy,
        'unsupported share volume policy',
      ),
    );
  }
  (c.transferEnv ?? []).forEach((t, i) => {
    errs.push(...validateTransferEnv(t, indexPath(childPath(p, 'transferEnv'), i)));
  });
  if (c.resourcesPolicy !== undefined) {
    errs.push(...validateResourcesPolicy(c, childPath(p, 'resourcesPolicy')));
  }
  return errs;
}

function validateTransferEnv(t: Readonly<TransferEnvVar>, p: string): FieldError[] {
  const ref = t.sourceContainerNameFrom?.fieldRef;
  if (ref === undefined) return [];
  return validateFieldRef(ref, childPath(childPath(p, 'sourceContainerNameFrom'), 'fieldRef'));
}

/** OpenKruise's validateObjectFieldSelector with ConvertDownwardAPIFieldLabel. */
function validateFieldRef(ref: Readonly<ObjectFieldSelector>, p: string): FieldError[] {
  const apiVersion = ref.apiVersion ?? '';
  if (apiVersion === '') return [required(childPath(p, 'apiVersion'), '')];
  if (ref.fieldPath === '') return [required(childPath(p, 'fieldPath'), '')];
  const fp = childPath(p, 'fieldPath');
  if (apiVersion !== 'v1') {
    return [
      invalid(
        fp,
        ref.fieldPath,
        `error converting fieldPath: unsupported pod version: ${apiVersion}`,
      ),
    ];
  }
  const sub = /^(.+)\['(.*)'\]$/.exec(ref.fieldPath);
  if (sub === null) {
    return [
      invalid(
        fp,
        ref.fieldPath,
        `error converting fieldPath: field label not supported: ${ref.fieldPath}`,
      ),
    ];
  }
  const [, path = '', key = ''] = sub;
  if (path === 'metadata.annotations')
    return isQualifiedName(key.toLowerCase()).map((m) => invalid(p, key, m));
  if (path === 'metadata.labels') return isQualifiedName(key).map((m) => invalid(p, key, m));
  if (!TRANSFER_FIELD_PATHS.includes(path)) {
    return [
      invalid(fp, ref.fieldPath, `error converting fieldPath: field path not supported: ${path}`),
    ];
  }
  /* c8 ignore next -- metadata.name['x'] is the only remaining subscripted path */
  return [invalid(p, path, 'does not support subscript')];
}

function hasEntries(v: unknown): boolean {
  return typeof v === 'object' && v !== null && Object.keys(v).length > 0;
}

function validateResourcesPolicy(c: Readonly<SidecarContainer>, p: string): FieldError[] {
  const policy = c.resourcesPolicy ?? {};
  if (hasEntries(c.resources?.['limits']) || hasEntries(c.resources?.['requests'])) {
    return [invalid(p, policy, 'resourcesPolicy and resources cannot be configured together')];
  }
  // targetContainersMode is left to the schema's enum, which every caller checks first (as
  // OpenKruise leaves it to its CRD), so the rules count errors as OpenKruise's webhook does.
  const errs: FieldError[] = [];
  const regex = policy.targetContainersNameRegex ?? '';
  const rp = childPath(p, 'targetContainersNameRegex');
  if (regex === '') errs.push(required(rp, 'invalid empty regex'));
  else {
    const compiled = compileGoRegexp(regex);
    if ('error' in compiled) {
      errs.push(invalid(rp, regex, `invalid regex pattern: ${compiled.error}`));
    }
  }
  const expr = policy.resourcesExpr ?? {};
  const ep = childPath(p, 'resourcesExpr');
  if (expr.limits === undefined && expr.requests === undefined) {
    errs.push(invalid(ep, expr, 'at least one of limits or requests must be configured'));
    return errs;
  }
  for (const kind of ['limits', 'requests'] as const) {
    const e = expr[kind];
    for (const variable of ['cpu', 'memory'] as const) {
      const text = e?.[variable] ?? '';
      const err = checkResourceExpression(text, variable);
      if (err !== undefined)
        errs.push(invalid(childPath(childPath(ep, kind), variable), text, err));
    }
  }
  return errs;
}
