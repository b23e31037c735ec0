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
 * When the reader of our output goes away (`sidecarset plan -o json | head -1`), writing fails
 * with EPIPE. Like Unix tools, the command then ends quietly, with its own exit status (0 when it
 * did its work), instead of dying with a stack trace. Any other write error is still fatal.
 */
export function quietOnClosedPipe(stream: NodeJS.WritableStream): void {
  stream.on('error', (err: unknown) => {
    const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : '';
    if (code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED') return;
    throw err;
  });
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
