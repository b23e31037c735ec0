/** An in-process fake Kubernetes API server for tests; see README.md in this folder. */
export { startFakeApiServer } from './server.js';
export type { FakeApiServer, FakeApiServerOptions } from './server.js';
export { ObjectStore } from './store.js';
export type {
  ListOptions,
  ListResult,
  StoreEvent,
  StoreListener,
  StoreOptions,
  WriteOptions,
} from './store.js';
export { admissionReviewHook } from './admission.js';
export type { AdmissionAttributes, AdmissionHook } from './admission.js';
export { ApiControl } from './control.js';
export type { Fault, FaultRule, RequestInfo, RequestRecord, WatchInfo } from './control.js';
export { FakeKubelet, fakeImageId, IMAGE_FAILURES } from './kubelet.js';
export type { ImageFailure, KubeletOptions, Schedule } from './kubelet.js';
export {
  FAKE_HOST_IP,
  KUBELET_CONDITIONS,
  condition,
  containerStatus,
  desiredStatus,
  kubeTime,
  podIp,
  podKey,
  readinessGates,
  specContainers,
  usesImage,
} from './kubelet-status.js';
export type { DesiredStatus, SpecContainer, StatusContext } from './kubelet-status.js';
export {
  CONFIGMAPS,
  CONTROLLER_REVISIONS,
  DEFAULT_RESOURCES,
  EVENTS,
  EVENTS_V1,
  LEASES,
  NAMESPACES,
  PODDISRUPTIONBUDGETS,
  PODS,
  SIDECARSETS,
  apiVersionOf,
  defineResource,
} from './resources.js';
export type { ResourceDef, ResourceOptions } from './resources.js';
export { ApiError } from './errors.js';
export { PATCH_TYPES } from './types.js';
export type { KubeObject, ObjectMeta, PatchType, ResourceRef, WatchEventType } from './types.js';
export type { JsonObject, JsonValue } from './json.js';
export { waitForStore, waitUntil } from './wait.js';
export type { WaitOptions } from './wait.js';
