/**
 * SidecarSet conversion between apps.kruise.io/v1alpha1 and v1beta1, as OpenKruise converts
 * (apis/apps/v1alpha1/sidecarset_conversion.go), on plain JSON so that every field either
 * version shares (status fields included, whatever they are) passes through untouched:
 *
 * - v1alpha1 spec.namespace becomes a v1beta1 namespaceSelector on kubernetes.io/metadata.name
 *   (the namespace wins over a namespaceSelector, which the v1alpha1 validation refuses anyway);
 * - the v1alpha1 label apps.kruise.io/sidecarset-custom-version becomes v1beta1
 *   spec.customVersion, and back.
 *
 * Unlike OpenKruise, v1alpha1 → v1beta1 → v1alpha1 gives spec.namespace back, not a
 * namespaceSelector: the namespace is kept in the annotation SIDECARSET_V1ALPHA1_NAMESPACE, and
 * restored while the namespaceSelector is still the one it became (docs/adr/0015).
 */
import {
  NAMESPACE_NAME_LABEL,
  SIDECARSET_CUSTOM_VERSION_LABEL,
  SIDECARSET_V1ALPHA1_NAMESPACE,
} from '../api/annotations.js';
import { cloneJson, deepEqual, isPlainObject } from '../encoding/json.js';
import type { SidecarSet, SidecarSetApiVersion } from '../api/sidecarset-types.js';
import { V1BETA1, isSidecarSetApiVersion } from '../api/sidecarset-types.js';

type Json = Record<string, unknown>;

export class ConversionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConversionError';
  }
}

/** The SidecarSet in `desired`; a copy even when it already is. Throws ConversionError. */
export function convertSidecarSet(object: unknown, desired: string): Json {
  if (!isPlainObject(object)) throw new ConversionError('the object is not a JSON object');
  if (object['kind'] !== 'SidecarSet') {
    throw new ConversionError(`cannot convert kind ${JSON.stringify(object['kind'])}`);
  }
  const from = object['apiVersion'];
  if (!isSidecarSetApiVersion(from)) {
    throw new ConversionError(`cannot convert from apiVersion ${JSON.stringify(from)}`);
  }
  if (!isSidecarSetApiVersion(desired)) {
    throw new ConversionError(`cannot convert to apiVersion ${JSON.stringify(desired)}`);
  }
  const out = cloneJson(object);
  if (from !== desired) {
    if (desired === V1BETA1) toV1beta1(out);
    else toV1alpha1(out);
  }
  out['apiVersion'] = desired satisfies SidecarSetApiVersion;
  return out;
}

function toV1beta1(obj: Json): void {
  const [metadata, spec] = parts(obj);
  const annotations = objectAt(metadata, 'annotations');
  delete annotations[SIDECARSET_V1ALPHA1_NAMESPACE];
  const namespace = spec['namespace'];
  delete spec['namespace'];
  if (typeof namespace === 'string' && namespace !== '') {
    spec['namespaceSelector'] = namespaceSelectorFor(namespace);
    annotations[SIDECARSET_V1ALPHA1_NAMESPACE] = namespace;
  }
  const labels = objectAt(metadata, 'labels');
  if (SIDECARSET_CUSTOM_VERSION_LABEL in labels) {
    const version = labels[SIDECARSET_CUSTOM_VERSION_LABEL];
    delete labels[SIDECARSET_CUSTOM_VERSION_LABEL];
    if (typeof version === 'string' && version !== '') spec['customVersion'] = version;
    else delete spec['customVersion'];
  }
  tidy(obj);
}

function toV1alpha1(obj: Json): void {
  const [metadata, spec] = parts(obj);
  const annotations = objectAt(metadata, 'annotations');
  const namespace = annotations[SIDECARSET_V1ALPHA1_NAMESPACE];
  delete annotations[SIDECARSET_V1ALPHA1_NAMESPACE];
  if (
    typeof namespace === 'string' &&
    namespace !== '' &&
    deepEqual(spec['namespaceSelector'], namespaceSelectorFor(namespace))
  ) {
    delete spec['namespaceSelector'];
    spec['namespace'] = namespace;
  }
  const version = spec['customVersion'];
  delete spec['customVersion'];
  if (typeof version === 'string' && version !== '') {
    objectAt(metadata, 'labels')[SIDECARSET_CUSTOM_VERSION_LABEL] = version;
  }
  tidy(obj);
}

/** metadata and spec, made objects for the conversion (tidy removes them again if left empty). */
function parts(obj: Json): [Json, Json] {
  return [objectAt(obj, 'metadata'), objectAt(obj, 'spec')];
}

/** Drops the maps the conversion emptied, as Go's omitempty would not write them. */
function tidy(obj: Json): void {
  const metadata = objectAt(obj, 'metadata');
  dropEmpty(metadata, 'labels');
  dropEmpty(metadata, 'annotations');
  dropEmpty(obj, 'metadata');
  dropEmpty(obj, 'spec');
}

/** What a v1alpha1 spec.namespace means as a v1beta1 namespaceSelector. */
function namespaceSelectorFor(namespace: string): Json {
  return { matchLabels: { [NAMESPACE_NAME_LABEL]: namespace } };
}

/** `parent[key]`, made an empty object first if it is not one. */
function objectAt(parent: Json, key: string): Json {
  const value = parent[key];
  if (isPlainObject(value)) return value;
  const created: Json = {};
  parent[key] = created;
  return created;
}

/** Removes `parent[key]` when it is an empty object (as Go's omitempty writes a map). */
function dropEmpty(parent: Json, key: string): void {
  const value = parent[key];
  if (isPlainObject(value) && Object.keys(value).length === 0) delete parent[key];
}

/**
 * A v1beta1 SidecarSet without SIDECARSET_V1ALPHA1_NAMESPACE once its namespaceSelector is no
 * longer the one the namespace became (edited in v1beta1): the mutating webhook drops it, so that
 * a stored SidecarSet carries it only while it means something.
 */
export function dropStaleNamespaceAnnotation(ss: SidecarSet): SidecarSet {
  const annotations = ss.metadata.annotations;
  const namespace = annotations?.[SIDECARSET_V1ALPHA1_NAMESPACE];
  if (ss.apiVersion !== V1BETA1 || annotations === undefined || namespace === undefined) return ss;
  if (deepEqual(ss.spec.namespaceSelector, namespaceSelectorFor(namespace))) return ss;
  const rest = Object.fromEntries(
    Object.entries(annotations).filter(([key]) => key !== SIDECARSET_V1ALPHA1_NAMESPACE),
  );
  const metadata: SidecarSet['metadata'] = { ...ss.metadata, annotations: rest };
  if (Object.keys(rest).length === 0) delete metadata.annotations;
  return { ...ss, metadata };
}
