/** Container port rules (validateContainerPorts) and the IANA_SVC_NAME check. */
import type { ContainerPort } from '../api/k8s-types.js';
import type { FieldError } from './field-error.js';
import { childPath, duplicate, indexPath, invalid, required } from './field-error.js';
import { maxLenError } from './names-and-selectors.js';

const PORT_RANGE_ERROR = 'must be between 1 and 65535, inclusive';

export function isValidPortName(name: string): string[] {
  const errs: string[] = [];
  if (name.length > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(name)) {
    errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  }
  if (!/[a-z]/.test(name)) errs.push('must contain at least one letter (a-z)');
  if (name.includes('--')) errs.push('must not contain consecutive hyphens');
  if (name.startsWith('-') || name.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}

export function validatePortNumber(port: unknown, p: string): FieldError[] {
  if (port === undefined || port === 0) return [required(p, '')];
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    return [invalid(p, port, PORT_RANGE_ERROR)];
  }
  return [];
}

export function validateContainerPorts(
  ports: readonly Readonly<ContainerPort>[],
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const p = indexPath(path, i);
    const name = port.name ?? '';
    if (name !== '') {
      for (const msg of isValidPortName(name)) errs.push(invalid(childPath(p, 'name'), name, msg));
      if (names.has(name)) errs.push(duplicate(childPath(p, 'name'), name));
      else names.add(name);
    }
    errs.push(...validatePortNumber(port.containerPort, childPath(p, 'containerPort')));
    if (port.hostPort !== undefined && port.hostPort !== 0) {
      errs.push(...validatePortNumber(port.hostPort, childPath(p, 'hostPort')));
    }
  });
  return errs;
}
