/**
 * The JSON patch that puts a scope on the pod webhook of a MutatingWebhookConfiguration, touching
 * only what the scope owns (docs/adr/0012-scoped-pod-webhook.md): our matchCondition (others are
 * kept), and the requirements we add to the installer's namespaceSelector and objectSelector,
 * recorded in an annotation so that the next write removes exactly those. The caBundle writer
 * (src/k8s/certificates.ts) patches other paths of the same object; both guard each index with a
 * `test` of the webhook's name, and ours replaces the resourceVersion read, so a concurrent change
 * to the selectors is a 409 and a fresh read rather than a lost update.
 */
import { isPlainObject, sortedJson } from '../encoding/json.js';
import type { LabelSelector, LabelSelectorRequirement } from '../api/k8s-types.js';
import type { MatchCondition } from './cel.js';
import { SCOPE_CONDITION_NAME, scopeMatchConditions } from './cel.js';
import type { ScopeRequirement, WebhookScope } from './webhook-scope.js';

/** The annotation recording, per webhook name, the selector requirements we added. */
export const SCOPE_ANNOTATION = 'sidecarset.kruise.io/webhook-scope';

/** The webhook path whose entries get the scope. */
const POD_WEBHOOK_PATH = '/mutate-pods';

export interface ScopedWebhook {
  name: string;
  clientConfig?: { url?: string; service?: { path?: string } };
  matchConditions?: MatchCondition[];
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
}

export interface ScopedConfiguration {
  metadata?: { resourceVersion?: string; annotations?: Record<string, string> };
  webhooks?: ScopedWebhook[];
}

interface Added {
  namespaceSelector: ScopeRequirement[];
  objectSelector: ScopeRequirement[];
}

