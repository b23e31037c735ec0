/**
 * SidecarSet defaulting as OpenKruise's mutating webhook applies it (apis/apps/defaults/v1alpha1.go
 * SetDefaultsSidecarSet and pod.go SetDefaultPodVolumes, calling k8s pkg/apis/core/v1 defaults at
 * v1.32). OpenKruise apis/apps/defaults/v1alpha1.go (SetDefaultsSidecarSet); checked against the Go source:
 * - only liveness and readiness probes are defaulted; startupProbe is left as written (Kruise's
 *   SidecarSet path skips it, unlike its pod path), which changes the hash when one is set;
 * - grpc probes get no defaults (an unset `service` is serialised as null);
 * - an unparsable image (including "") gets IfNotPresent, since Kubernetes reads an empty tag;
 * - a null quantity in limits/requests becomes "0", as Go decodes it to a zero Quantity;
 * - the ImageVolume pull-policy default is behind an alpha feature gate that is off in 1.32, and
 *   the generated (+default) volume defaults (rbd pool, iscsi interface…) are not called by Kruise.
 * Volumes, updateStrategy and the rest do not enter the hash; containers do.
 */
import { defaultImagePullPolicy } from './image-ref.js';
import { isPlainObject } from '../encoding/json.js';
import { defaultQuantity } from '../encoding/quantity.js';
import type { SidecarContainer, SidecarSet, SidecarSetSpec } from './sidecarset-types.js';

/**
 * OpenKruise's CRD default (apis/apps/v1alpha1/sidecarset_types.go, +kubebuilder:default): the API
 * server writes it before any webhook sees the SidecarSet, so it is part of the hash.
 */
export const DEFAULT_TARGET_CONTAINERS_NAME_REGEX = '.*';

type Obj = Record<string, unknown>;

/** Go's zero value for a decoded scalar: absent, null, "" or 0. */
function isZero(value: unknown): boolean {
  return value === undefined || value === null || value === '' || value === 0;
}

function setIfZero(obj: Obj, key: string, value: unknown): void {
  if (isZero(obj[key])) obj[key] = value;
}

/** A pointer field: only nil (absent or null) takes the default. */
function setIfNil(obj: Obj, key: string, value: unknown): void {
  if (obj[key] === undefined || obj[key] === null) obj[key] = value;
}

/** The field as an object, if it is one (a nil pointer is skipped, like Go's `!= nil` checks). */
function child(obj: Obj, key: string): Obj | undefined {
  const value = obj[key];
  return isPlainObject(value) ? value : undefined;
}

/** A non-pointer struct field: null or absent decodes to the zero struct, so create it. */
function struct(obj: Obj, key: string): Obj {
  const existing = child(obj, key);
  if (existing !== undefined) return existing;
  const created: Obj = {};
  obj[key] = created;
  return created;
}

function eachObject(value: unknown, fn: (item: Obj) => void): void {
  if (!Array.isArray(value)) return;
  for (const item of value as unknown[]) if (isPlainObject(item)) fn(item);
}

function defaultFieldRef(holder: Obj | undefined): void {
  const fieldRef = holder === undefined ? undefined : child(holder, 'fieldRef');
  if (fieldRef !== undefined) setIfZero(fieldRef, 'apiVersion', 'v1');
}

function defaultHttpGet(handler: Obj | undefined): void {
  const httpGet = handler === undefined ? undefined : child(handler, 'httpGet');
  if (httpGet === undefined) return;
  setIfZero(httpGet, 'path', '/');
  setIfZero(httpGet, 'scheme', 'HTTP');
}

function defaultProbe(probe: Obj | undefined): void {
  if (probe === undefined) return;
  setIfZero(probe, 'timeoutSeconds', 1);
  setIfZero(probe, 'periodSeconds', 10);
  setIfZero(probe, 'successThreshold', 1);
  setIfZero(probe, 'failureThreshold', 3);
  defaultHttpGet(probe);
}

function defaultResourceList(resources: Obj | undefined, key: string): void {
  const list = resources === undefined ? undefined : child(resources, key);
  if (list === undefined) return;
  for (const [name, value] of Object.entries(list)) {
    if (value === null) list[name] = '0';
    else if (typeof value === 'string' || typeof value === 'number') {
      list[name] = defaultQuantity(value);
    }
  }
}

/** SetDefaults_Container plus the per-field defaults Kruise's setDefaultContainer calls. */
function defaultContainer(c: Obj): void {
  if (isZero(c['imagePullPolicy'])) {
    c['imagePullPolicy'] = defaultImagePullPolicy(typeof c['image'] === 'string' ? c['image'] : '');
  }
  setIfZero(c, 'terminationMessagePath', '/dev/termination-log');
  setIfZero(c, 'terminationMessagePolicy', 'File');
  eachObject(c['ports'], (port) => {
    setIfZero(port, 'protocol', 'TCP');
  });
  eachObject(c['transferEnv'], (t) => {
    defaultFieldRef(child(t, 'sourceContainerNameFrom'));
  });
  eachObject(c['env'], (e) => {
    defaultFieldRef(child(e, 'valueFrom'));
  });
  const resources = child(c, 'resources');
  defaultResourceList(resources, 'limits');
  defaultResourceList(resources, 'requests');
  defaultProbe(child(c, 'livenessProbe'));
  defaultProbe(child(c, 'readinessProbe'));
  const lifecycle = child(c, 'lifecycle');
  if (lifecycle !== undefined) {
    defaultHttpGet(child(lifecycle, 'postStart'));
    defaultHttpGet(child(lifecycle, 'preStop'));
  }
}

