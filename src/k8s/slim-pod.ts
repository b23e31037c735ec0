/**
 * The pod cache's transform: a pod reduced to what the SidecarSet matcher (src/core/matching/match.ts),
 * the upgrade planner (src/core/upgrade/) and the controller read, so that 10,000+ cached pods
 * fit in little memory (target: ≤ 2 KB each).
 *
 * Kept, and who reads it:
 * - metadata.name, namespace, uid: keys, podRef, the patch's uid test;
 * - metadata.resourceVersion, generation: the controller's expectations;
 * - metadata.creationTimestamp: candidate order; deletionTimestamp: isActivePod;
 * - metadata.labels: selectors, canary selector, priority, scatter;
 * - metadata.ownerReferences: only the controller's kind and name: recreation;
 * - metadata.annotations: only the SidecarSet bookkeeping keys (BOOKKEEPING_ANNOTATIONS) and the
 *   hot-upgrade slots' versions (the upgrade copies the old slot's version to the new one);
 * - spec.restartPolicy (Never, OnFailure): such pods are not recreated;
 * - spec.nodeName: candidate order; spec.containers[] and spec.initContainers[] (native
 *   sidecars): name, image, restartPolicy: sidecar presence, image changes, state consistency;
 *   resources (requests, limits) and resizePolicy: resizes and the pod's QoS class;
 *   spec.readinessGates[].conditionType: the controller's InPlaceUpdateReady gate;
 * - status.phase; status.conditions: Ready (type, status, lastTransitionTime: candidate order),
 *   ContainersReady (type, status), InPlaceUpdateReady (reason and message too: who closed the
 *   gate, core/upgrade/readiness-gate.ts), SidecarSetUpgradable (whole: the controller merges
 *   its entry into the message), PodResizePending (reason, message) and PodResizeInProgress: a
 *   resize the kubelet has not applied;
 * - status.containerStatuses[] and initContainerStatuses[]: name/image/imageID/ready/restartCount
 *   and resources: consistency, in-flight detection, order (restarts) and the in-place-update
 *   state record.
 *
 * Dropped, among the rest: every other annotation, other ownerReferences, managedFields, volumes, env,
 * probes, `started`, container state. The plan's choice of pods is the same on a
 * slim pod as on the full one, and so is each PodUpgrade unless the SidecarSet has
 * patchPodMetadata (it merges into annotations the slim pod does not keep): the controller then
 * re-reads the full pod and rebuilds the upgrade (buildPodUpgrade) before it writes; otherwise it
 * writes from the slim pod, guarded by its resourceVersion.
 *
 * Times: client-node's typed list API returns Date objects, watch events strings; both come out
 * as the API server's RFC 3339 seconds form ("2026-01-01T00:00:00Z").
 *
 * Size (test/k8s/slim-pod.test.ts, test/fixtures/realistic-pod.yaml, a heavy kubectl-style pod of
 * ~48 KB on the heap): slim, it takes ~3.2 KB when nothing is shared; in a cache, where strings
 * are pooled, ~1.2 KB a pod when pods share their times by twenty, ~2.2 KB when none do.
 */
import {
  SIDECARSET_HASH,
  SIDECARSET_HASH_WITHOUT_IMAGE,
  SIDECARSET_INJECTED_LIST,
  SIDECARSET_INPLACE_UPDATE_STATE,
  SIDECARSET_WORKING_HOTUPGRADE_CONTAINER,
  isSlotVersionAnnotation,
} from '../core/api/annotations.js';
import { UPGRADE_BASELINE } from '../core/pod-annotations/upgrade-baseline.js';
import { EVICTION_REFUSED, RESIZE_REFUSED } from '../core/pod-annotations/refusals.js';
import { RESIZE_IN_PROGRESS, RESIZE_PENDING } from '../core/api/pod-resize.js';
import { SIDECARSET_UPGRADABLE } from '../core/status/upgradable-condition.js';
import { READINESS_GATE } from '../core/upgrade/readiness-gate.js';
import type {
  Container,
  ContainerStatus,
  ObjectMeta,
  Pod,
  PodCondition,
  PodSpec,
  PodStatus,
} from '../core/api/k8s-types.js';

