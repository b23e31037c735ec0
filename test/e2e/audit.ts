/**
 * Reading the control plane's audit log (test/kube-fixture/control-plane.ts logs every request a
 * ServiceAccount makes) and the RBAC rules our manifests grant, to prove the rules are exactly
 * what the code uses.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { parseAllDocuments } from 'yaml';

export interface AuditEvent {
  readonly verb: string;
  readonly requestURI: string;
  /** RFC 3339 with microseconds. */
  readonly requestReceivedTimestamp?: string;
  readonly user: { readonly username: string };
  readonly objectRef?: {
    readonly apiGroup?: string;
    readonly resource?: string;
    readonly subresource?: string;
    readonly namespace?: string;
    readonly name?: string;
  };
  readonly responseStatus?: { readonly code?: number; readonly message?: string };
  readonly requestObject?: unknown;
}

export async function readAudit(file: string, username: string): Promise<AuditEvent[]> {
  const text = await readFile(file, 'utf8');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as AuditEvent)
    .filter((e) => e.user.username === username);
}

/** `group/resource[/subresource] verb`, the unit RBAC grants ('' is the core group). */
export function permission(group: string, resource: string, verb: string): string {
  return `${group === '' ? 'core' : group}/${resource} ${verb}`;
}

export function usedPermission(event: AuditEvent): string | undefined {
  const ref = event.objectRef;
  if (ref?.resource === undefined) return undefined; // /api, /apis, /version discovery
  const resource = ref.subresource ? `${ref.resource}/${ref.subresource}` : ref.resource;
  return permission(ref.apiGroup ?? '', resource, event.verb);
}

interface Rule {
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly verbs?: readonly string[];
}

const manifests = new URL('../../manifests/', import.meta.url).pathname;

/** The files with our ClusterRoles and Roles: base's, and those of the self-managed certificates. */
const RBAC_FILES = [
  'base/rbac/cluster-role.yaml',
  'base/rbac/leader-election-role.yaml',
  'base/rbac/revisions-role.yaml',
  'certificates/role.yaml',
  'certificates/cluster-role.yaml',
];

/** Every permission the manifests' ClusterRoles and Roles grant. */
export async function grantedPermissions(): Promise<Set<string>> {
  const granted = new Set<string>();
  for (const file of RBAC_FILES) {
    for (const doc of parseAllDocuments(await readFile(join(manifests, file), 'utf8'))) {
      const rules = (doc.toJS() as { rules?: Rule[] }).rules ?? [];
      for (const rule of rules) {
        for (const group of rule.apiGroups ?? []) {
          for (const resource of rule.resources ?? []) {
            for (const verb of rule.verbs ?? []) granted.add(permission(group, resource, verb));
          }
        }
      }
    }
  }
  return granted;
}
