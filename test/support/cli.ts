/** Runs the CLI in-process with in-memory streams. */
import { PassThrough, Readable } from 'node:stream';

import { main } from '../../src/cli/main.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCli(
  argv: string[],
  stdin = '',
  now = new Date('2026-07-02T10:00:00Z'),
): Promise<CliResult> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on('data', (c: Buffer) => out.push(c));
  stderr.on('data', (c: Buffer) => err.push(c));
  const code = await main(
    argv,
    { stdin: Readable.from([stdin]), stdout, stderr },
    { now: () => now },
  );
  return { code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
}

/** A cluster command (rollout, check-inject, plan NAME) against the cluster of this kubeconfig. */
export function runClusterCli(
  kubeconfig: string,
  argv: string[],
  now = new Date('2026-07-02T10:00:00Z'),
): Promise<CliResult> {
  return runCli([...argv, '--kubeconfig', kubeconfig], '', now);
}
