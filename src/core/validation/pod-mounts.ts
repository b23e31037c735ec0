/** volumeMounts / volumeDevices rules of Kubernetes container validation. */
import type { Container, VolumeDevice, VolumeMount } from '../api/k8s-types.js';
import type { FieldError } from './field-error.js';
import { childPath, forbidden, indexPath, invalid, notFound, required } from './field-error.js';
import { isPlainObject } from '../encoding/json.js';

const BLOCK_SOURCES = new Set(['persistentVolumeClaim', 'ephemeral']);

function hasBacksteps(path: string): boolean {
  return path.split(/[\\/]/).includes('..');
}

/** validateLocalDescendingPath: relative and without '..'. */
function validateLocalDescendingPath(value: string, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (value.startsWith('/')) errs.push(invalid(p, value, 'must be a relative path'));
  if (hasBacksteps(value)) errs.push(invalid(p, value, "must not contain '..'"));
  return errs;
}

export function validateVolumeMounts(
  mounts: readonly Readonly<VolumeMount>[],
  volumes: ReadonlyMap<string, string>,
  devicePaths: ReadonlySet<string>,
  container: Readonly<Container>,
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  const mountPaths = new Set<string>();
  mounts.forEach((m, i) => {
    const p = indexPath(path, i);
    if (m.name === '') errs.push(required(childPath(p, 'name'), ''));
    else if (!volumes.has(m.name)) errs.push(notFound(childPath(p, 'name'), m.name));
    const mp = m.mountPath;
    if (mp === '') errs.push(required(childPath(p, 'mountPath'), ''));
    if (mountPaths.has(mp)) errs.push(invalid(childPath(p, 'mountPath'), mp, 'must be unique'));
    mountPaths.add(mp);
    if (devicePaths.has(mp)) {
      errs.push(
        invalid(childPath(p, 'mountPath'), mp, 'must not already exist as a path in volumeDevices'),
      );
    }
    if (m.subPath !== undefined && m.subPath !== '') {
      errs.push(...validateLocalDescendingPath(m.subPath, childPath(p, 'subPath')));
    }
    if (m.subPathExpr !== undefined && m.subPathExpr !== '') {
      if (m.subPath !== undefined && m.subPath !== '') {
        errs.push(
          invalid(
            childPath(p, 'subPathExpr'),
            m.subPathExpr,
            'subPathExpr and subPath are mutually exclusive',
          ),
        );
      }
      errs.push(...validateLocalDescendingPath(m.subPathExpr, childPath(p, 'subPathExpr')));
    }
    errs.push(
      ...validatePropagation(m.mountPropagation, container, childPath(p, 'mountPropagation')),
    );
  });
  return errs;
}

function validatePropagation(
  mode: string | undefined,
  c: Readonly<Container>,
  p: string,
): FieldError[] {
  if (mode === undefined) return [];
  const sc = c.securityContext;
  if (mode === 'Bidirectional' && !(isPlainObject(sc) && sc['privileged'] === true)) {
    return [
      forbidden(p, 'Bidirectional mount propagation is available only to privileged containers'),
    ];
  }
  return [];
}

export function validateVolumeDevices(
  devices: readonly Readonly<VolumeDevice>[],
  volumes: ReadonlyMap<string, string>,
  mounts: readonly Readonly<VolumeMount>[],
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  const paths = new Set<string>();
  const mountNames = new Set(mounts.map((m) => m.name));
  const mountPaths = new Set(mounts.map((m) => m.mountPath));
  devices.forEach((d, i) => {
    const p = indexPath(path, i);
    const np = childPath(p, 'name');
    const dp = childPath(p, 'devicePath');
    const source = volumes.get(d.name);
    if (d.name === '') errs.push(required(np, ''));
    if (names.has(d.name)) errs.push(invalid(np, d.name, 'must be unique'));
    names.add(d.name);
    if (source === undefined) errs.push(notFound(np, d.name));
    else if (!BLOCK_SOURCES.has(source)) {
      errs.push(
        invalid(
          np,
          d.name,
          'can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode',
        ),
      );
    }
    if (d.devicePath === '') errs.push(required(dp, ''));
    if (paths.has(d.devicePath)) errs.push(invalid(dp, d.devicePath, 'must be unique'));
    if (d.devicePath !== '' && hasBacksteps(d.devicePath)) {
      errs.push(invalid(dp, d.devicePath, "can not contain backsteps ('..')"));
    } else {
      paths.add(d.devicePath);
    }
    if (mountNames.has(d.name))
      errs.push(invalid(np, d.name, 'must not already exist in volumeMounts'));
    if (mountPaths.has(d.devicePath)) {
      errs.push(invalid(dp, d.devicePath, 'must not already exist as a path in volumeMounts'));
    }
  });
  return errs;
}