export type JsonPatchOp =
  { op: 'test' | 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

/**
 * The patch giving the pod webhook(s) `scope`, or, with `undefined`, removing all that a scope had
 * added. Empty when the configuration already says that.
 */
export function scopePatch(
  config: ScopedConfiguration,
  scope: WebhookScope | undefined,
): JsonPatchOp[] {
  const webhooks = config.webhooks ?? [];
  const recorded = readRecord(config.metadata?.annotations?.[SCOPE_ANNOTATION]);
  const ours = scope === undefined ? [] : scopeMatchConditions(scope);
  const adding: Added = {
    namespaceSelector: [...(scope?.namespaceSelector ?? [])],
    objectSelector: [...(scope?.objectSelector ?? [])],
  };
  const ops: JsonPatchOp[] = [];
  const record: Record<string, Added> = {};
  webhooks.forEach((webhook, i) => {
    if (!isPodWebhook(webhook)) return;
    const before = recorded[webhook.name] ?? { namespaceSelector: [], objectSelector: [] };
    const conditions = [
      ...(webhook.matchConditions ?? []).filter((c) => c.name !== SCOPE_CONDITION_NAME),
      ...ours,
    ];
    const fields = {
      matchConditions: conditions,
      namespaceSelector: replaced(
        webhook.namespaceSelector,
        before.namespaceSelector,
        adding.namespaceSelector,
      ),
      objectSelector: replaced(
        webhook.objectSelector,
        before.objectSelector,
        adding.objectSelector,
      ),
    };
    const changed = (Object.keys(fields) as (keyof typeof fields)[]).filter(
      (field) => !sameJson(normalized(webhook[field]), normalized(fields[field])),
    );
    if (scope !== undefined) record[webhook.name] = adding;
    if (changed.length === 0) return;
    ops.push({ op: 'test', path: `/webhooks/${String(i)}/name`, value: webhook.name });
    for (const field of changed) {
      ops.push({ op: 'add', path: `/webhooks/${String(i)}/${field}`, value: fields[field] });
    }
  });
  const annotation = Object.keys(record).length === 0 ? undefined : JSON.stringify(record);
  const annotations = config.metadata?.annotations;
  if (annotation !== annotations?.[SCOPE_ANNOTATION]) {
    const path = `/metadata/annotations/${escapePointer(SCOPE_ANNOTATION)}`;
    if (annotation === undefined) ops.push({ op: 'remove', path });
    else if (annotations === undefined)
      ops.push({
        op: 'add',
        path: '/metadata/annotations',
        value: { [SCOPE_ANNOTATION]: annotation },
      });
    else ops.push({ op: 'add', path, value: annotation });
  }
  if (ops.length === 0) return [];
  const resourceVersion = config.metadata?.resourceVersion ?? '';
  return [{ op: 'replace', path: '/metadata/resourceVersion', value: resourceVersion }, ...ops];
}

/**
 * The pod webhook's selectors as the installer wrote them (what a scope added taken out): which
 * pods it is configured to see at all. The first pod webhook's; empty when there is none.
 */
export function installerSelectors(config: ScopedConfiguration): {
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
} {
  const recorded = readRecord(config.metadata?.annotations?.[SCOPE_ANNOTATION]);
  const webhook = (config.webhooks ?? []).find(isPodWebhook);
  if (webhook === undefined) return {};
  const added = recorded[webhook.name] ?? { namespaceSelector: [], objectSelector: [] };
  return {
    namespaceSelector: replaced(webhook.namespaceSelector, added.namespaceSelector, []),
    objectSelector: replaced(webhook.objectSelector, added.objectSelector, []),
  };
}

export function isPodWebhook(webhook: ScopedWebhook): boolean {
  const { url, service } = webhook.clientConfig ?? {};
  if (service?.path !== undefined) return service.path === POD_WEBHOOK_PATH;
  return url !== undefined && new URL(url, 'https://x').pathname === POD_WEBHOOK_PATH;
}

/** The installer's selector: what is there less what we added last time, plus what we add now. */
function replaced(
  selector: LabelSelector | undefined,
  before: readonly ScopeRequirement[],
  now: readonly ScopeRequirement[],
): LabelSelector {
  const ours = new Set(before.map((r) => sortedJson(asScopeRequirement(r))));
  const theirs = (selector?.matchExpressions ?? []).filter(
    (r) => !ours.has(sortedJson(asScopeRequirement(r))),
  );
  const matchExpressions = [...theirs, ...now.map((r) => ({ ...r }))];
  return {
    ...(selector?.matchLabels === undefined ? {} : { matchLabels: selector.matchLabels }),
    ...(matchExpressions.length === 0 ? {} : { matchExpressions }),
  };
}

function asScopeRequirement(r: LabelSelectorRequirement | ScopeRequirement): unknown {
  return r.values === undefined
    ? { key: r.key, operator: r.operator }
    : { key: r.key, operator: r.operator, values: r.values };
}

/** Absent and empty are the same to the API server (it defaults selectors to `{}`). */
function normalized(value: unknown): unknown {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return value.length === 0 ? undefined : value;
  if (typeof value === 'object' && value !== null && Object.keys(value).length === 0) {
    return undefined;
  }
  return value;
}

function sameJson(a: unknown, b: unknown): boolean {
  return sortedJson(a) === sortedJson(b);
}

/** Our record, or nothing of it when unreadable (then our old requirements stay: wider, not narrower). */
function readRecord(value: string | undefined): Record<string, Added> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value ?? '{}');
  } catch {
    return {};
  }
  if (!isPlainObject(parsed)) return {};
  const record: Record<string, Added> = {};
  for (const [name, added] of Object.entries(parsed)) {
    if (!isPlainObject(added)) continue;
    record[name] = {
      namespaceSelector: requirementsIn(added['namespaceSelector']),
      objectSelector: requirementsIn(added['objectSelector']),
    };
  }
  return record;
}

function requirementsIn(value: unknown): ScopeRequirement[] {
  return Array.isArray(value)
    ? value.filter(isPlainObject).map((r) => r as unknown as ScopeRequirement)
    : [];
}

function escapePointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}
