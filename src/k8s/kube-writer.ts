/** The controller's writes through @kubernetes/client-node (the ClusterWriter of src/controller). */
import { hostname } from 'node:os';

import type { KubeConfig } from '@kubernetes/client-node';
import { hasPodResize } from './pod-resize-discovery.js';
import type { CoreV1Event } from '@kubernetes/client-node';
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';

import type { Pod, PodCondition } from '../core/api/k8s-types.js';
import type { SidecarSetStatus } from '../core/api/sidecarset-types.js';
import type { ClusterWriter, EventType, ObjectReference } from '../controller/ports.js';
import {
  ConflictError,
  EvictionRefusedError,
  ResizeRefusedError,
  UpdateRefusedError,
} from '../controller/ports.js';
import { isPlainObject } from '../core/encoding/json.js';
import { statusMessage, statusOf } from './api-error.js';
import { EventCorrelator, correlationKey } from './event-correlator.js';

const strategicMerge = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** Events about cluster-scoped objects go to `default`, as client-go's recorder does. */
const CLUSTER_EVENT_NAMESPACE = 'default';
const CONTROLLER_COMPONENT = 'sidecarset-controller';

interface EventToSend {
  about: ObjectReference;
  type: EventType;
  reason: string;
  message: string;
}

export function createKubeWriter(kubeConfig: KubeConfig): ClusterWriter {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const host = hostname();
  const correlator = new EventCorrelator();
  /** Updates the Event sent before under `key`; false when it is gone (expired: create anew). */
  const repeat = async (key: string, message: string, now: Date): Promise<boolean> => {
    const sent = correlator.lookup(key);
    if (sent === undefined) return false;
    const count = sent.count + 1;
    const body = { count, message, lastTimestamp: now.toISOString() };
    try {
      await core.patchNamespacedEvent(
        { name: sent.name, namespace: sent.namespace, body },
        mergePatch,
      );
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) {
        correlator.forget(key);
        return false;
      }
      throw err;
    }
    correlator.remember(key, { ...sent, count });
    return true;
  };
  /** Discovered once; a failed discovery is tried again. */
  let resizeDiscovery: Promise<boolean> | undefined;
  return {
    async getPod(namespace, name) {
      try {
        return (await core.readNamespacedPod({ name, namespace })) as unknown as Pod;
      } catch (err) {
        if (err instanceof ApiException && err.code === 404) return undefined;
        throw err;
      }
    },
    async patchPod(namespace, name, body) {
      try {
        await conflictAware(() =>
          core.patchNamespacedPod({ name, namespace, body }, strategicMerge),
        );
      } catch (err) {
        if (!(err instanceof ApiException)) throw err;
        throw new UpdateRefusedError(`${statusMessage(err)} (HTTP ${err.code})`);
      }
    },
    canResizePods() {
      resizeDiscovery ??= hasPodResize(core).catch((err: unknown) => {
        resizeDiscovery = undefined;
        throw err;
      });
      return resizeDiscovery;
    },
    async resizePod(namespace, name, body) {
      try {
        await core.patchNamespacedPodResize({ name, namespace, body }, strategicMerge);
      } catch (err) {
        if (err instanceof ApiException && (err.code === 403 || err.code === 422)) {
          throw new ResizeRefusedError(statusMessage(err));
        }
        throw err;
      }
    },
    async evictPod(namespace, name, uid) {
      const body = {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name, namespace },
        ...(uid === undefined ? {} : { deleteOptions: { preconditions: { uid } } }),
      };
      try {
        await core.createNamespacedPodEviction({ name, namespace, body });
        return true;
      } catch (err) {
        if (!(err instanceof ApiException)) throw err;
        // Gone, or another pod under the name (the uid precondition failed): nothing to evict.
        if (err.code === 404 || err.code === 409) return false;
        if (err.code === 429) throw new EvictionRefusedError(evictionRefusal(err));
        throw err;
      }
    },
    async setPodConditions(namespace, name, conditions: PodCondition[]) {
      const body = { status: { conditions } };
      await core.patchNamespacedPodStatus({ name, namespace, body }, strategicMerge);
    },
    async writeSidecarSetStatus(name, status: SidecarSetStatus, resourceVersion?: string) {
      // A merge patch's resourceVersion is a precondition (409 when it no longer matches).
      const body =
        resourceVersion === undefined ? { status } : { metadata: { resourceVersion }, status };
      await conflictAware(() =>
        custom.patchClusterCustomObjectStatus(
          { group: 'apps.kruise.io', version: 'v1beta1', plural: 'sidecarsets', name, body },
          mergePatch,
        ),
      );
    },
    async event(about: ObjectReference, type: EventType, reason: string, message: string) {
      const key = correlationKey(about, type, reason);
      await correlator.serialize(key, async () => {
        const now = new Date();
        if (await repeat(key, message, now)) return;
        const namespace = about.namespace ?? CLUSTER_EVENT_NAMESPACE;
        const created = await createEvent(namespace, { about, type, reason, message }, now);
        correlator.remember(key, { namespace, name: created.metadata.name ?? '', count: 1 });
      });
    },
  };

  function createEvent(
    namespace: string,
    { about, type, reason, message }: EventToSend,
    now: Date,
  ): Promise<CoreV1Event> {
    const body = {
      metadata: { generateName: `${about.name}.`, namespace },
      involvedObject: { ...about },
      reason,
      message,
      type,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: CONTROLLER_COMPONENT, host },
      reportingComponent: CONTROLLER_COMPONENT,
      reportingInstance: host,
    };
    return core.createNamespacedEvent({ namespace, body });
  }
}

async function conflictAware(write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (err) {
    if (err instanceof ApiException && err.code === 409) throw new ConflictError(err.message);
    throw err;
  }
}

/**
 * A refused eviction's message with the Status causes after it, which name the budget and its
 * numbers (kubernetes pkg/registry/core/pod/storage/eviction.go): "Cannot evict pod as it would
 * violate the pod's disruption budget. (The disruption budget web needs 3 healthy pods and has 3
 * currently)".
 */
function evictionRefusal(err: ApiException<unknown>): string {
  const details = statusOf(err)?.['details'];
  const list = isPlainObject(details) ? details['causes'] : undefined;
  const causes = (Array.isArray(list) ? list : []).flatMap((c: unknown) =>
    isPlainObject(c) && typeof c['message'] === 'string' ? [c['message']] : [],
  );
  const message = statusMessage(err);
  return causes.length === 0 ? message : `${message} (${causes.join('; ')})`;
}
