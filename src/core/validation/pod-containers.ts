/** Kubernetes container validation for the fake pod (validateInitContainers/validateContainers). */
import type { Container } from '../api/k8s-types.js';
import type { FieldError } from './field-error.js';
import {
  childPath,
  duplicate,
  forbidden,
  indexPath,
  invalid,
  notSupported,
  required,
} from './field-error.js';
import { isDNS1123Label } from './names-and-selectors.js';
import { validateContainerPorts } from './pod-ports.js';
import { validateLifecycle, validateProbe } from './pod-probes.js';
import { validateEnv, validateEnvFrom } from './pod-env.js';
import { validateVolumeDevices, validateVolumeMounts } from './pod-mounts.js';
import { validateResources } from './pod-resources.js';

const INIT_FORBIDDEN = ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'] as const;

export function validateContainers(
  initContainers: readonly Readonly<Container>[],
  containers: readonly Readonly<Container>[],
  volumes: ReadonlyMap<string, string>,
  root: string,
): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  initContainers.forEach((c, i) => {
    const p = indexPath(childPath(root, 'initContainers'), i);
    errs.push(...validateName(c.name, p, names));
    errs.push(...validateCommon(c, volumes, p));
    const restartable = c.restartPolicy === 'Always';
    if (c.restartPolicy !== undefined && !restartable) {
      errs.push(notSupported(childPath(p, 'restartPolicy'), c.restartPolicy, ['Always']));
    }
    for (const f of INIT_FORBIDDEN) {
      if (c[f] === undefined) continue;
      if (restartable) {
        if (f !== 'readinessProbe') errs.push(...validateProbeOrLifecycle(c, f, p));
        else errs.push(...validateProbe(c.readinessProbe, 'readinessProbe', childPath(p, f)));
      } else {
        errs.push(
          forbidden(
            childPath(p, f),
            'may not be set for init containers without restartPolicy=Always',
          ),
        );
      }
    }
  });
  containers.forEach((c, i) => {
    const p = indexPath(childPath(root, 'containers'), i);
    errs.push(...validateName(c.name, p, names));
    errs.push(...validateCommon(c, volumes, p));
    if (c.restartPolicy !== undefined) {
      errs.push(forbidden(childPath(p, 'restartPolicy'), 'may not be set for non-init containers'));
    }
    for (const f of INIT_FORBIDDEN) errs.push(...validateProbeOrLifecycle(c, f, p));
  });
  return errs;
}

function validateProbeOrLifecycle(
  c: Readonly<Container>,
  f: (typeof INIT_FORBIDDEN)[number],
  p: string,
): FieldError[] {
  return f === 'lifecycle'
    ? validateLifecycle(c.lifecycle, childPath(p, f))
    : validateProbe(c[f], f, childPath(p, f));
}

function validateName(name: string, p: string, seen: Set<string>): FieldError[] {
  const np = childPath(p, 'name');
  if (name === '') return [required(np, '')];
  const errs = isDNS1123Label(name).map((msg) => invalid(np, name, msg));
  if (seen.has(name)) errs.push(duplicate(np, name));
  seen.add(name);
  return errs;
}

function validateCommon(
  c: Readonly<Container>,
  volumes: ReadonlyMap<string, string>,
  p: string,
): FieldError[] {
  const errs: FieldError[] = [];
  const image = c.image ?? '';
  if (image === '') errs.push(required(childPath(p, 'image'), ''));
  else if (image.trim() !== image) {
    errs.push(
      invalid(childPath(p, 'image'), image, 'must not have leading or trailing whitespace'),
    );
  }
  errs.push(...validateContainerPorts(c.ports ?? [], childPath(p, 'ports')));
  errs.push(...validateEnv(c.env ?? [], childPath(p, 'env')));
  errs.push(...validateEnvFrom(c.envFrom ?? [], childPath(p, 'envFrom')));
  const devicePaths = new Set((c.volumeDevices ?? []).map((d) => d.devicePath));
  const mounts = c.volumeMounts ?? [];
  errs.push(...validateVolumeMounts(mounts, volumes, devicePaths, c, childPath(p, 'volumeMounts')));
  errs.push(
    ...validateVolumeDevices(c.volumeDevices ?? [], volumes, mounts, childPath(p, 'volumeDevices')),
  );
  errs.push(...validateResources(c.resources, childPath(p, 'resources')));
  return errs;
}
