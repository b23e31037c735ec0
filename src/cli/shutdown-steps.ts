/**
 * What `serve` started, stopped in reverse order at shutdown. Each step is named so that a step
 * that hangs is named in the log while it does, before close-with-grace gives up on the whole
 * shutdown (src/cli/io.ts, 25 s) and exits without saying which part was stuck.
 */
import type { Logger } from 'pino';

export interface ShutdownStep {
  /** What is stopped, for the log: "webhook server", "controller", … */
  what: string;
  stop: () => Promise<void>;
}

/** How long a step may take before the log says it is still under way. */
const SLOW_STEP_MS = 5_000;

/**
 * Runs every step, last added first, each after the previous one ended; a step that fails is
 * logged and the others still run. The list is emptied, so a second call stops nothing.
 */
export async function runShutdownSteps(
  steps: ShutdownStep[],
  logger: Logger,
  slowStepMs = SLOW_STEP_MS,
): Promise<void> {
  for (const { what, stop } of steps.splice(0).reverse()) {
    const slow = setTimeout(() => {
      logger.warn({ stopping: what, afterMs: slowStepMs }, 'still stopping');
    }, slowStepMs);
    slow.unref();
    try {
      await stop();
    } catch (err) {
      logger.error({ err, stopping: what }, 'error while stopping');
    } finally {
      clearTimeout(slow);
    }
  }
}
