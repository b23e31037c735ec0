/**
 * Event aggregation as client-go's event correlator does it (k8s.io/client-go/tools/record/events_cache.go):
 * a repeat of an event already sent about the same object, with the same type and reason, does
 * not create another Event object; the one sent is updated instead (count + 1, lastTimestamp, and,
 * unlike client-go, which keys on the message too until ten similar events, the latest message).
 * So a rollout creates one UpgradeStarted Event per SidecarSet, however many rounds it takes.
 *
 * This holds what was sent (an LRU of 4,096 entries, client-go's size) and runs the sends of one
 * key one after another; the requests themselves are the writer's (src/k8s/kube-writer.ts).
 */
import type { EventType, ObjectReference } from '../controller/ports.js';

/** The Event object that a key's repeats update. */
export interface SentEvent {
  namespace: string;
  name: string;
  count: number;
}

/** client-go's maxLruCacheEntries. */
const MAX_ENTRIES = 4096;

export function correlationKey(about: ObjectReference, type: EventType, reason: string): string {
  return JSON.stringify([
    about.kind,
    about.apiVersion,
    about.namespace ?? '',
    about.name,
    about.uid ?? '',
    type,
    reason,
  ]);
}

export class EventCorrelator {
  private readonly sent = new Map<string, SentEvent>();
  private readonly queues = new Map<string, Promise<void>>();
  private readonly maxEntries: number;

  constructor(maxEntries = MAX_ENTRIES) {
    this.maxEntries = maxEntries;
  }

  /** The Event last sent under this key (now the most recently used). */
  lookup(key: string): SentEvent | undefined {
    const entry = this.sent.get(key);
    if (entry === undefined) return undefined;
    this.sent.delete(key);
    this.sent.set(key, entry);
    return entry;
  }

  remember(key: string, entry: SentEvent): void {
    this.sent.delete(key);
    this.sent.set(key, entry);
    if (this.sent.size > this.maxEntries) {
      const oldest = this.sent.keys().next().value;
      if (oldest !== undefined) this.sent.delete(oldest);
    }
  }

  forget(key: string): void {
    this.sent.delete(key);
  }

  /** Runs `send` after every earlier send of the same key has settled. */
  async serialize(key: string, send: () => Promise<void>): Promise<void> {
    const before = this.queues.get(key) ?? Promise.resolve();
    const mine = before.then(send, send);
    const tail = mine.catch(() => undefined);
    this.queues.set(key, tail);
    try {
      await mine;
    } finally {
      if (this.queues.get(key) === tail) this.queues.delete(key);
    }
  }
}
