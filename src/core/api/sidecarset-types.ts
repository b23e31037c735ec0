/**
 * The SidecarSet API, field for field: apps.kruise.io/v1alpha1 (OpenKruise
 * apis/apps/v1alpha1/sidecarset_types.go) and apps.kruise.io/v1beta1
 * (apis/apps/v1beta1/sidecarset_types.go). One type holds both versions: they differ only in
 * spec.namespace (v1alpha1) and spec.customVersion (v1beta1), so the core reads either
 * (docs/adr/0015-sidecarset-v1beta1.md); src/core/conversion converts between them.
 */
import type { JsonObject } from '../encoding/json.js';
import type {
  Container,
  IntOrString,
  LabelSelector,
  LocalObjectReference,
  ObjectFieldSelector,
  ObjectMeta,
  Volume,
} from './k8s-types.js';

export const SIDECARSET_GROUP = 'apps.kruise.io';
export const V1ALPHA1 = 'apps.kruise.io/v1alpha1';
/** The stored version, and the one a new manifest should use (as in OpenKruise since v1.9). */
export const V1BETA1 = 'apps.kruise.io/v1beta1';
export const SIDECARSET_API_VERSIONS = [V1BETA1, V1ALPHA1] as const;
export type SidecarSetApiVersion = (typeof SIDECARSET_API_VERSIONS)[number];

export function isSidecarSetApiVersion(value: unknown): value is SidecarSetApiVersion {
  return (SIDECARSET_API_VERSIONS as readonly unknown[]).includes(value);
}

export const POD_INJECT_POLICIES = ['BeforeAppContainer', 'AfterAppContainer'] as const;
type PodInjectPolicy = (typeof POD_INJECT_POLICIES)[number];

export const SHARE_VOLUME_POLICIES = ['enabled', 'disabled'] as const;
type ShareVolumePolicyType = (typeof SHARE_VOLUME_POLICIES)[number];

type SidecarContainerUpgradeType = 'ColdUpgrade' | 'HotUpgrade';

type SidecarSetUpdateStrategyType = 'RollingUpdate' | 'NotUpdate';

export const PATCH_POLICIES = ['Retain', 'Overwrite', 'MergePatchJson'] as const;
type SidecarSetPatchPolicyType = (typeof PATCH_POLICIES)[number];

type SidecarSetInjectRevisionPolicy = 'Always' | 'Partial';

export interface TransferEnvVar {
  sourceContainerName?: string;
  sourceContainerNameFrom?: { fieldRef?: ObjectFieldSelector };
  envName?: string;
  envNames?: string[];
}

interface SidecarContainerUpgradeStrategy {
  upgradeType?: SidecarContainerUpgradeType | (string & {});
  hotUpgradeEmptyImage?: string;
}

interface ShareVolumePolicy {
  type?: ShareVolumePolicyType | (string & {});
}

interface ResourceExpr {
  cpu?: string;
  memory?: string;
}

export interface ResourcesPolicy {
  targetContainersMode?: 'sum' | 'max' | (string & {});
  targetContainersNameRegex?: string;
  resourcesExpr?: { limits?: ResourceExpr; requests?: ResourceExpr };
}

/** A core/v1 Container plus the SidecarSet-only fields. */
export interface SidecarContainer extends Container {
  podInjectPolicy?: PodInjectPolicy | (string & {});
  upgradeStrategy?: SidecarContainerUpgradeStrategy;
  shareVolumePolicy?: ShareVolumePolicy;
  shareVolumeDevicePolicy?: ShareVolumePolicy;
  transferEnv?: TransferEnvVar[];
  resourcesPolicy?: ResourcesPolicy;
}

interface UpdatePriorityOrderTerm {
  orderedKey: string;
}

interface UpdatePriorityWeightTerm {
  weight: number;
  matchSelector: LabelSelector;
}

export interface UpdatePriorityStrategy {
  orderPriority?: UpdatePriorityOrderTerm[];
  weightPriority?: UpdatePriorityWeightTerm[];
}

export interface UpdateScatterTerm {
  key: string;
  /**
   * A missing value or "*" spreads over every value of the key (our extension;
   * docs/adr/0003-stable-upgrade-order.md).
   */
  value?: string;
}

export interface SidecarSetUpdateStrategy {
  type?: SidecarSetUpdateStrategyType | (string & {});
  paused?: boolean;
  selector?: LabelSelector;
  partition?: IntOrString;
  maxUnavailable?: IntOrString;
  /** Ours: seconds a pod must be Ready to count as available (core/upgrade/availability.ts). */
  minReadySeconds?: number;
  priorityStrategy?: UpdatePriorityStrategy;
  scatterStrategy?: UpdateScatterTerm[];
}

interface SidecarSetInjectRevision {
  customVersion?: string;
  revisionName?: string;
  policy?: SidecarSetInjectRevisionPolicy | (string & {});
}

interface SidecarSetInjectionStrategy {
  paused?: boolean;
  revision?: SidecarSetInjectRevision;
}

export interface SidecarSetPatchPodMetadata {
  annotations?: Record<string, string>;
  patchPolicy?: SidecarSetPatchPolicyType | (string & {});
}

export interface SidecarSetSpec {
  selector?: LabelSelector;
  /** v1alpha1 only. */
  namespace?: string;
  namespaceSelector?: LabelSelector;
  initContainers?: SidecarContainer[];
  containers?: SidecarContainer[];
  volumes?: Volume[];
  updateStrategy?: SidecarSetUpdateStrategy;
  injectionStrategy?: SidecarSetInjectionStrategy;
  imagePullSecrets?: LocalObjectReference[];
  revisionHistoryLimit?: number;
  patchPodMetadata?: SidecarSetPatchPodMetadata[];
  /** v1beta1 only: what v1alpha1 keeps in the label apps.kruise.io/sidecarset-custom-version. */
  customVersion?: string;
}

export interface SidecarSetStatus {
  observedGeneration?: number;
  matchedPods?: number;
  updatedPods?: number;
  readyPods?: number;
  updatedReadyPods?: number;
  latestRevision?: string;
  collisionCount?: number;
  /** Ours (not OpenKruise's): RolloutPaused (src/core/status/rollout-paused-condition.ts). */
  conditions?: SidecarSetCondition[];
  /** Ours: pods matched since the SidecarSet exists but created without it (src/core/matching/missed-pods.ts). */
  missedPods?: number;
}

/** Ours: the SidecarSet condition set while a rollout is paused (src/core/status/rollout-paused-condition.ts). */
export const ROLLOUT_PAUSED = 'RolloutPaused';

/** Why the condition says what it says. */
export const ROLLOUT_PAUSED_REASONS = {
  /** True: failed upgraded pods reached the threshold; the controller stopped upgrading. */
  unhealthy: 'UnhealthyPods',
  /** True: spec.updateStrategy.paused (a user's pause). */
  user: 'Paused',
  /** False: it was paused and is not any more. */
  resumed: 'Resumed',
} as const;

/** A status condition, as metav1.Condition. */
export interface SidecarSetCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

export interface SidecarSet {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: SidecarSetSpec;
  status?: SidecarSetStatus;
}

/** A historical version of a SidecarSet (what OpenKruise keeps in a ControllerRevision). */
export interface SidecarSetRevision {
  name: string;
  sidecarSetName: string;
  customVersion?: string;
  /** Creation order; a higher number is newer. */
  revision: number;
  annotations?: Record<string, string>;
  spec: Pick<
    SidecarSetSpec,
    'containers' | 'initContainers' | 'volumes' | 'imagePullSecrets' | 'patchPodMetadata'
  >;
  extra?: JsonObject;
}
