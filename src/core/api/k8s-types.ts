/**
 * Structural subsets of the Kubernetes core/v1 and meta/v1 types that this project reads or writes.
 * Fields the core never inspects are carried through untouched as JSON.
 */
import type { JsonObject } from '../encoding/json.js';

export type IntOrString = number | string;

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string | null;
  deletionTimestamp?: string | null;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: JsonObject[];
  [key: string]: unknown;
}

type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  key: string;
  operator: LabelSelectorOperator | (string & {});
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface ObjectFieldSelector {
  apiVersion?: string;
  fieldPath: string;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: JsonObject;
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  subPath?: string;
  subPathExpr?: string;
  mountPropagation?: string;
  recursiveReadOnly?: string;
}

export interface VolumeDevice {
  name: string;
  devicePath: string;
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  hostPort?: number;
  hostIP?: string;
  protocol?: string;
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  ports?: ContainerPort[];
  envFrom?: JsonObject[];
  env?: EnvVar[];
  resources?: JsonObject;
  resizePolicy?: JsonObject[];
  restartPolicy?: string;
  volumeMounts?: VolumeMount[];
  volumeDevices?: VolumeDevice[];
  livenessProbe?: JsonObject;
  readinessProbe?: JsonObject;
  startupProbe?: JsonObject;
  lifecycle?: JsonObject;
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
  imagePullPolicy?: string;
  securityContext?: JsonObject;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  [key: string]: unknown;
}

export interface Volume {
  name: string;
  [source: string]: unknown;
}

export interface LocalObjectReference {
  name?: string;
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  imagePullSecrets?: LocalObjectReference[];
  nodeName?: string;
  /** Always (the default), OnFailure or Never. */
  restartPolicy?: string;
  readinessGates?: JsonObject[];
  [key: string]: unknown;
}

export interface PodCondition {
  type: string;
  status: string;
  lastTransitionTime?: string | null;
  reason?: string;
  message?: string;
  [key: string]: unknown;
}

export interface ContainerStatus {
  name: string;
  image?: string;
  imageID?: string;
  ready?: boolean;
  restartCount?: number;
  started?: boolean;
  state?: JsonObject;
  [key: string]: unknown;
}

export interface PodStatus {
  phase?: string;
  conditions?: PodCondition[];
  containerStatuses?: ContainerStatus[];
  initContainerStatuses?: ContainerStatus[];
  [key: string]: unknown;
}

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: PodSpec;
  status?: PodStatus;
}