const BOOKKEEPING_ANNOTATIONS: readonly string[] = [
  SIDECARSET_HASH,
  SIDECARSET_HASH_WITHOUT_IMAGE,
  SIDECARSET_INJECTED_LIST,
  SIDECARSET_INPLACE_UPDATE_STATE,
  SIDECARSET_WORKING_HOTUPGRADE_CONTAINER,
  /** Ours: the pod before its upgrade, for the health gate (core/pod-annotations/upgrade-baseline.ts). */
  UPGRADE_BASELINE,
  /** Ours: a resize the API server refused (core/pod-annotations/refusals.ts). */
  RESIZE_REFUSED,
  /** Ours: the last eviction refused (core/pod-annotations/refusals.ts). */
  EVICTION_REFUSED,
];

/**
 * Pod conditions kept. Ready keeps its lastTransitionTime (the candidate order reads it);
 * SidecarSetUpgradable is kept whole: the controller rewrites it from the cached pod, merging its
 * own entry into the message the other SidecarSets wrote.
 */
const KEPT_CONDITIONS: readonly string[] = [
  'Ready',
  'ContainersReady',
  READINESS_GATE,
  SIDECARSET_UPGRADABLE,
  RESIZE_PENDING,
  RESIZE_IN_PROGRESS,
];

type Rec = Record<string, unknown>;

/**
 * Equal strings shared across cached pods: images, image IDs, node names, label and annotation
 * values and times repeat across a fleet, and every parsed pod brings its own copy. So do small
 * JSON values (a container's resources are the same in every replica): shared frozen, by their
 * JSON. Bounded: when it holds `limit` entries it starts over (values in use stay valid; only
 * sharing is lost).
 */
export class StringPool {
  private readonly strings = new Map<string, string>();
  private readonly values = new Map<string, unknown>();
  private readonly limit: number;

  constructor(limit = 65_536) {
    this.limit = limit;
  }

  intern(value: string): string {
    const known = this.strings.get(value);
    if (known !== undefined) return known;
    if (this.strings.size >= this.limit) this.strings.clear();
    this.strings.set(value, value);
    return value;
  }

  /** An equal value already pooled, or `value` itself, frozen. */
  share<T extends object>(value: T): T {
    const key = JSON.stringify(value);
    const known = this.values.get(key);
    if (known !== undefined) return known as T;
    if (this.values.size >= this.limit) this.values.clear();
    this.values.set(key, deepFreeze(value));
    return value;
  }

  size(): number {
    return this.strings.size;
  }
}

const SHARED_POOL = new StringPool();

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

function record(value: unknown): Rec | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Rec)
    : undefined;
}

