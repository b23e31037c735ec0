/**
 * Keeps the pod webhook's scope in step with the SidecarSets while this replica leads
 * (docs/adr/0012-scoped-pod-webhook.md): a write shortly after each SidecarSet change (changes in
 * one burst are one write), and one every `resyncMs` to repair a configuration re-applied or
 * edited by hand. Disabled, it removes a scope an earlier run left, so that turning scoping off
 * never leaves a stale, narrower scope behind.
 */
import type { Logger } from 'pino';

import { webhookScopes } from '../core/scope/cel.js';
import type { WebhookScope } from '../core/scope/webhook-scope.js';
import type { SidecarSet } from '../core/api/sidecarset-types.js';
import type { ScopeWriter } from '../k8s/webhook-scope-writer.js';

export interface ScopeKeeperOptions {
  writer: ScopeWriter;
  sidecarSets: () => readonly SidecarSet[];
  enabled: boolean;
  logger: Logger;
  /** Wait after a change before writing, so that a burst is one write; default 100 ms. */
  debounceMs?: number;
  /** Default 60 s. */
  resyncMs?: number;
  /** Told the precision written (undefined: no scope). */
  onWritten?: (scope: WebhookScope | undefined) => void;
}

export interface ScopeKeeper {
  /** Starts writing; stops when `signal` aborts (leadership lost). */
  lead(signal: AbortSignal): void;
  /** A SidecarSet changed. */
  changed(): void;
}

export function createScopeKeeper(options: ScopeKeeperOptions): ScopeKeeper {
  const debounceMs = options.debounceMs ?? 100;
  const resyncMs = options.resyncMs ?? 60_000;
  let leading: AbortSignal | undefined;
  let timer: NodeJS.Timeout | undefined;
  /** `dirty`: a change not yet written; one made during a write is written right after it. */
  const state = { running: false, dirty: false };

  function schedule(delayMs: number): void {
    if (leading === undefined || leading.aborted) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      state.dirty = false;
      void sync();
    }, delayMs);
    timer.unref();
  }

  async function sync(): Promise<void> {
    const leadership = leading;
    // A function, so that TypeScript does not narrow the flag across the await.
    const ended = (): boolean => leadership?.aborted !== false;
    if (leadership === undefined || ended()) return;
    state.running = true;
    let delay = resyncMs;
    try {
      const levels = options.enabled ? webhookScopes(options.sidecarSets()) : undefined;
      // Aborted with leadership: a replica that no longer leads must not overwrite the new
      // leader's scope with one computed from its own view.
      const written = await options.writer.write(levels, leadership);
      options.onWritten?.(written);
    } catch (err) {
      if (!ended()) {
        options.logger.error({ err }, 'cannot write the pod webhook scope; retrying');
      }
      delay = Math.min(resyncMs, 5000);
    } finally {
      state.running = false;
    }
    schedule(state.dirty ? debounceMs : delay);
  }

  function changed(delayMs: number): void {
    state.dirty = true;
    if (!state.running) schedule(delayMs);
  }

  return {
    lead(signal) {
      leading = signal;
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
      });
      changed(0);
    },
    changed() {
      changed(debounceMs);
    },
  };
}
