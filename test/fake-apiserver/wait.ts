export interface WaitOptions {
  readonly timeoutMs?: number;
  /** Names what is awaited in the timeout error. */
  readonly what?: string;
}

/**
 * Resolves with the first non-undefined result of `check`, evaluated now and after each wake-up
 * that `subscribe` delivers; rejects after the timeout. No polling, no fixed sleeps.
 */
export function waitUntil<T>(
  subscribe: (wake: () => void) => () => void,
  check: () => T | undefined,
  options: WaitOptions = {},
): Promise<T> {
  const first = check();
  if (first !== undefined) return Promise.resolve(first);
  const timeoutMs = options.timeoutMs ?? 5000;
  return new Promise<T>((resolve, reject) => {
    const finish = (settle: () => void): void => {
      clearTimeout(timer);
      unsubscribe();
      settle();
    };
    const timer = setTimeout(() => {
      finish(() => {
        reject(
          new Error(`timed out after ${timeoutMs} ms waiting for ${options.what ?? 'a condition'}`),
        );
      });
    }, timeoutMs);
    const unsubscribe = subscribe(() => {
      let result: T | undefined;
      try {
        result = check();
      } catch (err: unknown) {
        finish(() => {
          reject(err instanceof Error ? err : new Error(String(err)));
        });
        return;
      }
      if (result !== undefined) {
        const value = result;
        finish(() => {
          resolve(value);
        });
      }
    });
  });
}

/** A minimal listener set, for the wake-ups waitUntil needs. */
export class Signal<T> {
  private readonly listeners = new Set<(value: T) => void>();

  subscribe(listener: (value: T) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(value: T): void {
    for (const listener of [...this.listeners]) listener(value);
  }
}

/** The subset of ObjectStore that waitForStore needs (kept structural to avoid an import cycle). */
interface Subscribable {
  subscribe(listener: () => void): () => void;
}

/** waitUntil, re-checked after every change committed to the store. */
export function waitForStore<T>(
  store: Subscribable,
  check: () => T | undefined,
  options: WaitOptions = {},
): Promise<T> {
  return waitUntil((wake) => store.subscribe(wake), check, options);
}
