/**
 * The CustomResourceDefinition conversion webhook's ConversionReview (apiextensions.k8s.io/v1,
 * https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/#webhook-request-and-response):
 * every object of the request converted to request.desiredAPIVersion, or a Failure naming the
 * first object that could not be, as controller-runtime's conversion webhook answers
 * (sigs.k8s.io/controller-runtime/pkg/webhook/conversion/conversion.go).
 */
import { isPlainObject } from '../encoding/json.js';
import { ConversionError, convertSidecarSet } from './sidecarset-conversion.js';

const CONVERSION_REVIEW_VERSION = 'apiextensions.k8s.io/v1' as const;

interface ConversionResult {
  status: 'Success' | 'Failure';
  message?: string;
}

interface ConversionReviewResponse {
  apiVersion: typeof CONVERSION_REVIEW_VERSION;
  kind: 'ConversionReview';
  response: {
    uid: string;
    convertedObjects: Record<string, unknown>[];
    result: ConversionResult;
  };
}

export type ConversionOutcome =
  | { ok: true; review: ConversionReviewResponse; converted: number }
  /** Not a ConversionReview the webhook can answer: HTTP 400 with this message. */
  | { ok: false; message: string };

export function reviewConversion(body: unknown): ConversionOutcome {
  if (!isPlainObject(body)) return { ok: false, message: 'the body is not a JSON object' };
  if (body['kind'] !== 'ConversionReview') {
    return { ok: false, message: `kind must be ConversionReview, not ${show(body['kind'])}` };
  }
  if (body['apiVersion'] !== CONVERSION_REVIEW_VERSION) {
    return {
      ok: false,
      message: `apiVersion ${show(body['apiVersion'])} is not supported (use ${CONVERSION_REVIEW_VERSION})`,
    };
  }
  const request = body['request'];
  if (!isPlainObject(request)) return { ok: false, message: 'the ConversionReview has no request' };
  const uid = request['uid'];
  if (typeof uid !== 'string' || uid === '')
    return { ok: false, message: 'request.uid is missing' };
  const desired = request['desiredAPIVersion'];
  const objects = request['objects'];
  const answer = (
    result: ConversionResult,
    convertedObjects: Record<string, unknown>[],
  ): ConversionOutcome => ({
    ok: true,
    converted: convertedObjects.length,
    review: {
      apiVersion: CONVERSION_REVIEW_VERSION,
      kind: 'ConversionReview',
      response: { uid, convertedObjects, result },
    },
  });
  if (typeof desired !== 'string') {
    return answer({ status: 'Failure', message: 'request.desiredAPIVersion is missing' }, []);
  }
  if (!Array.isArray(objects)) {
    return answer({ status: 'Failure', message: 'request.objects is not a list' }, []);
  }
  const converted: Record<string, unknown>[] = [];
  for (const [i, object] of objects.entries()) {
    try {
      converted.push(convertSidecarSet(object, desired));
    } catch (err) {
      if (!(err instanceof ConversionError)) throw err;
      return answer(
        { status: 'Failure', message: `objects[${i}]${nameOf(object)}: ${err.message}` },
        [],
      );
    }
  }
  return answer({ status: 'Success' }, converted);
}

function nameOf(object: unknown): string {
  const metadata = isPlainObject(object) ? object['metadata'] : undefined;
  const name = isPlainObject(metadata) ? metadata['name'] : undefined;
  return typeof name === 'string' ? ` (${name})` : '';
}

function show(value: unknown): string {
  return value === undefined ? 'nothing' : JSON.stringify(value);
}
