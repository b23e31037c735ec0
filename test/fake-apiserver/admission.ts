import { randomUUID } from 'node:crypto';
import { ApiError } from './errors.js';
import { isJsonObject } from './json.js';
import type { JsonObject, JsonValue } from './json.js';
import { applyJsonPatch } from './patch.js';
import type { ResourceDef } from './resources.js';
import type { KubeObject } from './types.js';

export interface AdmissionAttributes {
  readonly operation: 'CREATE' | 'UPDATE';
  readonly resource: ResourceDef;
  readonly namespace: string;
  /** '' on a CREATE that relies on generateName, as the API server sends it. */
  readonly name: string;
  readonly object: KubeObject;
  readonly oldObject: KubeObject | undefined;
  readonly dryRun: boolean;
}

/**
 * Mutating admission: returns the object to store (or undefined to keep it); throws an ApiError
 * to deny. Runs for create, update and patch of a main resource (not /status), before storage.
 */
export type AdmissionHook = (attributes: AdmissionAttributes) => Promise<KubeObject | undefined>;

function denial(response: JsonObject): ApiError {
  const status = isJsonObject(response['status']) ? response['status'] : {};
  const code = typeof status['code'] === 'number' ? status['code'] : 403;
  const message = typeof status['message'] === 'string' ? status['message'] : 'denied';
  return new ApiError(code, 'Forbidden', `admission webhook denied the request: ${message}`);
}

/**
 * An AdmissionHook that speaks AdmissionReview admission.k8s.io/v1 as the API server does:
 * `send` delivers the review (over HTTPS to a webhook server, or straight to a handler) and
 * returns the answer; its base64 JSONPatch is applied, or `allowed: false` denies the request.
 */
export function admissionReviewHook(
  send: (review: JsonObject) => Promise<JsonValue>,
  match: (attributes: AdmissionAttributes) => boolean = () => true,
): AdmissionHook {
  return async (attributes) => {
    if (!match(attributes)) return undefined;
    const { resource } = attributes;
    const uid = randomUUID();
    const kind = { group: resource.group, version: resource.version, kind: resource.kind };
    const gvr = { group: resource.group, version: resource.version, resource: resource.resource };
    const review: JsonObject = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid,
        kind,
        resource: gvr,
        requestKind: kind,
        requestResource: gvr,
        name: attributes.name,
        namespace: attributes.namespace,
        operation: attributes.operation,
        userInfo: { username: 'system:fake-apiserver', groups: ['system:masters'] },
        object: attributes.object,
        oldObject: attributes.oldObject ?? null,
        dryRun: attributes.dryRun,
        options: {
          apiVersion: 'meta.k8s.io/v1',
          kind: attributes.operation === 'CREATE' ? 'CreateOptions' : 'UpdateOptions',
        },
      },
    };
    const answer = await send(review);
    const response = isJsonObject(answer) ? answer['response'] : undefined;
    if (!isJsonObject(response) || response['uid'] !== uid) {
      throw new ApiError(
        500,
        'InternalError',
        'admission webhook answered without a matching response.uid',
      );
    }
    if (response['allowed'] !== true) throw denial(response);
    const patch = response['patch'];
    if (typeof patch !== 'string') return undefined;
    const ops = JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as JsonValue;
    const patched = applyJsonPatch(attributes.object, ops);
    return { ...patched, metadata: isJsonObject(patched['metadata']) ? patched['metadata'] : {} };
  };
}
