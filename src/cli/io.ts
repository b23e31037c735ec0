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