function records(value: unknown): Rec[] {
  if (!Array.isArray(value)) return [];
  const out: Rec[] = [];
  for (const item of value as unknown[]) {
    const r = record(item);
    if (r !== undefined) out.push(r);
  }
  return out;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A string worth sharing between pods, from the pool. */
function shared(value: unknown, pool: StringPool): string | undefined {
  return typeof value === 'string' ? pool.intern(value) : undefined;
}

/** A metav1.Time as the API server writes it; Date objects (typed client) converted. */
function time(value: unknown, pool: StringPool): string | null | undefined {
  if (value === null) return null;
  if (value instanceof Date) {
    return Number.isNaN(value.getTime())
      ? undefined
      : pool.intern(value.toISOString().replace(/\.\d{3}Z$/, 'Z'));
  }
  return shared(value, pool);
}

function stringMap(
  value: unknown,
  pool: StringPool,
  keep?: (key: string) => boolean,
): Record<string, string> | undefined {
  const source = record(value);
  if (source === undefined) return undefined;
  const out: Record<string, string> = {};
  let any = false;
  for (const key of Object.keys(source)) {
    const v = source[key];
    if (typeof v === 'string' && (keep === undefined || keep(key))) {
      out[key] = pool.intern(v);
      any = true;
    }
  }
  return any || keep === undefined ? out : undefined;
}

function keptAnnotation(key: string): boolean {
  return BOOKKEEPING_ANNOTATIONS.includes(key) || isSlotVersionAnnotation(key);
}

function slimMetadata(raw: Rec | undefined, pool: StringPool): ObjectMeta {
  const m = raw ?? {};
  const meta: ObjectMeta = {};
  const name = str(m['name']);
  if (name !== undefined) meta.name = name;
  const namespace = shared(m['namespace'], pool);
  if (namespace !== undefined) meta.namespace = namespace;
  const uid = str(m['uid']);
  if (uid !== undefined) meta.uid = uid;
  const resourceVersion = str(m['resourceVersion']);
  if (resourceVersion !== undefined) meta.resourceVersion = resourceVersion;
  if (typeof m['generation'] === 'number') meta.generation = m['generation'];
  const created = time(m['creationTimestamp'], pool);
  if (created !== undefined) meta.creationTimestamp = created;
  const deleted = time(m['deletionTimestamp'], pool);
  if (deleted !== undefined) meta.deletionTimestamp = deleted;
  const labels = stringMap(m['labels'], pool);
  if (labels !== undefined) meta.labels = labels;
  const annotations = stringMap(m['annotations'], pool, keptAnnotation);
  if (annotations !== undefined) meta.annotations = annotations;
  const controller = records(m['ownerReferences']).find((o) => o['controller'] === true);
  if (controller !== undefined) meta.ownerReferences = [slimOwner(controller, pool)];
  return meta;
}

/** The controller reference: who recreates the pod (core/upgrade/recreation.ts). */
function slimOwner(o: Rec, pool: StringPool): NonNullable<ObjectMeta['ownerReferences']>[number] {
  return {
    kind: shared(o['kind'], pool) ?? '',
    name: shared(o['name'], pool) ?? '',
    controller: true,
  };
}

/** requests and limits (a resize compares them; QoS reads every container's). */
function slimResources(value: unknown, pool: StringPool): Container['resources'] {
  const r = record(value);
  if (r === undefined) return undefined;
  const out: NonNullable<Container['resources']> = {};
  for (const kind of ['requests', 'limits']) {
    const list = stringMap(r[kind], pool);
    if (list !== undefined && Object.keys(list).length > 0) out[kind] = list;
  }
  return pool.share(out);
}

function slimContainer(c: Rec, pool: StringPool): Container {
  const container: Container = { name: shared(c['name'], pool) ?? '' };
  const image = shared(c['image'], pool);
  if (image !== undefined) container.image = image;
  const restartPolicy = shared(c['restartPolicy'], pool);
  if (restartPolicy !== undefined) container.restartPolicy = restartPolicy;
  const resources = slimResources(c['resources'], pool);
  if (resources !== undefined) container.resources = resources;
  const resizePolicy = records(c['resizePolicy']).map((p) => stringMap(p, pool) ?? {});
  if (resizePolicy.length > 0) container.resizePolicy = pool.share(resizePolicy);
  return container;
}

function slimSpec(raw: Rec | undefined, pool: StringPool): PodSpec {
  const s = raw ?? {};
  const containers = records(s['containers']).map((c) => slimContainer(c, pool));
  const spec: PodSpec = { containers };
  const initContainers = records(s['initContainers']).map((c) => slimContainer(c, pool));
  if (initContainers.length > 0) spec.initContainers = initContainers;
  // Kept only where it is not the default: run-to-completion pods are never recreated.
  const restartPolicy = shared(s['restartPolicy'], pool);
  if (restartPolicy === 'Never' || restartPolicy === 'OnFailure')
    spec.restartPolicy = restartPolicy;
  const nodeName = shared(s['nodeName'], pool);
  if (nodeName !== undefined && nodeName !== '') spec.nodeName = nodeName;
  const gates = records(s['readinessGates']);
  if (gates.length > 0) {
    spec.readinessGates = gates.map((g) => ({
      conditionType: shared(g['conditionType'], pool) ?? '',
    }));
  }
  return spec;
}

function slimCondition(c: Rec, pool: StringPool): PodCondition | undefined {
  const type = str(c['type']);
  if (type === undefined || !KEPT_CONDITIONS.includes(type)) return undefined;
  const condition: PodCondition = {
    type: pool.intern(type),
    status: shared(c['status'], pool) ?? '',
  };
  if (type === 'Ready' || type === SIDECARSET_UPGRADABLE) {
    const since = time(c['lastTransitionTime'], pool);
    if (since !== undefined) condition.lastTransitionTime = since;
  }
  if (type === SIDECARSET_UPGRADABLE || type === RESIZE_PENDING || type === READINESS_GATE) {
    const reason = shared(c['reason'], pool);
    if (reason !== undefined) condition.reason = reason;
    const message = shared(c['message'], pool);
    if (message !== undefined) condition.message = message;
  }
  return condition;
}

function slimContainerStatus(s: Rec, pool: StringPool): ContainerStatus {
  const status: ContainerStatus = { name: shared(s['name'], pool) ?? '' };
  const image = shared(s['image'], pool);
  if (image !== undefined) status.image = image;
  const imageID = shared(s['imageID'], pool);
  if (imageID !== undefined) status.imageID = imageID;
  if (typeof s['ready'] === 'boolean') status.ready = s['ready'];
  if (typeof s['restartCount'] === 'number') status.restartCount = s['restartCount'];
  const resources = slimResources(s['resources'], pool);
  if (resources !== undefined) status['resources'] = resources;
  return status;
}

function slimStatus(raw: Rec, pool: StringPool): PodStatus {
  const status: PodStatus = {};
  const phase = shared(raw['phase'], pool);
  if (phase !== undefined) status.phase = phase;
  if (Array.isArray(raw['conditions'])) {
    status.conditions = records(raw['conditions'])
      .map((c) => slimCondition(c, pool))
      .filter((c) => c !== undefined);
  }
  for (const list of ['containerStatuses', 'initContainerStatuses'] as const) {
    if (Array.isArray(raw[list])) {
      status[list] = records(raw[list]).map((c) => slimContainerStatus(c, pool));
    }
  }
  return status;
}

/**
 * The pod reduced to the fields listed above; accepts plain JSON and client-node's V1Pod. Strings
 * that repeat across pods come from `pool` (a module-wide one by default); name, uid and
 * resourceVersion, unique to each pod, are not pooled.
 */
export function slimPod(raw: unknown, pool: StringPool = SHARED_POOL): Pod {
  const pod = record(raw) ?? {};
  const slim: Pod = {
    metadata: slimMetadata(record(pod['metadata']), pool),
    spec: slimSpec(record(pod['spec']), pool),
  };
  const status = record(pod['status']);
  if (status !== undefined) slim.status = slimStatus(status, pool);
  return slim;
}

/**
 * The bytes `obj` would take on V8's 64-bit heap (Node's default build, no pointer compression) if
 * nothing in it were shared with other objects: strings 16 + one byte a character (two when any
 * character is beyond Latin-1), rounded to 8; objects 24 + 8 a property, plus a 16-byte property
 * array past 4 properties; arrays 32 + 16 + 8 an element; non-integer numbers 16. Property names
 * count nothing (V8 interns them). A model, not a measurement: test/k8s/slim-pod.test.ts checks it
 * against the measured heap. Pooled strings (StringPool) are shared in a real cache, so a fleet of
 * cached pods takes less than the sum of their estimates.
 */
export function approximateBytes(value: unknown): number {
  if (typeof value === 'string') {
    return roundUp(16 + value.length * (isLatin1(value) ? 1 : 2));
  }
  if (typeof value === 'number')
    return Number.isInteger(value) && Math.abs(value) < 2 ** 31 ? 0 : 16;
  if (value instanceof Date) return 32;
  if (Array.isArray(value)) {
    let bytes = 32 + 16 + 8 * value.length;
    for (const item of value as unknown[]) bytes += approximateBytes(item);
    return bytes;
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.values(value);
    let bytes = 24 + 8 * entries.length + (entries.length > 4 ? 16 : 0);
    for (const item of entries) bytes += approximateBytes(item);
    return bytes;
  }
  return 0;
}

function isLatin1(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0xff) return false;
  return true;
}

function roundUp(bytes: number): number {
  return Math.ceil(bytes / 8) * 8;
}
