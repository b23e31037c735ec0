import closeWithGrace from 'close-with-grace';

/** The streams a CLI command reads and writes; passed in so that tests run commands in-process. */
export interface Io {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** A problem with the command line itself: exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * On SIGTERM/SIGINT (or a fatal error), says why on stderr, runs `close` and exits; a second
 * signal, or `close` taking longer than 25 s, exits at once (close-with-grace).
 */
export function closeOnSignal(io: Io, what: string, close: () => Promise<void>): void {
  closeWithGrace({ delay: 25_000 }, async ({ signal, err }) => {
    if (err !== undefined)
      io.stderr.write(`fatal: ${err instanceof Error ? err.message : String(err)}\n`);
    else io.stderr.write(`${signal ?? 'exit'}: ${what}\n`);
    await close();
  });
}
