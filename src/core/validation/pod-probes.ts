/** Probe and lifecycle-handler rules of Kubernetes container validation. */
import type { FieldError } from './field-error.js';
import { childPath, forbidden, invalid, required } from './field-error.js';
import { isPlainObject } from '../encoding/json.js';
import { isValidPortName, validatePortNumber } from './pod-ports.js';

const PROBE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'] as const;
const LIFECYCLE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'sleep'] as const;

export type ProbeKind = 'livenessProbe' | 'readinessProbe' | 'startupProbe';

/**
 * Kubernetes accepts 0 for these (the API server defaults 0 away); after defaulting a 0 can only
 * mean a bypassed default, so we require ≥ 1 like the effective pod does.
 */
const AT_LEAST_ONE = ['timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'];

export function validateProbe(probe: unknown, kind: ProbeKind, p: string): FieldError[] {
  if (!isPlainObject(probe)) return [];
  const errs = validateHandler(probe, PROBE_HANDLERS, p);
  const delay = probe['initialDelaySeconds'];
  if (typeof delay === 'number' && delay < 0) {
    errs.push(
      invalid(childPath(p, 'initialDelaySeconds'), delay, 'must be greater than or equal to 0'),
    );
  }
  for (const f of AT_LEAST_ONE) {
    const v = probe[f];
    if (typeof v === 'number' && v < 1) {
      errs.push(
        invalid(
          childPath(p, f),
          v,
          v < 0 ? 'must be greater than or equal to 0' : 'must be greater than or equal to 1',
        ),
      );
    }
  }
  const success = probe['successThreshold'];
  if (kind !== 'readinessProbe' && typeof success === 'number' && success > 1) {
    errs.push(invalid(childPath(p, 'successThreshold'), success, 'must be 1'));
  }
  const grace = probe['terminationGracePeriodSeconds'];
  if (typeof grace === 'number') {
    if (kind === 'readinessProbe') {
      errs.push(
        invalid(
          childPath(p, 'terminationGracePeriodSeconds'),
          grace,
          'must not be set for readinessProbes',
        ),
      );
    } else if (grace <= 0) {
      errs.push(
        invalid(childPath(p, 'terminationGracePeriodSeconds'), grace, 'must be greater than 0'),
      );
    }
  }
  return errs;
}

export function validateLifecycle(lifecycle: unknown, p: string): FieldError[] {
  if (!isPlainObject(lifecycle)) return [];
  const errs: FieldError[] = [];
  for (const hook of ['postStart', 'preStop']) {
    const h = lifecycle[hook];
    if (isPlainObject(h)) errs.push(...validateHandler(h, LIFECYCLE_HANDLERS, childPath(p, hook)));
  }
  return errs;
}

function validateHandler(
  handler: Record<string, unknown>,
  kinds: readonly string[],
  p: string,
): FieldError[] {
  const present = kinds.filter((k) => handler[k] !== undefined && handler[k] !== null);
  const [first, ...extra] = present;
  if (first === undefined) return [required(p, 'must specify a handler type')];
  const errs = extra.map((k) =>
    forbidden(childPath(p, k), 'may not specify more than 1 handler type'),
  );
  const action = handler[first];
  const ap = childPath(p, first);
  if (!isPlainObject(action)) return errs;
  switch (first) {
    case 'exec':
      if (!Array.isArray(action['command']) || action['command'].length === 0) {
        errs.push(required(childPath(ap, 'command'), ''));
      }
      break;
    case 'httpGet':
    case 'tcpSocket':
      errs.push(...validatePortNumOrName(action['port'], childPath(ap, 'port')));
      break;
    case 'grpc':
      errs.push(...validatePortNumber(action['port'], childPath(ap, 'port')));
      break;
    default: {
      const seconds = action['seconds'];
      if (typeof seconds === 'number' && seconds < 0) {
        errs.push(invalid(childPath(ap, 'seconds'), seconds, 'must be greater than or equal to 0'));
      }
    }
  }
  return errs;
}

function validatePortNumOrName(port: unknown, p: string): FieldError[] {
  if (typeof port === 'number') return validatePortNumber(port, p);
  if (typeof port === 'string') {
    if (/^\d+$/.test(port)) return validatePortNumber(Number(port), p);
    return isValidPortName(port).map((msg) => invalid(p, port, msg));
  }
  return [required(p, '')];
}
