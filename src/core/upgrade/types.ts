/** The planner's result: what the controller patches this round, and why the rest waits. */
import type { PodRef } from '../api/pod-ref.js';
import type { ResourceChange } from '../api/pod-resize.js';
import type { RolloutHealth } from './rollout-health.js';

/** Why a pod waits; each reason's message is in plan.ts (docs/plan.md lists them). */
export type HoldReason =
  | 'Partition'
  | 'MaxUnavailable'
  | 'NotSelected'
  | 'Paused'
  | 'UnhealthyPods'
  | 'NotUpdate'
  | 'UpgradeInFlight'
  | 'HotUpgradeFlip'
  /** spec.patchPodMetadata cannot be applied to the pod (MergePatchJson on a non-JSON value). */
  | 'PatchPodMetadataError';

/** A pod the round leaves as it is, and why. */
export interface SkippedPod<Reason extends string> {
  pod: PodRef;
  reason: Reason;
  message: string;
}

export type ExcludeReason =
  | 'Inactive'
  /** With recreation on: on an older version and being deleted (evicted); it uses the budget. */
  | 'Recreating'
  | 'NotInjected'
  | 'MissingSidecar';

export interface ImageChange {
  container: string;
  from: string;
  to: string;
}

/** The exact in-place change for one pod. */
export interface PodUpgrade {
  pod: PodRef;
  images: ImageChange[];
  /** Written first, through pods/resize (core/api/pod-resize.ts); none for a flip. */
  resources: ResourceChange[];
  /** Every annotation whose value changes, with its complete new value. */
  annotations: Record<string, string>;
}

/** A pod whose sidecars cannot change in place, evicted to be recreated (core/upgrade/recreation.ts). */
export interface PodRecreate {
  pod: PodRef;
  /** Why not in place. */
  message: string;
  /** The pod's controller, kind/name. */
  controller: string;
  /** Why the API server refused the last eviction for this version, if it did (a PDB). */
  refused?: string;
}

export interface UpgradeStatus {
  matchedPods: number;
  updatedPods: number;
  readyPods: number;
  updatedReadyPods: number;
  observedGeneration?: number;
  latestRevision?: string;
  collisionCount?: number;
}

export interface BudgetSummary {
  /** Pods the partition keeps back (scaled). */
  partition: number;
  /** maxUnavailable, scaled against matched pods. */
  maxUnavailable: number;
  /** Unavailable because of the controller before this round (MatchedPod.takenDown; Recreating). */
  unavailable: number;
  /** The same after this round's upgrades start (not-ready pods taken add nothing). */
  unavailableAfter: number;
  /** Pods that could be upgraded in place (or recreated) now, before partition and budget. */
  candidates: number;
  /** Candidates left once the partition is applied. */
  eligible: number;
}

export interface UpgradePlan {
  sidecarSet: string;
  /** The SidecarSet's kruise.io/sidecarset-hash, the version pods are moved to. */
  hash: string;
  /** This round's pods, in upgrade order. */
  upgrade: PodUpgrade[];
  /** This round's pods to evict and recreate, in order (with recreation on). */
  recreate: PodRecreate[];
  /** Finished hot upgrades flipped this round, in namespace/name order; nothing else then. */
  flip: PodUpgrade[];
  /** A field changed that cannot change in place (the message says which). */
  notUpgradable: SkippedPod<'UpdateImmutableField'>[];
  held: SkippedPod<HoldReason>[];
  /** Pods given to the planner that are not the SidecarSet's matched pods. */
  excluded: SkippedPod<ExcludeReason>[];
  status: UpgradeStatus;
  budget: BudgetSummary;
  /** Why the planner did nothing at all (UpdateSidecarSet's steps 3, 4 and 6). */
  stopped?: 'NotUpdate' | 'Paused' | 'UnhealthyPods' | 'Complete';
  /**
   * The earliest time a ready pod now waiting out minReadySeconds (or its settling after a
   * restart) counts as available: nothing about the pods may change by then, so plan again then.
   */
  availableAt?: Date;
  /** The upgraded pods' health (absent for NotUpdate); when it says pause, nothing is upgraded. */
  health?: RolloutHealth;
}

export interface PlanOptions {
  now: Date;
  /** The API server has the pods/resize subresource (default true). */
  podResize?: boolean;
  /** resizableVersions (core/revisions/history.ts); without them, resources change by recreation. */
  versions?: ReadonlyMap<string, string>;
  /**
   * Evicted pods that are gone and not yet replaced (a StatefulSet recreates a pod only once the
   * old one is gone): they count against maxUnavailable (controller/recreation-expectations.ts).
   */
  awaitingReplacement?: number;
}
