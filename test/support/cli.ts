/** Runs the CLI in-process with in-memory streams. */
import { execFile } from 'node:child_process';
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

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/**
 * The built CLI (bin/sidecarset.js) as a user runs it, with `home` as HOME and no SIDECARSET_*
 * or KUBECONFIG variable; killed after 20 s (then `signal` is SIGKILL).
 */
export function runAsUser(args: string[], home: string): Promise<ProcessResult> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !key.startsWith('SIDECARSET_') && key !== 'KUBECONFIG',
    ),
  );
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/sidecarset.js', ...args],
      {
        cwd: new URL('../../', import.meta.url).pathname,
        env: { ...env, HOME: home },
        timeout: 20_000,
        killSignal: 'SIGKILL',
      },
      (err, _stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
        resolve({ code, signal: err?.signal ?? null, stderr });
      },
    );
  });
}
