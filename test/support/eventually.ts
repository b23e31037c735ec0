/** Polling for tests that watch a cluster from outside (the fake one or a real API server). */

/**
 * Resolves once `check` holds, trying every `everyMs`; fails after `timeoutMs` naming `what` (a
 * function is called then, so that it can describe the last state seen).
 */
export async function eventually(
  check: () => Promise<boolean> | boolean,
  what: string | (() => string),
  timeoutMs = 30_000,
  everyMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`,
      );
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
