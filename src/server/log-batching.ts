/**
 * The webhook logs a line per admission. Written one by one to the process's stdout, a pipe to
 * the container runtime, each line is a blocking write(2) that also wakes the reader: at the
 * default log level that was about a fifth of the webhook's CPU per admission on a realistic pod
 * (bench/admission.bench.ts, log level info against warn). Lines logged during one turn of the
 * event loop are therefore held back (Writable.cork) and go out together in one write at the end
 * of the turn. Nothing is lost or reordered; a process killed in between loses at most that
 * turn's lines.
 */
import { Writable } from 'node:stream';

/**
 * A function to call before writing a line to `stream` (the logger's destination). It corks
 * the stream for the rest of the turn (once per turn). A destination that is not a Node Writable
 * (pino's own SonicBoom, a transport) batches on its own or not at all: nothing is done then.
 */
export function writeLinesTogether(stream: NodeJS.WritableStream): () => void {
  if (!(stream instanceof Writable)) return () => undefined;
  let corked = false;
  const uncork = (): void => {
    corked = false;
    stream.uncork();
  };
  return () => {
    if (corked) return;
    corked = true;
    stream.cork();
    setImmediate(uncork);
  };
}