function defaultSidecarContainer(c: Obj, injectPolicy: string): void {
  setIfZero(c, 'podInjectPolicy', injectPolicy);
  setIfZero(struct(c, 'upgradeStrategy'), 'upgradeType', 'ColdUpgrade');
  setIfZero(struct(c, 'shareVolumePolicy'), 'type', 'disabled');
  const resourcesPolicy = child(c, 'resourcesPolicy');
  if (resourcesPolicy !== undefined) {
    // A CRD default: the API server sets it when the field is absent or null, not when it is "".
    setIfNil(resourcesPolicy, 'targetContainersNameRegex', DEFAULT_TARGET_CONTAINERS_NAME_REGEX);
  }
  defaultContainer(c);
}

function defaultContainers(list: SidecarContainer[] | undefined, injectPolicy: string): void {
  if (!Array.isArray(list)) return;
  list.forEach((c: unknown, i) => {
    // A null element decodes to a zero SidecarContainer, which Go then defaults.
    const container: unknown = c ?? {};
    if (!isPlainObject(container)) return;
    defaultSidecarContainer(container, injectPolicy);
    list[i] = container as SidecarContainer;
  });
}

/** Every VolumeSource member of k8s.io/api v0.32; a volume with none of them is an emptyDir. */
const VOLUME_SOURCES = [
  'hostPath',
  'emptyDir',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
] as const;

/** 0644, the default file mode of secret, configMap, downwardAPI and projected volumes. */
const DEFAULT_MODE = 420;
const TOKEN_EXPIRATION_SECONDS = 3600;

function defaultDownwardApiItems(downwardAPI: Obj): void {
  eachObject(downwardAPI['items'], defaultFieldRef);
}

function defaultVolume(v: Obj): void {
  if (VOLUME_SOURCES.every((k) => v[k] === undefined || v[k] === null)) v['emptyDir'] = {};
  const hostPath = child(v, 'hostPath');
  if (hostPath !== undefined) setIfNil(hostPath, 'type', '');
  for (const key of ['secret', 'configMap'] as const) {
    const source = child(v, key);
    if (source !== undefined) setIfNil(source, 'defaultMode', DEFAULT_MODE);
  }
  const downwardAPI = child(v, 'downwardAPI');
  if (downwardAPI !== undefined) {
    setIfNil(downwardAPI, 'defaultMode', DEFAULT_MODE);
    defaultDownwardApiItems(downwardAPI);
  }
  const projected = child(v, 'projected');
  if (projected === undefined) return;
  setIfNil(projected, 'defaultMode', DEFAULT_MODE);
  eachObject(projected['sources'], (source) => {
    const projectedDownwardAPI = child(source, 'downwardAPI');
    if (projectedDownwardAPI !== undefined) defaultDownwardApiItems(projectedDownwardAPI);
    const token = child(source, 'serviceAccountToken');
    if (token !== undefined) setIfNil(token, 'expirationSeconds', TOKEN_EXPIRATION_SECONDS);
  });
}

function defaultSpec(spec: SidecarSetSpec): void {
  const s = spec as Obj;
  const updateStrategy = struct(s, 'updateStrategy');
  setIfZero(updateStrategy, 'type', 'RollingUpdate');
  setIfNil(updateStrategy, 'maxUnavailable', 1);
  setIfNil(updateStrategy, 'partition', 0);
  defaultContainers(spec.initContainers, 'AfterAppContainer');
  defaultContainers(spec.containers, 'BeforeAppContainer');
  eachObject(spec.volumes, defaultVolume);
  setIfNil(s, 'revisionHistoryLimit', 10);
  eachObject(spec.patchPodMetadata, (patch) => {
    setIfZero(patch, 'patchPolicy', 'Retain');
  });
  const injection = child(s, 'injectionStrategy');
  const revision = injection === undefined ? undefined : child(injection, 'revision');
  if (revision !== undefined) setIfZero(revision, 'policy', 'Always');
}

/**
 * The SidecarSet with every default applied, as a new object; the input is not touched.
 * Idempotent: defaulting a defaulted SidecarSet changes nothing.
 */
export function defaultSidecarSet(ss: Readonly<SidecarSet>): SidecarSet {
  const out = structuredClone(ss) as SidecarSet;
  if (!isPlainObject(out.spec)) out.spec = {};
  defaultSpec(out.spec);
  return out;
}
