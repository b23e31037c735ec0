export interface Io {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export function main(_argv: string[], io: Io): Promise<number> {
  io.stdout.write('sidecarset\n');
  return Promise.resolve(0);
}
